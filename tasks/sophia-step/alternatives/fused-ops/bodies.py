# Alternative 'fused-ops' for sophia-step: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: sophia.py::SophiaG.update_hessian
        for group in self.param_groups:
            beta1, beta2 = group['betas']
            for p in group['params']:
                if p.grad is None:
                    continue
                state = self.state[p]

                if len(state) == 0:
                    state['step'] = torch.tensor(0.)
                    state['exp_avg'] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    state['hessian'] = torch.zeros_like(p, memory_format=torch.preserve_format)

                # h <- beta2 * h + (1 - beta2) * g * g   (batch-size factor applied in step)
                state['hessian'].mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)

# lmr-body: sophia.py::SophiaG.step
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()

        for group in self.param_groups:
            params_with_grad = []
            grads = []
            exp_avgs = []
            state_steps = []
            hessian = []
            beta1, beta2 = group['betas']

            for p in group['params']:
                if p.grad is None:
                    continue
                if p.grad.is_sparse:
                    raise RuntimeError('SophiaG does not support sparse gradients')
                params_with_grad.append(p)
                grads.append(p.grad)
                state = self.state[p]

                if len(state) == 0:
                    state['step'] = torch.tensor(0.)
                    state['exp_avg'] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    state['hessian'] = torch.zeros_like(p, memory_format=torch.preserve_format)

                exp_avgs.append(state['exp_avg'])
                state_steps.append(state['step'])
                hessian.append(state['hessian'])

            sophiag(params_with_grad,
                    grads,
                    exp_avgs,
                    hessian,
                    state_steps,
                    bs=bs,
                    beta1=beta1,
                    beta2=beta2,
                    rho=group['rho'],
                    lr=group['lr'],
                    weight_decay=group['weight_decay'],
                    maximize=group['maximize'],
                    capturable=group['capturable'])

        return loss

# lmr-body: sophia.py::_single_tensor_sophiag
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg = exp_avgs[i]
        hess = hessian[i]
        step_t = state_steps[i]

        # update step counter
        step_t += 1

        # decoupled weight decay (from the parameter before this step)
        param.mul_(1 - lr * weight_decay)

        # momentum: m <- beta1 * m + (1 - beta1) * g
        exp_avg.lerp_(grad, 1 - beta1)

        # theta <- theta - lr * clip(m / (rho * bs * h + eps), -1, 1)
        denom = hess.mul(rho * bs).add_(1e-15)
        ratio = exp_avg.div(denom).clamp_(-1.0, 1.0)
        param.add_(ratio, alpha=-lr)
