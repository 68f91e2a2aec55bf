# Alternative 'two-sigmoid-terms' for dpo-grad-region: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: trainers.py::Trainer.train_step
            # d loss / d logits: IPO (equation (4)) or label-smoothed logistic (equation (3)).
            if cfg.ipo:
                dloss_dlogits = 2.0 * (logits - 1.0 / (2.0 * cfg.beta))
            else:
                eps = cfg.label_smoothing
                dloss_dlogits = (
                    -(1.0 - eps) * cfg.beta * sigmoid(-cfg.beta * logits)
                    + eps * cfg.beta * sigmoid(cfg.beta * logits)
                )
