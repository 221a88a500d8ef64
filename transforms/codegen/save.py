"""Saving generated code: `module_source` writes a self-contained module (imports, the
constants and helpers the code reads, the functions), which `Derivative.save` stores.

The module imports only NumPy and `math`: the runtime helpers the code calls (`unbroadcast`,
`zeros_like`, ...) are copied in from their one definition (runtime.py and the rulekit),
with the helpers and constants they read in turn. In a saved module every value is a NumPy
array or a Python number, so what the helpers read of dualtape itself is written as NumPy:
`dnp.X` is NumPy's `np.X` where NumPy has that name (dnp's contract on plain arrays), else
the NumPy implementation of the registry op; a registry op is its NumPy implementation;
the traced-value class is the empty tuple of classes (`isinstance(x, ())` is False).

The generated functions come as trees (codegen/emit.py) and are rendered once; what they and
the copies read is found on trees (a copied function's as the front end reads its source).
The copies themselves are the functions' own source, verbatim; renaming one renames its
identifiers' tokens (and its tree alike), so its text stays as written."""

import ast
import builtins
import functools
import inspect
import io
import sys
import textwrap
import tokenize
import types

import numpy as np

from dualtape.core import dnp
from dualtape.core.registry import Primitive
from dualtape.core.traced import Traced

from ..ir import syntax
from ..ir.code import Rename
from ..frontend.function_values import lifted_tree
from ..frontend.parse import TransformError, lambda_source, source_tree
from ..runtime.names import RUNTIME_HELPERS as RUNTIME_NAMES


def _free_names(tree):
    """Names `tree` reads that none of its functions binds (parameters, assignments) or defines."""
    defined = {x.name for x in syntax.walk(tree) if isinstance(x, (ast.FunctionDef, ast.ClassDef))}
    local = set()
    for node in syntax.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):  # `import string` inside a helper binds `string`
            local |= {a.asname or a.name.split(".")[0] for a in node.names}
        if isinstance(node, ast.FunctionDef):
            local |= {a.arg for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs}
            local |= {a.arg for a in (node.args.vararg, node.args.kwarg) if a is not None}
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            local.add(node.id)
        if isinstance(node, ast.ExceptHandler) and node.name:
            local.add(node.name)
    return ({x.id for x in syntax.walk(tree) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load)}
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


def _shim_pending(shims, trees, todo):
    """Write each shimmed module's class with every attribute the copied code reads of it, and
    queue what newly read attributes name; True when something was queued."""
    queued = False
    for name, shim in shims.items():
        module, attrs, _ = shim
        used = set()
        for parsed, namespace in trees:
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


def _stdlib(value):
    """`import x` / `from x import y` for a standard-library module or object, else None."""
    if isinstance(value, types.ModuleType):
        return f"import {value.__name__}" if value.__name__.split(".")[0] in sys.stdlib_module_names else None
    module = getattr(value, "__module__", None)
    if (isinstance(module, str) and module.split(".")[0] in sys.stdlib_module_names
            and getattr(sys.modules.get(module), getattr(value, "__name__", ""), None) is value):
        return f"from {module} import {value.__name__}"
    return None


def _third_party_source(value):
    """`from pkg.mod import name` for a function or ufunc of another installed package (SciPy's
    special functions, which registry ops wrap), else None: a saved module that uses such an op
    needs that package, as the user's own code did."""
    name = getattr(value, "__name__", None)
    if not isinstance(name, str):
        return None
    for module_name in sorted(sys.modules, key=lambda m: (m.count("."), m)):
        if module_name.startswith("dualtape") or any(part.startswith("_") for part in module_name.split(".")):
            continue
        module = sys.modules[module_name]
        if module is not None and getattr(module, name, None) is value:
            return f"from {module_name} import {name}"
    return None


def _installed(fn):
    """`from pkg.mod import name` for a function of an installed package (its module file under
    site-packages or dist-packages, not the user's own code): the shallowest public module of
    its package that holds it (scipy.integrate for odeint), else None."""
    module = fn.__module__ or ""
    path = getattr(sys.modules.get(module), "__file__", None) or ""
    if module.startswith("dualtape") or not {"site-packages", "dist-packages"} & set(path.replace("\\", "/").split("/")):
        return None
    for name in _public_modules(module.split(".")[0]):
        if getattr(sys.modules.get(name), fn.__name__, None) is fn:
            return f"from {name} import {fn.__name__}"
    return None


def _public_modules(package):
    """The imported modules of `package` with no private part in their names, shallowest first."""
    return sorted((m for m in list(sys.modules) if m.split(".")[0] == package
                   and not any(part.startswith("_") for part in m.split("."))), key=lambda m: (m.count("."), m))


def _importable_object(value, name):
    """`from pkg.mod import attr [as name]` for an object (not a class or function: a
    scipy.stats distribution, `norm`) that a public module of its class's package holds, else
    None; the module the user imported it from (the shallowest one) is preferred."""
    package = (getattr(type(value), "__module__", None) or "").split(".")[0]
    if not package or package in ("builtins", "__main__", "dualtape") or package in sys.stdlib_module_names:
        return None
    modules = _public_modules(package)
    for attr_first in (True, False):  # the user's own name first, then any name the module gives it
        for module_name in modules:
            module = sys.modules.get(module_name)
            if attr_first and getattr(module, name, None) is value:
                return f"from {module_name} import {name}"
            if not attr_first:
                found = next((k for k, v in vars(module).items() if v is value and not k.startswith("_")), None)
                if found:
                    return f"from {module_name} import {found}" + ("" if found == name else f" as {name}")
    return None


def _attributes_of(tree, name):
    """The attributes `tree` reads of the name `name` (`dnp.where` -> 'where')."""
    return {x.attr for x in syntax.walk(tree) if isinstance(x, ast.Attribute) and isinstance(x.value, ast.Name)
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
    modules, further functions), looked up in each function's own globals: a helper may read
    a constant the generated code does not. Runtime helpers are copied from their one
    definition, as NumPy code (see the module's doc)."""
    source = module.source()
    tree = ast.Module(body=list(module.functions), type_ignores=[])
    saved = _Saved()
    saved.trees.append((tree, RUNTIME_NAMES))
    # (name, namespace, who reads it, a runtime helper reads it): the generated code first, then
    # each copied function
    saved.todo = [(name, RUNTIME_NAMES, "dualtape.transforms.runtime", True) if name in RUNTIME_NAMES
                  else (name, module.namespace, None, False) for name in sorted(_free_names(tree))]
    while saved.todo or _shim_pending(saved.shims, saved.trees, saved.todo):
        saved.write(*saved.todo.pop(0))
    lines = [f'"""{header_doc}"""', "", "import math", "", "import numpy as np", ""] + saved.imports
    classes = [text for name, text in reversed(saved.copies.items()) if name in saved.classes]
    funcs = [text for name, text in saved.copies.items() if name not in saved.classes]
    shim_classes = [shim[2] + "\n" for shim in saved.shims.values()] + [t + "\n\n" for t in saved.tables]
    out = (lines + [""] + saved.consts + [""] + [f.rstrip() + "\n\n" for f in classes + funcs] + shim_classes
           + [source])
    return "\n".join(out).replace("\n\n\n\n\n", "\n\n\n")


def renamed(text, old, new, definition=False):
    """The copied source `text` with the identifier `old` written `new`: everywhere but as an
    attribute (`x.old` stays), or (definition=True) only where its first `def` names it.
    Strings and comments stay as written."""
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    starts = []
    for before, token in zip([None] + tokens, tokens):
        if token.type != tokenize.NAME or token.string != old:
            continue
        if definition and before is not None and before.string == "def":
            starts.append(token.start)
            break
        if not definition and not (before is not None and before.type == tokenize.OP and before.string == "."):
            starts.append(token.start)
    lines = text.splitlines(True)
    for row, col in reversed(starts):
        lines[row - 1] = lines[row - 1][:col] + new + lines[row - 1][col + len(old):]
    return "".join(lines)


@functools.lru_cache(maxsize=None)
def dualtape_source(value):
    """(source text, ast tree) of one of dualtape's own functions or classes (runtime helpers,
    rule helpers), which do not change while the process runs: every saved module copies them."""
    return textwrap.dedent(inspect.getsource(value)), syntax.to_ast(source_tree(value))


class _Saved:
    """What module_source has written so far, and what is left to write."""

    def __init__(self):
        self.imports, self.consts, self.todo, self.trees = [], [], [], []
        self.copies = {}  # name -> the copied source of a function or class (in the order found)
        self.classes = set()  # the names in `copies` that are classes
        self.written = {}  # name -> the value written under it
        self.shims = {}  # name -> [dualtape module, attributes read, its class source]
        self.tables = []  # dicts of helper functions, written after the functions

    def _copy(self, name, value, namespace, helper):
        """Copy a function's or class's source under `name`, and queue the globals it reads."""
        if getattr(value, "__name__", None) == "<lambda>":  # written as `def name(args): return body`
            tree = syntax.to_ast(lambda_source(value, inspect.getsourcefile(value), "save")[1])
            tree.body[0].name = name
            text = ast.unparse(tree) + "\n"
        elif lifted_tree(value) is not None:  # a nested function or lambda, lifted (frontend/functions.py)
            tree = syntax.to_ast(source_tree(value))
            text = ast.unparse(tree) + "\n"
        elif helper and (getattr(value, "__module__", None) or "").startswith("dualtape."):
            text, tree = dualtape_source(value)  # (read once: every saved module copies them)
            tree = syntax.copy(tree)
        else:  # the function's own source, verbatim, and its tree as the front end reads it
            text, tree = textwrap.dedent(inspect.getsource(value)), syntax.to_ast(source_tree(value))
        defined = name if value.__name__ == "<lambda>" else getattr(getattr(value, "__code__", None), "co_name",
                                                                      value.__name__)  # as `def` names it
        if defined != name:
            if helper:  # a helper renamed to keep two helpers of one name apart: its own calls too
                text = renamed(text, defined, name)
                Rename(defined, name).visit(tree)
            else:  # a user function read under an alias (see alias_shadowed_globals)
                text = renamed(text, defined, name, definition=True)
                tree.body[0].name = name
        self.copies[name] = text
        if isinstance(value, type):
            self.classes.add(name)
        self.trees.append((tree, namespace))
        self.todo.extend((x, namespace, name, helper) for x in sorted(_free_names(tree)))

    def _same(self, name, value):
        old = self.written[name]
        return old is value or (_constant_source(value) is not None
                                and _constant_source(value) == _constant_source(old))

    def write(self, name, namespace, reader, helper):
        if name not in namespace:
            if reader is None:
                raise TransformError(f"[save] the generated code reads `{name}`, which is not defined.\n  "
                                     "Define it at module level in the differentiated function's module.")
            raise TransformError(f"[save] the function `{reader}` reads `{name}`, which is not defined.\n  "
                                 f"Define `{name}` at module level in {reader}'s module, or pass it as an argument.")
        value = namespace[name]
        if name in ("np", "math") and value is {"np": np, "math": __import__("math")}[name]:
            return
        if helper and isinstance(value, Primitive):  # a registry op: its NumPy implementation
            value = value.impl
        if name in self.written and not self._same(name, value):
            if not (helper and reader in self.copies):
                raise TransformError(f"[save] `{name}` names two different values in the saved module (one read "
                                     f"by {reader or 'the generated code'}).\n  Rename one of them in its module.")
            # two helpers of one name (runtime's zeros_like and the rulekit's): the reader's is renamed
            other = next((k for k, v in self.written.items() if v is value), None)
            new = other or next(f"{name}_{i}" for i in range(2, 1000) if f"{name}_{i}" not in self.written)
            self.copies[reader] = renamed(self.copies[reader], name, new)
            if other:
                return
            name = new
        elif name in self.written:
            return
        if reader is not None and not helper and name in RUNTIME_NAMES:
            raise TransformError(f"[save] the function `{reader}` reads the global `{name}`, named like a helper "
                                 f"the generated code imports.\n  Rename the global `{name}` in {reader}'s module.")
        self.written[name] = value
        if helper:
            self._write_helper_value(name, value, namespace, reader)
        else:
            self._write_user_value(name, value, reader)

    def _write_helper_value(self, name, value, namespace, reader):
        """A value a runtime helper reads, written as NumPy (or standard library) code."""
        constant = _constant_source(value)
        if constant is None and isinstance(value, list):  # a helper's state, e.g. BATCH_NDIM = [0]
            constant = _constant_source(tuple(value))
            constant = None if constant is None else f"[{constant[1:-1].rstrip(',')}]"
        if _numpy_source(value) is not None:
            self.consts.append(f"{name} = {_numpy_source(value)}")
        elif value is Traced:
            self.consts.append(f"{name} = ()  # no tensors or dual numbers here: isinstance(x, {name}) is False")
        elif isinstance(value, frozenset) and value and all(_numpy_source(v) or _constant_source(v) for v in value):
            # a set of NumPy classes or constants (rulekit's _PLAIN_FLOATS), sorted: the text is deterministic
            items = sorted(_numpy_source(v) or _constant_source(v) for v in value)
            self.consts.append(f"{name} = frozenset(({', '.join(items)},))")
        elif isinstance(value, types.ModuleType) and value.__name__.startswith("dualtape."):
            self.shims[name] = [value, set(), None]
        elif isinstance(value, types.ModuleType) and not value.__name__.startswith("dualtape"):
            # another package's module (scipy.special as `sc`, which the SciPy ops' code reads)
            self.imports.append(f"import {value.__name__}" + ("" if value.__name__ == name else f" as {name}"))
        elif _stdlib(value):  # collections.Counter, dataclasses, ...: they need no install
            short = getattr(value, "__name__", name).split(".")[-1]
            self.imports.append(_stdlib(value) + ("" if short == name else f" as {name}"))
        elif constant is not None:
            self.consts.append(f"{name} = {constant}")
        elif inspect.isfunction(value):
            self._copy(name, value, _function_globals(value), True)
        elif isinstance(value, dict) and all(isinstance(k, (str, int)) and (
                inspect.isfunction(v) or _constant_source(v) is not None) for k, v in value.items()):
            # a helper's table of constants or functions (`_SCORES = {"norm": _norm, ...}`), written
            # after the functions it names (a user's dict global stays refused)
            items = []
            for key, item in value.items():
                if inspect.isfunction(item):
                    self.todo.append((item.__name__, {item.__name__: item}, name, True))
                items.append(f"{key!r}: {item.__name__ if inspect.isfunction(item) else _constant_source(item)}")
            self.tables.append(f"{name} = {{{', '.join(items)}}}")
        elif isinstance(value, type) and value.__module__.startswith("dualtape."):
            self._copy(name, value, dict(vars(sys.modules[value.__module__])), True)
        elif _third_party_source(value):
            self.imports.append(_third_party_source(value) + ("" if value.__name__ == name else f" as {name}"))
        else:
            raise TransformError(f"[save] the helper `{reader}` reads `{name}` ({type(value).__name__}), which "
                                 "cannot be written as NumPy code.\n  Keep the runtime helpers to NumPy and math "
                                 "(see transforms/codegen/save.py).")

    def _write_user_value(self, name, value, reader):
        """A value the generated code or a copied user function reads."""
        constant = _constant_source(value)
        if isinstance(value, types.ModuleType):
            self.imports.append(f"import {value.__name__} as {name}" if value.__name__ != name else f"import {name}")
        elif constant is not None:
            self.consts.append(f"{name} = {constant}")
        elif inspect.isfunction(value) and _installed(value):
            # an installed package's function (scipy.integrate.odeint): imported, as the user's code did
            self.imports.append(_installed(value) + ("" if value.__name__ == name else f" as {name}"))
        elif inspect.isfunction(value):
            # the copy reads its own globals: write those too (constants, modules, functions)
            self._copy(name, value, _function_globals(value), False)
        elif hasattr(value, "__module__") and hasattr(value, "__name__") and value.__module__:
            self.imports.append(f"from {value.__module__} import {value.__name__} as {name}")
        elif _importable_object(value, name):  # `from scipy.stats import norm`: an object a package defines
            self.imports.append(_importable_object(value, name))
        elif reader is not None:
            raise TransformError(f"[save] the function `{reader}` reads the global `{name}` "
                                 f"({type(value).__name__}), which cannot be written into a module.\n  Make "
                                 f"`{name}` a number, a tuple of numbers or a NumPy array, or pass it to "
                                 f"{reader} as an argument.")
        else:
            raise TransformError(f"[save] cannot write the value of `{name}` ({type(value).__name__}) into a "
                                 "module: it is neither a constant nor an object a package's public module "
                                 "holds (as `from scipy.stats import norm`).\n  Pass it as an argument, or make "
                                 "it a number, string or array.")
