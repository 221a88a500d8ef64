"""Saving generated code: `module_source` writes a self-contained module (imports, the
constants and helpers the code reads, the functions), which `Derivative.save` stores."""

import builtins
import inspect
import re
import textwrap
import types

import numpy as np

from . import _gast, runtime
from ._gast import nodes as n
from .parse import TransformError

# What generated code may read from dualtape.transforms.runtime (emit.py compiles with them).
RUNTIME_NAMES = {k: v for k, v in vars(runtime).items() if not k.startswith("_")}


def _free_names(tree):
    """Names `tree` reads that none of its functions binds (parameters, assignments) or defines."""
    defined = {x.name for x in _gast.walk(tree) if isinstance(x, n.FunctionDef)}
    local = set()
    for node in _gast.walk(tree):
        if isinstance(node, n.FunctionDef):
            local |= {a.id for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs}
            local |= {a.id for a in (node.args.vararg, node.args.kwarg) if a is not None}
        if isinstance(node, n.Name) and isinstance(node.ctx, n.Store):
            local.add(node.id)
    return ({x.id for x in _gast.walk(tree) if isinstance(x, n.Name) and isinstance(x.ctx, n.Load)}
            - defined - local - set(dir(builtins)))


def _constant_source(value):
    """Source that rebuilds a module-level constant (a number, string, tuple of them, NumPy
    array of numbers), or None."""
    if isinstance(value, (bool, int, float, complex, str, type(None))):
        return repr(value)
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return f"np.{value.dtype.name}({value.item()!r})"
    if isinstance(value, tuple):
        items = [_constant_source(v) for v in value]
        if any(v is None for v in items):
            return None
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return f"np.array({value.tolist()!r}, dtype=np.{value.dtype.name})"
    return None


def _function_globals(fn):
    """What a user function's free names resolve to: its closure variables, then its globals."""
    out = dict(fn.__globals__)
    if fn.__closure__:
        for var, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                out[var] = cell.cell_contents
            except ValueError:
                pass
    return out


def module_source(module, header_doc):
    """A self-contained module: imports, the constants and helpers the code reads, the functions.

    User functions are copied verbatim, so the globals they read are written too (constants,
    modules, further functions), looked up in each function's own globals (issue 9: a saved
    module raised NameError where a helper read a constant the generated code does not)."""
    source = module.source()
    tree = _gast.parse(source)
    lines = [f'"""{header_doc}"""', "", "import math", "", "import numpy as np", ""]
    imports, consts, funcs = [], [], []
    runtime_used = set()
    written = {}  # name -> the value written under it
    # (name, namespace, who reads it): the generated code first, then each copied function
    todo = [(name, module.namespace, None) for name in sorted(_free_names(tree))]
    while todo:
        name, namespace, reader = todo.pop(0)
        if reader is None and name in RUNTIME_NAMES and name not in ("np", "math"):
            runtime_used.add(name)
            continue
        if name not in namespace:
            if reader is None:
                raise TransformError(f"[save] the generated code reads `{name}`, which is not defined.\n  "
                                     "Define it at module level in the differentiated function's module.")
            raise TransformError(f"[save] the function `{reader}` reads `{name}`, which is not defined.\n  "
                                 f"Define `{name}` at module level in {reader}'s module, or pass it as an argument.")
        value = namespace[name]
        if name in ("np", "math") and value is {"np": np, "math": __import__("math")}[name]:
            continue
        if name in written:
            if written[name] is not value and not (_constant_source(value) is not None
                                                    and _constant_source(value) == _constant_source(written[name])):
                raise TransformError(f"[save] `{name}` names two different values in the saved module (one read "
                                     f"by {reader or 'the generated code'}).\n  Rename one of them in its module.")
            continue
        if reader is not None and name in RUNTIME_NAMES:
            raise TransformError(f"[save] the function `{reader}` reads the global `{name}`, named like a helper "
                                 f"the generated code imports.\n  Rename the global `{name}` in {reader}'s module.")
        written[name] = value
        constant = _constant_source(value)
        if isinstance(value, types.ModuleType):
            imports.append(f"import {value.__name__} as {name}" if value.__name__ != name else f"import {name}")
        elif constant is not None:
            consts.append(f"{name} = {constant}")
        elif inspect.isfunction(value):
            text = textwrap.dedent(inspect.getsource(value))
            if value.__name__ != name:  # a user function read under an alias (see alias_shadowed_globals)
                text = re.sub(rf"^def {value.__name__}\(", f"def {name}(", text, count=1, flags=re.M)
            funcs.append(text)
            # the copy reads its own globals: write those too (constants, modules, functions)
            inner = _function_globals(value)
            todo.extend((x, inner, name) for x in sorted(_free_names(_gast.parse(text))))
        elif hasattr(value, "__module__") and hasattr(value, "__name__") and value.__module__:
            imports.append(f"from {value.__module__} import {value.__name__} as {name}")
        elif reader is not None:
            raise TransformError(f"[save] the function `{reader}` reads the global `{name}` "
                                 f"({type(value).__name__}), which cannot be written into a module.\n  Make "
                                 f"`{name}` a number, a tuple of numbers or a NumPy array, or pass it to "
                                 f"{reader} as an argument.")
        else:
            raise TransformError(f"[save] cannot write the value of `{name}` ({type(value).__name__}) into a "
                                 "module.\n  Pass it as an argument, or make it a number, string or array.")
    if runtime_used:
        lines.append(f"from dualtape.transforms.runtime import {', '.join(sorted(runtime_used))}")
    lines += imports
    out = lines + [""] + consts + [""] + [f.rstrip() + "\n\n" for f in funcs] + [source]
    return "\n".join(out).replace("\n\n\n\n\n", "\n\n\n")
