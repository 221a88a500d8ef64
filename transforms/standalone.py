"""Saving generated code: `module_source` writes a self-contained module (imports, the
constants and helpers the code reads, the functions), which `Derivative.save` stores.

The module imports only NumPy and `math`: the runtime helpers the code calls (`unbroadcast`,
`zeros_like`, ...) are copied in from their one definition (runtime.py and the rulekit),
with the helpers and constants they read in turn. In a saved module every value is a NumPy
array or a Python number, so what the helpers read of dualtape itself is written as NumPy:
`dnp.X` is NumPy's `np.X` where NumPy has that name (dnp's contract on plain arrays), else
the NumPy implementation of the registry op; a registry op is its NumPy implementation;
the traced-value class is the empty tuple of classes (`isinstance(x, ())` is False)."""

import builtins
import inspect
import re
import textwrap
import types

import numpy as np

from dualtape.core import dnp
from dualtape.core.registry import Primitive
from dualtape.core.traced import Traced

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


def _shim_pending(shims, texts, todo):
    """Write each shimmed module's class with every attribute the copied code reads of it, and
    queue what newly read attributes name; True when something was queued."""
    queued = False
    for name, shim in shims.items():
        module, attrs, _ = shim
        used = set()
        for parsed, namespace in texts:
            if namespace.get(name) is module:
                used |= _attributes_of(parsed, name)
        if used - attrs or shim[2] is None:
            before = len(todo)
            _helper_module(name, module, used - attrs, todo)
            shim[1], shim[2] = used, _helper_module(name, module, used, [])
            queued = queued or len(todo) > before
    return queued


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


def _numpy_source(value):
    """`np.<path>` for a NumPy module, function, class or ufunc method, else None."""
    if value is np:
        return "np"
    name = getattr(value, "__name__", None)
    for prefix, space in (("np", np), ("np.linalg", np.linalg)):
        if isinstance(name, str) and getattr(space, name, None) is value:
            return f"{prefix}.{name}"
    owner = getattr(value, "__self__", None)
    if isinstance(owner, np.ufunc) and getattr(np, owner.__name__, None) is owner:
        return f"np.{owner.__name__}.{name}"
    return None


def _attributes_of(tree, name):
    """The attributes `tree` reads of the name `name` (`dnp.where` -> 'where')."""
    return {x.attr for x in _gast.walk(tree) if isinstance(x, n.Attribute) and isinstance(x.value, n.Name)
            and x.value.id == name}


def _helper_module(name, module, attrs, todo):
    """A dualtape module a helper reads (`dnp`, `_rulekit`) as a class of the attributes it uses;
    what they name is queued to be written at module level."""
    lines = [f"class {name}:", f'    """What the helpers read of {module.__name__}, as NumPy code."""']
    for attr in sorted(attrs):
        twin = getattr(np, attr, None)
        if module is dnp and callable(twin):  # dnp on plain arrays is NumPy (dnp's contract)
            lines.append(f"    {attr} = staticmethod(np.{attr})")
            continue
        if not hasattr(module, attr):
            raise TransformError(f"[save] a helper reads {name}.{attr}, which {module.__name__} does not define.")
        value = getattr(module, attr)
        todo.append((attr, {attr: value}, f"{module.__name__}.{attr}", True))
        wrap = callable(value) and not isinstance(value, type)
        lines.append(f"    {attr} = staticmethod({attr})" if wrap else f"    {attr} = {attr}")
    return "\n".join(lines) + "\n"


def module_source(module, header_doc):
    """A self-contained module: imports, the constants and helpers the code reads, the functions.

    User functions are copied verbatim, so the globals they read are written too (constants,
    modules, further functions), looked up in each function's own globals (issue 9: a saved
    module raised NameError where a helper read a constant the generated code does not)."""
    source = module.source()
    tree = _gast.parse(source)
    lines = [f'"""{header_doc}"""', "", "import math", "", "import numpy as np", ""]
    imports, consts, funcs = [], [], []
    written = {}  # name -> the value written under it
    shims = {}  # name -> [dualtape module, attributes read, its class source]
    texts = [(tree, RUNTIME_NAMES)]  # (parsed source, its namespace): where shimmed modules' attributes are read
    # (name, namespace, who reads it, a runtime helper reads it): the generated code first, then
    # each copied function
    todo = [(name, RUNTIME_NAMES, "dualtape.transforms.runtime", True) if name in RUNTIME_NAMES
            else (name, module.namespace, None, False) for name in sorted(_free_names(tree))]
    while todo or _shim_pending(shims, texts, todo):
        name, namespace, reader, helper = todo.pop(0)
        if name not in namespace:
            if reader is None:
                raise TransformError(f"[save] the generated code reads `{name}`, which is not defined.\n  "
                                     "Define it at module level in the differentiated function's module.")
            raise TransformError(f"[save] the function `{reader}` reads `{name}`, which is not defined.\n  "
                                 f"Define `{name}` at module level in {reader}'s module, or pass it as an argument.")
        value = namespace[name]
        if name in ("np", "math") and value is {"np": np, "math": __import__("math")}[name]:
            continue
        if helper and isinstance(value, Primitive):  # a registry op: its NumPy implementation
            value = value.impl
        if name in written:
            if written[name] is not value and not (_constant_source(value) is not None
                                                    and _constant_source(value) == _constant_source(written[name])):
                raise TransformError(f"[save] `{name}` names two different values in the saved module (one read "
                                     f"by {reader or 'the generated code'}).\n  Rename one of them in its module.")
            continue
        if reader is not None and not helper and name in RUNTIME_NAMES:
            raise TransformError(f"[save] the function `{reader}` reads the global `{name}`, named like a helper "
                                 f"the generated code imports.\n  Rename the global `{name}` in {reader}'s module.")
        written[name] = value
        constant = _constant_source(value)
        if helper and constant is None and isinstance(value, list):  # a helper's state, e.g. BATCH_NDIM = [0]
            constant = _constant_source(tuple(value))
            constant = None if constant is None else f"[{constant[1:-1].rstrip(',')}]"
        if helper and _numpy_source(value) is not None:
            consts.append(f"{name} = {_numpy_source(value)}")
        elif helper and value is Traced:
            consts.append(f"{name} = ()  # no tensors or dual numbers here: isinstance(x, {name}) is False")
        elif helper and isinstance(value, types.ModuleType) and value.__name__.startswith("dualtape."):
            shims[name] = [value, set(), None]
        elif isinstance(value, types.ModuleType):
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
            parsed = _gast.parse(text)
            texts.append((parsed, inner))
            todo.extend((x, inner, name, helper) for x in sorted(_free_names(parsed)))
        elif helper:
            raise TransformError(f"[save] the helper `{reader}` reads `{name}` ({type(value).__name__}), which "
                                 "cannot be written as NumPy code.\n  Keep the runtime helpers to NumPy and math "
                                 "(see transforms/standalone.py).")
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
    lines += imports
    classes = [shim[2] + "\n" for shim in shims.values()]
    out = lines + [""] + consts + [""] + [f.rstrip() + "\n\n" for f in funcs] + classes + [source]
    return "\n".join(out).replace("\n\n\n\n\n", "\n\n\n")
