# Alternative 'explicit-steps' for sophia-step: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: sophia.py::SophiaG.update_hessian
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

# lmr-body: sophia.py::SophiaG.step
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

# lmr-body: sophia.py::_single_tensor_sophiag
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
