# Alternative 'geoopt-manifold' for hit-loss: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: src/hierarchy_transformers/losses/hit_loss.py::HierarchyTransformerLoss.forward
        # encode the child, parent and negative-parent columns (in this order) into the Poincaré ball
        reps = [self.model(sentence_feature)["sentence_embedding"] for sentence_feature in sentence_features]
        assert len(reps) == 3, "HiT loss expects (child, parent, negative parent) triplets."
        rep_anchor, rep_positive, rep_negative = reps

        cluster_loss = self.cluster_loss(rep_anchor, rep_positive, rep_negative)
        centri_loss = self.centri_loss(rep_anchor, rep_positive, rep_negative)
        combined_loss = self.cluster_weight * cluster_loss + self.centri_weight * centri_loss

        return {
            "loss": combined_loss,
            "cluster_loss": cluster_loss,
            "centri_loss": centri_loss,
        }

# lmr-body: src/hierarchy_transformers/losses/hit_loss.py::HyperbolicClusteringLoss.forward
        # geodesic distances d_c(child, parent) and d_c(child, negative parent)
        distances_positive = self.manifold.dist(rep_anchor, rep_positive)
        distances_negative = self.manifold.dist(rep_anchor, rep_negative)
        # hinge: max(d(child, parent) - d(child, negative) + alpha, 0), averaged over the batch
        cluster_triplet_loss = F.relu(distances_positive - distances_negative + self.margin)
        return cluster_triplet_loss.mean()

# lmr-body: src/hierarchy_transformers/losses/hit_loss.py::HyperbolicCentripetalLoss.forward
        # hyperbolic norms, i.e., geodesic distances to the origin of the ball
        rep_anchor_hyper_norms = self.manifold.dist0(rep_anchor)
        rep_positive_hyper_norms = self.manifold.dist0(rep_positive)
        # hinge: max(||parent||_c - ||child||_c + beta, 0), averaged over the batch
        centri_pair_loss = F.relu(rep_positive_hyper_norms - rep_anchor_hyper_norms + self.margin)
        return centri_pair_loss.mean()
