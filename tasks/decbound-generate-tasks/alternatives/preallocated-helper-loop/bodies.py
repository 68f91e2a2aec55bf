# Alternative 'preallocated-helper-loop' for decbound-generate-tasks: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: data_utils.py::generate_tasks
    num_tasks = int(num_tasks)
    num_samples_per_task = int(num_samples_per_task)
    num_dimensions = int(num_dimensions)

    X_data = np.zeros((num_tasks, num_samples_per_task, num_dimensions), dtype=np.float64)
    Y_data = np.zeros((num_tasks, num_samples_per_task), dtype=np.float64)

    for task_idx in range(num_tasks):
        # Each task has its own scikit-learn generator seeded with seed + task_idx;
        # numpy's global random state is neither read nor advanced.
        X, y = generate_x_y(
            num_samples=num_samples_per_task,
            num_dimensions=num_dimensions,
            seed=seed + task_idx,
            data_type=data_type,
            factor=factor,
            class_sep=class_sep,
        )
        X_data[task_idx] = X
        Y_data[task_idx] = y

    print(f"Generated {num_tasks} {data_type} tasks with {num_samples_per_task} samples each.")
    return X_data, Y_data
