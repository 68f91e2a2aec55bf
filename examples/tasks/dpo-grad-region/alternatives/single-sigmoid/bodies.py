# Alternative 'single-sigmoid' for dpo-grad-region: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: trainers.py::Trainer.train_step
            # Using sigmoid(x) = 1 - sigmoid(-x): d/dh [-(1-eps) log s(b h) - eps log s(-b h)]
            # = b (eps - s(-b h)); for IPO d/dh (h - 1/(2b))^2 = 2 h - 1/b.
            beta = cfg.beta
            dloss_dlogits = (
                2.0 * logits - 1.0 / beta
                if cfg.ipo
                else beta * (cfg.label_smoothing - sigmoid(-beta * logits))
            )
