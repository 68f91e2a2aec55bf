# Alternative 'fused-ops' for lion-step: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: lion/lion_pytorch.py::Lion.step
    loss = None
    if closure is not None:
      with torch.enable_grad():
        loss = closure()

    for group in self.param_groups:
      lr = group['lr']
      beta1, beta2 = group['betas']
      weight_decay = group['weight_decay']
      for p in group['params']:
        if p.grad is None:
          continue
        grad = p.grad

        state = self.state[p]
        if len(state) == 0:
          # Momentum m, initialised to zeros.
          state['exp_avg'] = torch.zeros_like(
              p, memory_format=torch.preserve_format)
        exp_avg = state['exp_avg']

        # Decoupled weight decay, from the parameter before this step.
        p.mul_(1 - lr * weight_decay)

        # c = beta1 * m + (1 - beta1) * g ; update = sign(c)
        update = exp_avg.mul(beta1).add_(grad, alpha=1 - beta1).sign_()
        p.add_(update, alpha=-lr)

        # m = beta2 * m + (1 - beta2) * g
        exp_avg.mul_(beta2).add_(grad, alpha=1 - beta2)

    return loss
