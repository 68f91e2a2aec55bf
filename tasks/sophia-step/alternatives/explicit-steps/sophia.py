import math
import torch
from torch import Tensor
from torch.optim.optimizer import Optimizer
from typing import List, Optional


class SophiaG(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.965, 0.99), rho = 0.04,
         weight_decay=1e-1, *, maximize: bool = False,
         capturable: bool = False):
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError("Invalid beta parameter at index 0: {}".format(betas[0]))
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError("Invalid beta parameter at index 1: {}".format(betas[1]))
        if not 0.0 <= rho:
            raise ValueError("Invalid rho parameter at index 1: {}".format(rho))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        defaults = dict(lr=lr, betas=betas, rho=rho, 
                        weight_decay=weight_decay, 
                        maximize=maximize, capturable=capturable)
        super(SophiaG, self).__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault('maximize', False)
            group.setdefault('capturable', False)
        state_values = list(self.state.values())
        step_is_tensor = (len(state_values) != 0) and torch.is_tensor(state_values[0]['step'])
        if not step_is_tensor:
            for s in state_values:
                s['step'] = torch.tensor(float(s['step']))
    
    @torch.no_grad()
    def update_hessian(self):
        for group in self.param_groups:
            beta2 = group['betas'][1]
            for p in group['params']:
                g = p.grad
                if g is None:
                    continue
                st = self.state[p]
                if not st:
                    st['step'] = torch.tensor(0.)
                    st['exp_avg'] = torch.zeros(p.shape, dtype=p.dtype, device=p.device)
                    st['hessian'] = torch.zeros(p.shape, dtype=p.dtype, device=p.device)
                h = st['hessian']
                g_sq = g * g
                new_h = beta2 * h + (1.0 - beta2) * g_sq
                h.copy_(new_h)
        return None


    @torch.no_grad()
    def step(self, closure=None, bs=5120):
        if closure is None:
            loss = None
        else:
            with torch.enable_grad():
                loss = closure()

        # First pass: collect the participating parameters of every group and
        # reject sparse gradients before any state or parameter is touched.
        work = []
        for group in self.param_groups:
            active = [p for p in group['params'] if p.grad is not None]
            for p in active:
                if p.grad.is_sparse:
                    raise RuntimeError('SophiaG does not support sparse gradients')
            work.append((group, active))

        # Second pass: lazily create the state, then apply the update.
        for group, active in work:
            for p in active:
                st = self.state[p]
                if not st:
                    st['step'] = torch.tensor(0.)
                    st['exp_avg'] = torch.zeros(p.shape, dtype=p.dtype, device=p.device)
                    st['hessian'] = torch.zeros(p.shape, dtype=p.dtype, device=p.device)
            _single_tensor_sophiag([p for p in active],
                                   [p.grad for p in active],
                                   [self.state[p]['exp_avg'] for p in active],
                                   [self.state[p]['hessian'] for p in active],
                                   [self.state[p]['step'] for p in active],
                                   bs=bs,
                                   beta1=group['betas'][0],
                                   beta2=group['betas'][1],
                                   rho=group['rho'],
                                   lr=group['lr'],
                                   weight_decay=group['weight_decay'],
                                   maximize=group['maximize'],
                                   capturable=group['capturable'])

        return loss

def sophiag(params: List[Tensor],
          grads: List[Tensor],
          exp_avgs: List[Tensor],
          hessian: List[Tensor],
          state_steps: List[Tensor],
          capturable: bool = False,
          *,
          bs: int,
          beta1: float,
          beta2: float,
          rho: float,
          lr: float,
          weight_decay: float,
          maximize: bool):

    if not all(isinstance(t, torch.Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of singleton tensors")

    
    func = _single_tensor_sophiag

    func(params,
         grads,
         exp_avgs,
         hessian,
         state_steps,
         bs=bs,
         beta1=beta1,
         beta2=beta2,
         rho=rho,
         lr=lr,
         weight_decay=weight_decay,
         maximize=maximize,
         capturable=capturable)

def _single_tensor_sophiag(params: List[Tensor],
                         grads: List[Tensor],
                         exp_avgs: List[Tensor],
                         hessian: List[Tensor],
                         state_steps: List[Tensor],
                         *,
                         bs: int,
                         beta1: float,
                         beta2: float,
                         rho: float,
                         lr: float,
                         weight_decay: float,
                         maximize: bool,
                         capturable: bool):

    eps = 1e-15
    for param, grad, m, h, step_t in zip(params, grads, exp_avgs, hessian, state_steps):
        # 1. step counter
        step_t.add_(1)

        # 2. remember the parameter before the step (for the weight decay)
        theta_old = param.clone()

        # 3. momentum with beta1 (the gradient is negated to maximize)
        if maximize:
            m.mul_(beta1).sub_((1.0 - beta1) * grad)
        else:
            m.mul_(beta1).add_((1.0 - beta1) * grad)

        # 4. clipped preconditioned step: sign(m) * min(|m| / max(rho*bs*h, eps), 1)
        scaled_h = h * (rho * bs)
        denom = torch.clamp(scaled_h, min=eps)
        magnitude = torch.minimum(m.abs() / denom, torch.ones_like(m))
        clipped = torch.sign(m) * magnitude

        # 5. theta <- theta - lr * lambda * theta_old - lr * clipped
        decrement = lr * weight_decay * theta_old + lr * clipped
        param.sub_(decrement)