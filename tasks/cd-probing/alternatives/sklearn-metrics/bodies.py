# Alternative 'sklearn-metrics' for cd-probing: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: main.py::probing
    # One binary linear probe per layer: group 1 (rp_log) -> label 0, group 2 (rp_question) -> label 1.
    if args.clf not in ("LR", "RF"):
        raise ImportError(f"Unknown classifier {args.clf!r}: please choose 'LR' or 'RF'.")

    for i in range(tot_layer):
        rp_log_data = rp_log_data_list[i]
        rp_question_data = rp_question_data_list[i]

        X = np.concatenate((rp_log_data, rp_question_data), axis=0)
        y = np.concatenate((np.zeros(len(rp_log_data), dtype=int),
                            np.ones(len(rp_question_data), dtype=int)))

        X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.4, random_state=42)

        if args.clf == "LR":
            clf = LogisticRegression(penalty="l2")
        else:
            clf = RandomForestClassifier(random_state=42)
        clf.fit(X_train, y_train)

        y_pred = clf.predict(X_test)
        y_prob = clf.predict_proba(X_test)[:, list(clf.classes_).index(1)]

        acc = accuracy_score(y_test, y_pred)
        f1 = f1_score(y_test, y_pred)
        auc = roc_auc_score(y_test, y_prob)

        print(f"Layer {i}: Acc = {acc:.4f}, F1 = {f1:.4f}, AUC = {auc:.4f}")
        list_acc.append(acc)
        list_f1.append(f1)
        list_auc.append(auc)

    return list_acc, list_f1, list_auc
