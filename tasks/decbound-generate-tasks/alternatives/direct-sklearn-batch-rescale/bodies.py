# Alternative 'direct-sklearn-batch-rescale' for decbound-generate-tasks: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: data_utils.py::generate_tasks
    # Draw the raw (unscaled) points of every task straight from scikit-learn, each
    # generator call with its own random_state = seed + i (the global numpy RNG is untouched).
    raw_X = []
    raw_y = []
    for offset in range(num_tasks):
        task_seed = seed + offset
        if data_type == "linear":
            X, y = make_classification(
                n_samples=num_samples_per_task,
                n_features=num_dimensions,
                n_informative=num_dimensions,
                n_redundant=0,
                n_clusters_per_class=1,
                flip_y=0,
                shuffle=True,
                random_state=task_seed,
                n_classes=2,
                class_sep=class_sep,
            )
        elif data_type == "circle":
            X, y = make_circles(
                n_samples=num_samples_per_task, shuffle=True, noise=0.05, random_state=task_seed, factor=factor
            )
        elif data_type == "moon":
            X, y = make_moons(n_samples=num_samples_per_task, shuffle=True, noise=0.05, random_state=task_seed)
        else:
            raise ValueError(f"Unknown data_type: {data_type!r} (expected 'linear', 'circle' or 'moon')")
        raw_X.append(np.asarray(X, dtype=np.float64))
        raw_y.append(np.asarray(y, dtype=np.float64))

    X_data = np.array(raw_X, dtype=np.float64).reshape(num_tasks, num_samples_per_task, num_dimensions)
    Y_data = np.array(raw_y, dtype=np.float64).reshape(num_tasks, num_samples_per_task)

    # Rescale every feature of every task to span [0, 100], all tasks at once
    # (min / max over the samples axis of each task separately).
    if num_tasks > 0:
        X_min = X_data.min(axis=1, keepdims=True)
        X_max = X_data.max(axis=1, keepdims=True)
        X_data = 100 * (X_data - X_min) / (X_max - X_min)

    return X_data, Y_data
