# Copyright 2023 Yuan He

# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at

#     http://www.apache.org/licenses/LICENSE-2.0

# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
from __future__ import annotations

import logging
from collections.abc import Iterable

import torch
import torch.nn.functional as F
from geoopt.manifolds import PoincareBall

from hierarchy_transformers.models import HierarchyTransformer
from hierarchy_transformers.utils import format_citation

logger = logging.getLogger(__name__)


class HierarchyTransformerLoss(torch.nn.Module):
    """Hyperbolic loss that linearly combines hperbolic clustering loss and hyperbolic Centripetal loss and applies weights for joint optimisation."""

    def __init__(
        self,
        model: HierarchyTransformer,
        clustering_loss_weight: float = 1.0,
        clustering_loss_margin: float = 5.0,
        centripetal_loss_weight: float = 1.0,
        centripetal_loss_margin: float = 0.5,
    ):
        super().__init__()

        self.model = model
        self.manifold = self.model.manifold
        self.cluster_loss = HyperbolicClusteringLoss(self.model.manifold, clustering_loss_margin)
        self.centri_loss = HyperbolicCentripetalLoss(self.model.manifold, centripetal_loss_margin)
        self.cluster_weight = clustering_loss_weight
        self.centri_weight = centripetal_loss_weight

    def get_config_dict(self):
        # distance_metric_name = self.distance_metric.__name__
        config = {"distance_metric": f"PoincareBall(c={self.manifold.c}).dist and dist0"}
        config[HyperbolicClusteringLoss.__name__] = {
            "weight": self.cluster_weight,
            **self.cluster_loss.get_config_dict(),
        }
        config[HyperbolicCentripetalLoss.__name__] = {
            "weight": self.centri_weight,
            **self.centri_loss.get_config_dict(),
        }
        return config

    def forward(self, sentence_features: Iterable[dict[str, torch.Tensor]], labels: torch.Tensor):
        """Forward propagation that follows [`sentence_transformers.losses`](https://github.com/UKPLab/sentence-transformers/tree/master/sentence_transformers/losses)."""
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

    @property
    def citation(self) -> str:
        return format_citation(
            """
            @article{he2024language,
              title={Language models as hierarchy encoders},
              author={He, Yuan and Yuan, Zhangdie and Chen, Jiaoyan and Horrocks, Ian},
              journal={arXiv preprint arXiv:2401.11374},
              year={2024}
            }
            """
        )


class HyperbolicClusteringLoss(torch.nn.Module):
    r"""Hyperbolic loss that clusters entities in subsumptions.

    Essentially, this loss is expected to achieve:

    $$d(child, parent) < d(child, negative)$$

    Inputs are presented in `(rep_anchor, rep_positive, rep_negative)`.
    """

    def __init__(self, manifold: PoincareBall, margin: float):
        super().__init__()
        self.manifold = manifold
        self.margin = margin

    def get_config_dict(self):
        config = {
            "distance_metric": f"PoincareBall(c={self.manifold.c}).dist",
            "margin": self.margin,
        }
        return config

    def forward(self, rep_anchor: torch.Tensor, rep_positive: torch.Tensor, rep_negative: torch.Tensor):
        """Forward propagation.

        Args:
            rep_anchor (torch.Tensor): The input tensor for child entities.
            rep_positive (torch.Tensor): The input tensor for parent entities.
            rep_negative (torch.Tensor): The input tensor for negative parent entities.
        """
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

    @property
    def citation(self) -> str:
        return format_citation(
            """
            @article{he2024language,
              title={Language models as hierarchy encoders},
              author={He, Yuan and Yuan, Zhangdie and Chen, Jiaoyan and Horrocks, Ian},
              journal={arXiv preprint arXiv:2401.11374},
              year={2024}
            }
            """
        )


class HyperbolicCentripetalLoss(torch.nn.Module):
    r"""Hyperbolic loss that regulates the norms of child and parent entities.

    Essentially, this loss is expected to achieve:

    $$d(child, origin) > d(parent, origin)$$

    Inputs are presented in `(rep_anchor, rep_positive, rep_negative)` but only `(rep_anchor, rep_positive)` pairs are involved in this loss.
    """

    def __init__(self, manifold: PoincareBall, margin: float):
        super().__init__()
        self.manifold = manifold
        self.margin = margin

    def get_config_dict(self):
        config = {
            "distance_metric": f"PoincareBall(c={self.manifold.c}).dist0",
            "margin": self.margin,
        }
        return config

    def forward(self, rep_anchor: torch.Tensor, rep_positive: torch.Tensor, rep_negative: torch.Tensor):
        """Forward propagation.

        Args:
            rep_anchor (torch.Tensor): The input tensor for child entities.
            rep_positive (torch.Tensor): The input tensor for parent entities.
            rep_negative (torch.Tensor): The input tensor for negative parent entities (actually not required in this loss).
        """
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

    @property
    def citation(self) -> str:
        return format_citation(
            """
            @article{he2024language,
              title={Language models as hierarchy encoders},
              author={He, Yuan and Yuan, Zhangdie and Chen, Jiaoyan and Horrocks, Ian},
              journal={arXiv preprint arXiv:2401.11374},
              year={2024}
            }
            """
        )
