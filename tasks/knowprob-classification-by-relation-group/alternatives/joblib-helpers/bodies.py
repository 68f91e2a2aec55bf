# Alternative 'joblib-helpers' for knowprob-classification-by-relation-group: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: src/classification/classifier.py::perform_classification_by_relation_group
    # CK -> 0 and PK -> 1
    label_encoder = {"CK": 0, "PK": 1}

    features_kwargs = dict(
        vertical=vertical,
        position=position,
        include_mlps=include_mlps,
        include_mlps_l1=include_mlps_l1,
        include_mhsa=include_mhsa,
        label_encoder=label_encoder,
    )

    classification_metrics = []

    # each relation group in turn is the test set (order of first appearance)
    for relation_group_id in prompting_results["relation_group_id"].unique():
        is_in_test_group = prompting_results["relation_group_id"] == relation_group_id

        # balance the training and the test sets independently
        train_dataset = undersample_dataset(prompting_results[~is_in_test_group])
        test_dataset = undersample_dataset(prompting_results[is_in_test_group])

        # features of shape (n_examples, n_layers, 1, module_dim)
        train_activations, train_targets = get_features_and_targets_for_dataset(dataset=train_dataset, **features_kwargs)
        test_activations, test_targets = get_features_and_targets_for_dataset(dataset=test_dataset, **features_kwargs)

        nb_layers = train_activations.shape[1]

        # one probe per layer
        group_metrics = Parallel(n_jobs=-1)(
            delayed(_fit_regression)(
                train_activations, train_targets, test_activations, test_targets, layer, relation_group_id
            )
            for layer in range(nb_layers)
        )
        classification_metrics.extend(group_metrics)

    return classification_metrics
