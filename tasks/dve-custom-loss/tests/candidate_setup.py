"""Candidate set-up for dve-custom-loss (written for lmr; no upstream code): two stand-ins.

lmr runs this file in the candidate process (task.json tests.candidate.setup) before the
workspace is imported; the tests themselves never import the workspace.

Evaluator/visual_text_training.py imports, at module level, `wandb` (for `wandb.init` and
`wandb.log` in `train`/`main`) and `from transformers import BertTokenizer, BertModel,
BertConfig, AdamW` (used by `BERTModelModule.__init__` and `main`). `CustomLoss.forward`
uses neither: it is torch alone. Importing the module builds no model (everything that
loads weights sits in functions and under `if __name__ == "__main__":`), so the imports
are the only contact. task.json's environment.stand_ins gives the measured figures for
installing the real packages instead.

The stand-ins are empty modules: any attribute read from them is a fresh class named after
it (enough for `from transformers import BertModel`), and calling anything on them fails
loudly, so a submission cannot lean on them. They are installed unconditionally (a real
copy already imported is dropped), so every run sees the same modules. torch, torchvision,
PIL, pandas, numpy and tqdm are the real Debian packages.
"""
import sys
import types

STOOD_IN = ("wandb", "transformers")


class _StandInModule(types.ModuleType):
    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)

        def _refuse(*args, **kwargs):
            raise RuntimeError("%s.%s is an lmr grader stand-in (tests/candidate_setup.py): it does nothing" % (self.__name__, attr))

        value = type(attr, (), {"__module__": self.__name__, "__doc__": "lmr grader stand-in", "__init__": _refuse})
        setattr(self, attr, value)
        return value


def _install():
    for name in list(sys.modules):
        if name.split(".", 1)[0] in STOOD_IN:
            del sys.modules[name]
    for name in STOOD_IN:
        sys.modules[name] = _StandInModule(name, "lmr grader stand-in for %s (tests/candidate_setup.py)" % name)


_install()
