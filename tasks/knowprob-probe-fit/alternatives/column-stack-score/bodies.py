# Alternative 'column-stack-score'. Vectorised per module: each module column is stacked into a 4-D block and the blocks are joined along the layer axis; probe scored with the estimator's own score().
# perform_classification_by_relation_group is out of scope per the instruction and keeps its stub.

# lmr-body: src/classification/data.py::combine_selected_modules_activations
    module_order = (("mhsa", include_mhsa), ("mlp", include_mlps), ("mlp-l1", include_mlps_l1))
    chosen = [name for name, flag in module_order if flag]

    if len(dataset) == 0:
        return np.array([])

    def stack_module(column_name):
        # (rows, layers, 1, width): every cell's position entry stacked in row order
        return np.stack([np.asarray(cell[position]) for cell in dataset[column_name].to_numpy()], axis=0)

    module_blocks = [stack_module(name) for name in chosen]
    return np.concatenate(module_blocks, axis=1) if len(module_blocks) > 1 else module_blocks[0]
# lmr-body: src/classification/data.py::get_features_and_targets_for_dataset
    features = combine_selected_modules_activations(
        dataset, vertical, position, include_mhsa, include_mlps, include_mlps_l1
    )
    sources = dataset["knowledge_source"].to_numpy()
    targets = np.fromiter((label_encoder[source] for source in sources), dtype=np.int64, count=len(sources))
    return features, targets
# lmr-body: src/classification/classifier.py::_fit_regression
    import numpy as np

    n_test = test_activations.shape[0]
    if n_test == 0:
        record = dict.fromkeys(["layer", "relation_group_id", "success_rate", "nb_test_examples", "nb_train_examples"])
        record["relation_group_id"] = relation_group_id
        return record

    n_train = train_activations.shape[0]
    x_train = np.take(train_activations, layer, axis=1)[:, 0, :]
    x_test = np.take(test_activations, layer, axis=1)[:, 0, :]

    classifier = LogisticRegression(max_iter=10000).fit(x_train, np.asarray(train_targets))
    accuracy = classifier.score(x_test, np.asarray(test_targets))

    return {
        "layer": layer,
        "relation_group_id": relation_group_id,
        "success_rate": float(accuracy),
        "nb_test_examples": int(n_test),
        "nb_train_examples": int(n_train),
    }
