# Alternative 'row-loop-accuracy'. Explicit per-row loop building each row's (layers, 1, width) block and concatenating modules; probe scored with predict + accuracy_score.
# perform_classification_by_relation_group is out of scope per the instruction and keeps its stub.

# lmr-body: src/classification/data.py::combine_selected_modules_activations
    # modules in the order their layers are laid out along the layer axis
    selected_columns = []
    if include_mhsa:
        selected_columns.append("mhsa")
    if include_mlps:
        selected_columns.append("mlp")
    if include_mlps_l1:
        selected_columns.append("mlp-l1")

    rows_features = []
    for row_position in range(dataset.shape[0]):
        per_module_blocks = []
        for column in selected_columns:
            cell = dataset[column].iloc[row_position]
            # one entry per layer, each entry a one-element list holding the vector
            per_module_blocks.append(np.array(cell[position]))
        if len(per_module_blocks) == 1:
            row_block = per_module_blocks[0]
        else:
            row_block = np.concatenate(per_module_blocks, axis=0)
        rows_features.append(row_block)

    return np.array(rows_features)
# lmr-body: src/classification/data.py::get_features_and_targets_for_dataset
    features = combine_selected_modules_activations(
        dataset=dataset,
        vertical=vertical,
        position=position,
        include_mhsa=include_mhsa,
        include_mlps=include_mlps,
        include_mlps_l1=include_mlps_l1,
    )

    targets = []
    for knowledge_source in dataset["knowledge_source"].tolist():
        targets.append(label_encoder[knowledge_source])
    targets = np.array(targets, dtype=np.int64)

    return features, targets
# lmr-body: src/classification/classifier.py::_fit_regression
    if test_activations.shape[0] == 0:
        return {
            "layer": None,
            "relation_group_id": relation_group_id,
            "success_rate": None,
            "nb_test_examples": None,
            "nb_train_examples": None,
        }

    train_layer_vectors = train_activations[:, layer, 0, :]
    test_layer_vectors = test_activations[:, layer, 0, :]

    probe = LogisticRegression(max_iter=10000)
    probe.fit(train_layer_vectors, train_targets)
    predictions = probe.predict(test_layer_vectors)
    success_rate = float(accuracy_score(test_targets, predictions))

    return {
        "layer": layer,
        "relation_group_id": relation_group_id,
        "success_rate": success_rate,
        "nb_test_examples": int(test_activations.shape[0]),
        "nb_train_examples": int(train_activations.shape[0]),
    }
