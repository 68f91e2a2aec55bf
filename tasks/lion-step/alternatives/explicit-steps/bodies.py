# Alternative 'explicit-steps' for lion-step: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: lion/lion_pytorch.py::Lion.step
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
