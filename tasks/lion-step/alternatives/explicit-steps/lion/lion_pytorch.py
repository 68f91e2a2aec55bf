# Copyright 2023 Google Research. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================
"""PyTorch implementation of the Lion optimizer."""
import torch
from torch.optim.optimizer import Optimizer


class Lion(Optimizer):
  r"""Implements Lion algorithm."""

  def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
    """Initialize the hyperparameters.

    Args:
      params (iterable): iterable of parameters to optimize or dicts defining
        parameter groups
      lr (float, optional): learning rate (default: 1e-4)
      betas (Tuple[float, float], optional): coefficients used for computing
        running averages of gradient and its square (default: (0.9, 0.99))
      weight_decay (float, optional): weight decay coefficient (default: 0)
    """

    if not 0.0 <= lr:
      raise ValueError('Invalid learning rate: {}'.format(lr))
    if not 0.0 <= betas[0] < 1.0:
      raise ValueError('Invalid beta parameter at index 0: {}'.format(betas[0]))
    if not 0.0 <= betas[1] < 1.0:
      raise ValueError('Invalid beta parameter at index 1: {}'.format(betas[1]))
    defaults = dict(lr=lr, betas=betas, weight_decay=weight_decay)
    super().__init__(params, defaults)

  @torch.no_grad()
  def step(self, closure=None):
    """Performs a single optimization step.

    Args:
      closure (callable, optional): A closure that reevaluates the model
        and returns the loss.

    Returns:
      the loss.
    """
    if closure is None:
      loss = None
    else:
      with torch.enable_grad():
        loss = closure()

    for group in self.param_groups:
      lr = group['lr']
      beta1 = group['betas'][0]
      beta2 = group['betas'][1]
      lam = group['weight_decay']
      for p in group['params']:
        g = p.grad
        if g is None:
          continue

        p_state = self.state.setdefault(p, {})
        if 'exp_avg' not in p_state:
          p_state['exp_avg'] = torch.zeros(
              p.shape, dtype=p.dtype, device=p.device)
        m = p_state['exp_avg']

        # Step 1: interpolation for the update direction (rate beta1).
        c = torch.lerp(m, g, 1.0 - beta1)
        # Step 2: sign of the interpolation (sign(0) == 0).
        u = torch.sign(c)
        # Step 3: full decrement lr * (sign(c) + lambda * theta_{t-1}),
        # computed entirely from the old parameter value.
        delta = u + lam * p
        p.sub_(lr * delta)
        # Step 4: momentum tracked with the other rate (beta2).
        m.lerp_(g, 1.0 - beta2)

    return loss
