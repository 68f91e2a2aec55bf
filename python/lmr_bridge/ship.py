"""What a probe takes to the candidate: its source, and how to make each global name it uses.

A probe is a function of a test file that runs in the candidate. It gets its data as
arguments, and its source travels, not its objects. The global names it reads must each be
one of: a module (imported there by its name), another probe or a @probe_helper function
or class of the test files (its source travels too), or a function or class importable by
its module and name (a library's, or a candidate file's). Anything else (a fixture, an
expected value, a dict of recorded data) is refused with a message naming it: what the
candidate sees is exactly the probes' code and their arguments.
"""
import ast
import builtins
import dis
import inspect
import sys
import textwrap
import types

_MARK = "__lmr_probe_helper__"
# names every module has (a class statement reads __name__ for its __module__)
_IMPLICIT = {"__name__", "__module__", "__qualname__", "__doc__", "__builtins__", "__file__", "__spec__", "__loader__", "__package__"}


class ProbeError(Exception):
    """A probe that cannot be sent to the candidate as written; the message says why and what to do."""


def mark_helper(obj):
    setattr(obj, _MARK, True)
    return obj


def is_helper(obj):
    return getattr(obj, _MARK, False) is True


def source_of(obj, what):
    """The definition's source, dedented, without its decorators."""
    try:
        text = textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError) as e:
        raise ProbeError("%s: its source cannot be read (%s); define it at the top level of a test file" % (what, e)) from None
    tree = ast.parse(text)
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    if not defs:
        raise ProbeError("%s: no definition found in its source" % what)
    node = defs[0]
    node.decorator_list = []
    return ast.unparse(node)


def global_names(code):
    """Names a code object (and the code nested in it) reads as globals."""
    names = set()
    stack = [code]
    while stack:
        c = stack.pop()
        for ins in dis.get_instructions(c):
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL"):
                names.add(ins.argval)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return names


def payload(fn, what):
    """{"defs": [[name, source], ...] in the order to execute, "imports": {name: [module, qualname or None]}}."""
    defs = []
    imports = {}
    seen = set()

    def visit(obj, label):
        if id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, types.FunctionType) and obj.__closure__:
            raise ProbeError("%s is a closure (defined inside a function): define it at the top level of the test file" % label)
        source = source_of(obj, label)
        # the definition as the candidate will run it (a module of its own): the names its
        # statement reads (defaults, bases, class-body code) and its code reads as globals
        names = global_names(compile(source, "<%s>" % label, "exec")) - _IMPLICIT - {obj.__name__}
        if isinstance(obj, type):
            module = sys.modules.get(obj.__module__)
            scope = vars(module) if module is not None else {}
        else:
            scope = obj.__globals__
        for name in sorted(names):
            if name in imports or name == obj.__name__:
                continue
            if name not in scope:
                if hasattr(builtins, name):
                    continue
                raise ProbeError("%s uses %r, which is not defined where it is written" % (label, name))
            value = scope[name]
            _classify(name, value, label, visit, imports)
        defs.append([obj.__name__, source])

    visit(fn, what)
    return {"defs": defs, "imports": imports}


def _classify(name, value, label, visit, imports):
    from .oracle import Probe  # a probe used by a probe travels as its function

    if isinstance(value, Probe):
        visit(value.function, "probe %s" % value.function.__name__)
        return
    if isinstance(value, types.ModuleType):
        imports[name] = [value.__name__, None]
        return
    if isinstance(value, (types.FunctionType, type)) and is_helper(value):
        visit(value, "helper %s" % value.__name__)
        return
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None)
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type)) and module and qualname and "<locals>" not in qualname:
        if _importable(value, module, qualname):
            imports[name] = [module, qualname]
            return
        raise ProbeError(
            "%s uses %r, a %s defined in the test files: mark it @probe_helper so its source goes to the candidate, "
            "or pass what it computes as an argument" % (label, name, "class" if isinstance(value, type) else "function")
        )
    raise ProbeError(
        "%s uses the global %r (a %s): a probe gets data only as arguments (so that nothing but what it is given "
        "reaches the candidate); pass it as an argument" % (label, name, type(value).__name__)
    )


def _importable(value, module, qualname):
    """Whether `module.qualname` names `value` in a module that is not a test file's."""
    mod = sys.modules.get(module)
    if mod is None or module == "__main__":
        return False
    f = getattr(mod, "__file__", "") or ""
    if getattr(mod, "__lmr_test_module__", False) or f.rsplit("/", 1)[-1].startswith("test_") or module.rpartition(".")[2].startswith("test_"):
        return False
    obj = mod
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return obj is value
