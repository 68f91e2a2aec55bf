# Alternative 'sklearn-pca' for repe-pca-rep-directions: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: repe/rep_readers.py::PCARepReader.get_rep_directions
        directions = {}

        for layer in hidden_layers:
            H_train = np.asarray(hidden_states[layer])
            if not np.issubdtype(H_train.dtype, np.floating):
                H_train = H_train.astype(np.float64)

            # mean-centre the layer's states and remember the mean for transform / get_signs
            H_train_mean = H_train.mean(axis=0, keepdims=True)
            self.H_train_means[layer] = H_train_mean
            H_train_centered = H_train - H_train_mean

            # exact (LAPACK) PCA; components_ are unit rows sorted by explained variance
            pca_model = PCA(n_components=self.n_components, whiten=False, svd_solver='full').fit(H_train_centered)

            directions[layer] = pca_model.components_
            self.n_components = int(pca_model.n_components_)

        return directions
