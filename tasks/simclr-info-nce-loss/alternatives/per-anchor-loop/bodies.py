# Alternative 'per-anchor-loop' for simclr-info-nce-loss: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: simclr.py::SimCLR.info_nce_loss
        # NT-Xent logits (Eq. (1) of the paper), built anchor by anchor.
        # Layout is view-major: rows 0..B-1 are view 1, rows B..2B-1 view 2,
        # so the positive of anchor i is row (i + B) mod 2B.
        batch_size = self.args.batch_size
        n = self.args.n_views * batch_size  # 2B anchors
        tau = self.args.temperature

        # unit-length rows, so that a dot product is the cosine similarity
        # (each row is first divided by its largest magnitude, so that squaring
        # neither overflows nor underflows for very large or very small rows)
        scale = features.abs().amax(dim=1, keepdim=True)
        scaled = features / scale
        norms = torch.sqrt(torch.sum(scaled * scaled, dim=1, keepdim=True))
        z = scaled / norms

        rows = []
        for i in range(n):
            j = (i + batch_size) % n
            # column 0: the positive; then the 2(B-1) negatives in increasing k
            columns = [j] + [k for k in range(n) if k != i and k != j]
            others = z[torch.tensor(columns, dtype=torch.long, device=features.device)]
            rows.append(torch.mv(others, z[i]) / tau)
        logits = torch.stack(rows, dim=0)  # (2B, 2B - 1)

        labels = torch.zeros(n, dtype=torch.long, device=self.args.device)
        return logits, labels
