# Alternative 'index-split-manual-metrics' for cd-probing: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: main.py::probing
    # Layer-wise linear classifier probing, with the three scores computed from first principles.
    classifiers = {
        "LR": lambda: LogisticRegression(penalty="l2"),
        "RF": lambda: RandomForestClassifier(random_state=42),
    }
    if args.clf not in classifiers:
        raise ImportError("We don't have this classifier: " + str(args.clf) + " (use LR or RF).")

    def _scores(y_true, y_pred, score):
        y_true = np.asarray(y_true)
        y_pred = np.asarray(y_pred)
        score = np.asarray(score, dtype=np.float64)

        acc = float(np.mean(y_true == y_pred))

        tp = float(np.sum((y_pred == 1) & (y_true == 1)))
        fp = float(np.sum((y_pred == 1) & (y_true == 0)))
        fn = float(np.sum((y_pred == 0) & (y_true == 1)))
        precision = tp / (tp + fp) if (tp + fp) > 0 else 0.0
        recall = tp / (tp + fn) if (tp + fn) > 0 else 0.0
        f1 = 2.0 * precision * recall / (precision + recall) if (precision + recall) > 0 else 0.0

        # ROC AUC = probability that a random positive scores above a random negative
        # (ties count one half), via average ranks (Mann-Whitney U).
        n_pos = int(np.sum(y_true == 1))
        n_neg = int(np.sum(y_true == 0))
        if n_pos == 0 or n_neg == 0:
            raise ValueError("Only one class present in y_true. ROC AUC score is not defined in that case.")
        uniq, inverse, counts = np.unique(score, return_inverse=True, return_counts=True)
        ends = np.cumsum(counts).astype(np.float64)          # 1-based rank of the last element of each tie block
        avg_rank = ends - (counts - 1) / 2.0                 # average rank of each tie block
        ranks = avg_rank[inverse]
        u = np.sum(ranks[y_true == 1]) - n_pos * (n_pos + 1) / 2.0
        auc = float(u / (n_pos * n_neg))
        return acc, f1, auc

    for layer in range(tot_layer):
        neg = np.asarray(rp_log_data_list[layer])
        pos = np.asarray(rp_question_data_list[layer])
        X = np.vstack([neg, pos])
        y = np.array([0] * neg.shape[0] + [1] * pos.shape[0])

        # The split depends only on the number of samples: split row indices, then gather.
        idx_train, idx_test = train_test_split(np.arange(X.shape[0]), test_size=0.4, random_state=42)

        clf = classifiers[args.clf]()
        clf.fit(X[idx_train], y[idx_train])

        proba = clf.predict_proba(X[idx_test])
        pos_col = int(np.flatnonzero(clf.classes_ == 1)[0])
        acc, f1, auc = _scores(y[idx_test], clf.predict(X[idx_test]), proba[:, pos_col])

        print("layer {}/{}: acc {:.4f} f1 {:.4f} auc {:.4f}".format(layer + 1, tot_layer, acc, f1, auc))
        list_acc.append(acc)
        list_f1.append(f1)
        list_auc.append(auc)

    return list_acc, list_f1, list_auc
