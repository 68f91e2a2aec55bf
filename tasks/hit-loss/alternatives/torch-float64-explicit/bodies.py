# Alternative 'torch-float64-explicit' for hit-loss: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: src/hierarchy_transformers/losses/hit_loss.py::HierarchyTransformerLoss.forward
        # the three columns are (child, parent, negative parent), in this order
        child_features, parent_features, negative_features = list(sentence_features)

        # encode each column separately; a shallow copy of each feature dict is passed so that the
        # caller's dict is not extended with the model's intermediate outputs
        child_embeds = self.model(dict(child_features))["sentence_embedding"]
        parent_embeds = self.model(dict(parent_features))["sentence_embedding"]
        negative_embeds = self.model(dict(negative_features))["sentence_embedding"]

        cluster_loss = self.cluster_loss(child_embeds, parent_embeds, negative_embeds)
        centri_loss = self.centri_loss(child_embeds, parent_embeds, negative_embeds)

        loss = cluster_loss * self.cluster_weight + centri_loss * self.centri_weight
        return {"loss": loss, "cluster_loss": cluster_loss, "centri_loss": centri_loss}

# lmr-body: src/hierarchy_transformers/losses/hit_loss.py::HyperbolicClusteringLoss.forward
        out_dtype = rep_anchor.dtype
        # work in double precision for a stable evaluation of the distances near the boundary
        c = torch.as_tensor(self.manifold.c, device=rep_anchor.device).to(torch.float64)
        child = rep_anchor.to(torch.float64)
        parent = rep_positive.to(torch.float64)
        negative = rep_negative.to(torch.float64)

        def poincare_distance(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
            # d_c(u, v) = 2 / sqrt(c) * artanh(sqrt(c) * ||(-u) (+)_c v||), where, by expanding the
            # Mobius addition, ||(-u) (+)_c v||^2 = ||u - v||^2 / (c ||u - v||^2 + (1 - c||u||^2)(1 - c||v||^2))
            diff_norm = torch.linalg.vector_norm(u - v, dim=-1)
            lam_u = 1.0 - c * u.pow(2).sum(dim=-1)
            lam_v = 1.0 - c * v.pow(2).sum(dim=-1)
            mobius_norm = diff_norm / (c * diff_norm.pow(2) + lam_u * lam_v).sqrt()
            scaled = (c.sqrt() * mobius_norm).clamp(max=1.0 - 1e-15)
            return 2.0 / c.sqrt() * torch.atanh(scaled)

        positive_dists = poincare_distance(child, parent)
        negative_dists = poincare_distance(child, negative)

        # max(d_c(child, parent) - d_c(child, negative) + alpha, 0) for each triplet
        # (a triplet with a non-positive violation contributes exactly zero and no gradient)
        violation = positive_dists - negative_dists + self.margin
        hinge = torch.where(violation > 0, violation, torch.zeros_like(violation))
        return hinge.mean().to(out_dtype)

# lmr-body: src/hierarchy_transformers/losses/hit_loss.py::HyperbolicCentripetalLoss.forward
        out_dtype = rep_anchor.dtype
        c = torch.as_tensor(self.manifold.c, device=rep_anchor.device).to(torch.float64)
        sqrt_c = c.sqrt()

        def hyperbolic_norm(u: torch.Tensor) -> torch.Tensor:
            # ||u||_c = d_c(u, 0) = 2 / sqrt(c) * artanh(sqrt(c) * ||u||)
            euclid_norm = torch.linalg.vector_norm(u.to(torch.float64), dim=-1)
            return 2.0 / sqrt_c * torch.atanh((sqrt_c * euclid_norm).clamp(max=1.0 - 1e-15))

        child_norms = hyperbolic_norm(rep_anchor)
        parent_norms = hyperbolic_norm(rep_positive)

        # max(||parent||_c - ||child||_c + beta, 0) for each (child, parent) pair; negatives are unused
        violation = parent_norms - child_norms + self.margin
        hinge = torch.where(violation > 0, violation, torch.zeros_like(violation))
        return hinge.mean().to(out_dtype)
