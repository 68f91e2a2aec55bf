# Alternative 'factorize-plain-loop' for knowprob-classification-by-relation-group: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: src/classification/classifier.py::perform_classification_by_relation_group
    import numpy as np

    module_name = "mlp" if include_mlps else ("mlp-l1" if include_mlps_l1 else "mhsa")
    label_ids = {"CK": 0, "PK": 1}

    def to_arrays(dataset: pd.DataFrame):
        # every cell[position] is a list (one entry per layer) of one-element lists holding
        # a 1-D array -> one example is an array of shape (n_layers, 1, module_dim)
        examples = [np.array(cell[position]) for cell in dataset[module_name].tolist()]
        features = np.stack(examples) if len(examples) > 0 else np.empty((0,))
        targets = np.array([label_ids[source] for source in dataset["knowledge_source"].tolist()])
        return features, targets

    # group codes follow the order of first appearance of the relation groups
    group_codes, relation_group_ids = pd.factorize(prompting_results["relation_group_id"])

    classification_metrics = []
    for code, relation_group_id in enumerate(relation_group_ids):
        test_rows = np.flatnonzero(group_codes == code)
        train_rows = np.flatnonzero(group_codes != code)

        balanced_train = undersample_dataset(prompting_results.iloc[train_rows])
        balanced_test = undersample_dataset(prompting_results.iloc[test_rows])

        X_train, y_train = to_arrays(balanced_train)
        X_test, y_test = to_arrays(balanced_test)
        nb_layers = X_train.shape[1]
        nb_train, nb_test = X_train.shape[0], X_test.shape[0]

        for layer in range(nb_layers):
            if nb_test == 0:
                # one knowledge source only in the group: nothing to score
                classification_metrics.append(
                    {
                        "layer": None,
                        "relation_group_id": relation_group_id,
                        "success_rate": None,
                        "nb_test_examples": None,
                        "nb_train_examples": None,
                    }
                )
                continue

            probe = LogisticRegression(random_state=16, max_iter=10000)
            probe.fit(X_train[:, layer, 0, :], y_train)
            predictions = probe.predict(X_test[:, layer, 0, :])
            success_rate = float(np.mean(predictions == y_test))

            classification_metrics.append(
                {
                    "layer": layer,
                    "relation_group_id": relation_group_id,
                    "success_rate": success_rate,
                    "nb_test_examples": int(nb_test),
                    "nb_train_examples": int(nb_train),
                }
            )

    return classification_metrics
