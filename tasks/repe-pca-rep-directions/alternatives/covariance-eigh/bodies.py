# Alternative 'covariance-eigh' for repe-pca-rep-directions: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: repe/rep_readers.py::PCARepReader.get_rep_directions
        directions = {}
        n_components_out = self.n_components

        for layer in hidden_layers:
            H_train = np.array(hidden_states[layer], dtype=np.float64, copy=True)
            n_examples, hidden_size = H_train.shape

            # mean of the states over the examples, kept in the states' own dtype when floating
            H_train_mean = H_train.mean(axis=0, keepdims=True)
            in_dtype = np.asarray(hidden_states[layer]).dtype
            self.H_train_means[layer] = H_train_mean.astype(in_dtype) if np.issubdtype(in_dtype, np.floating) else H_train_mean

            # covariance of the mean-centred states and its eigen-decomposition
            X = H_train - H_train_mean
            denom = max(n_examples - 1, 1)
            cov = (X.T @ X) / denom
            cov = 0.5 * (cov + cov.T)
            eigvals, eigvecs = np.linalg.eigh(cov)  # ascending eigenvalues, orthonormal columns

            k = self.n_components
            if k is None:
                k = min(n_examples, hidden_size)
            k = int(k)

            # decreasing order of explained variance (stable sort keeps eigh's order within ties)
            order = np.argsort(-eigvals, kind='stable')[:k]
            components = np.empty((k, hidden_size), dtype=np.float64)
            for row, idx in enumerate(order):
                v = eigvecs[:, idx]
                v = v / np.linalg.norm(v)
                # deterministic sign: largest-magnitude coordinate positive (any sign is valid)
                pivot = np.argmax(np.abs(v))
                if v[pivot] < 0:
                    v = -v
                components[row] = v

            directions[layer] = components
            n_components_out = k

        self.n_components = n_components_out
        return directions
