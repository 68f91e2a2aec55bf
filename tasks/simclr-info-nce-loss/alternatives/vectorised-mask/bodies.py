# Alternative 'vectorised-mask' for simclr-info-nce-loss: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: simclr.py::SimCLR.info_nce_loss
        # NT-Xent logits (Eq. (1) of the paper) for a view-major batch of 2B rows:
        # row i and row (i + B) mod 2B are the two views of the same image.
        batch_size = self.args.batch_size
        n = self.args.n_views * batch_size  # 2B rows

        # cosine similarity sim(u, v) = u^T v / (||u|| ||v||) of every pair of rows
        z = F.normalize(features, dim=1)
        similarity_matrix = torch.matmul(z, z.T)  # (2B, 2B)

        idx = torch.arange(n, device=features.device)
        positive_idx = (idx + batch_size) % n

        # positives: sim(z_i, z_{(i+B) mod 2B})
        positives = similarity_matrix[idx, positive_idx].view(n, 1)

        # negatives: every k other than i and its positive, in increasing order of k
        # (boolean-mask selection keeps row-major order)
        keep = torch.ones(n, n, dtype=torch.bool, device=features.device)
        keep[idx, idx] = False
        keep[idx, positive_idx] = False
        negatives = similarity_matrix[keep].view(n, n - 2)

        logits = torch.cat([positives, negatives], dim=1) / self.args.temperature

        # the positive is in column 0 of every row
        labels = torch.zeros(n, dtype=torch.long, device=self.args.device)
        return logits, labels
