"""Where the transforms keep what they made: on the transformed object itself.

`dt.grad(f)` returns the same object on every call with the same options, and its compiled
specializations with it, so repeated calls are a dict lookup. The cache is a dict in
`f.__dict__`, so it lives exactly as long as `f`: a process that transforms many functions
(benchmarks/check_programs.py) frees each one's generated code with the function. A
module-level dict keyed by the function kept every function and its code forever (a long
run grew to 1.8 GB).
"""

import dis
import sys
import types

import numpy as np

ATTRIBUTE = "__dualtape_transforms__"
ABSENT = object()  # what Guard captured for a name its module lacks, a cell not yet bound


class _Store(dict):
    """One object's cache; `owner` tells it apart from a copy that functools.wraps made (wraps
    copies the wrapped function's __dict__ into the wrapper, and so this store)."""

    __slots__ = ("owner",)

    def __reduce__(self):  # pickling the function (cloudpickle, by value) carries an empty cache
        return (_Store, ())


def cache_on(owner):
    """The cache dict kept on `owner` (a function, or any object with a __dict__), made on first
    use; a fresh, unkept dict for an object without a __dict__ (the transform refuses it anyway)."""
    attributes = getattr(owner, "__dict__", None)
    if not isinstance(attributes, dict):
        return {}
    store = attributes.get(ATTRIBUTE)
    if store is None or getattr(store, "owner", None) is not owner:
        store = attributes[ATTRIBUTE] = _Store()
        store.owner = owner
    return store


class Guard:
    """The module globals (and closure cells) that generated code was made from, checked at
    call time: `holds()` is False once one of them is rebound (`module.G = 1.62`), and the
    owner then drops what it compiled (the generated code runs in a copy of the user's
    globals, and the transformer folds some of them while generating: a global's kind,
    the function a called name is, so rebinding one would give the old value, or a mix of the two).

    The check is one generated function comparing each captured value by identity (a few
    tens of ns per call; benchmarks/wl_globals.py measures it)."""

    __slots__ = ("_globals", "_cells", "_contents", "holds")

    def __init__(self, contents=False):
        """`contents`: also check that each NumPy array captured holds what it held (numba
        freezes a global array into the compiled code: a write into it in place went unseen);
        this costs a copy of the array's bytes per call."""
        self._globals = {}  # id(globals dict) -> (the dict, {name: value})
        self._cells = {}  # id(cell) -> (the cell, its value)
        self._contents = contents
        self.holds = _always

    def watch(self, functions):
        """Capture the globals each of `functions` reads and its closure cells; generated
        functions stand for the user functions they were made from. A name read as a global
        that the module lacks (`G` defined only later, or a builtin such as `len` that a module
        global may shadow) is watched as absent, and a closure cell not yet bound as unbound:
        defining either later is seen as a rebinding (else a stale NameError)."""
        before = (sum(len(v) for _, v in self._globals.values()), len(self._cells))
        for fn in user_functions(functions):
            read, as_globals, as_attributes = _names(fn.__code__)
            values = self._capture(fn.__globals__, read, as_globals)
            for cell in fn.__closure__ or ():
                try:
                    value = cell.cell_contents
                except ValueError:  # (not yet bound)
                    self._cells.setdefault(id(cell), (cell, ABSENT))
                    continue
                self._cells.setdefault(id(cell), (cell, value))
                values.append(value)
            for module in {id(v): v for v in values if _user_module(v)}.values():  # `other.K`: the
                self._capture(vars(module), read, as_attributes)  # attribute names are among the names fn reads
        if (sum(len(v) for _, v in self._globals.values()), len(self._cells)) != before:
            self.holds = self._compile()

    def _capture(self, namespace, read, absent):
        """Watch the names of `read` that `namespace` holds, and those of `absent` that it lacks;
        the values of the names it holds."""
        names = self._globals.setdefault(id(namespace), (namespace, {}))[1]
        for name in read:
            if name in namespace:
                names.setdefault(name, namespace[name])
        for name in absent:
            if name not in namespace:
                names.setdefault(name, ABSENT)
        return [namespace[name] for name in read if name in namespace]

    def _compile(self):
        terms, defaults = [], {}
        for i, (namespace, names) in enumerate(self._globals.values()):
            defaults[f"d{i}"] = namespace
            for j, (name, value) in enumerate(names.items()):
                if value is ABSENT:
                    terms.append(f"{name!r} not in d{i}")
                    continue
                defaults[f"v{i}_{j}"] = value
                terms.append(f"d{i}[{name!r}] is v{i}_{j}")
                if self._contents and isinstance(value, np.ndarray):
                    defaults[f"b{i}_{j}"] = value.tobytes()
                    terms.append(f"v{i}_{j}.tobytes() == b{i}_{j}")
        for i, (cell, value) in enumerate(self._cells.values()):
            if value is ABSENT:
                defaults[f"c{i}"], defaults["unbound"] = cell, _unbound
                terms.append(f"unbound(c{i})")
                continue
            defaults[f"c{i}"], defaults[f"w{i}"] = cell, value
            terms.append(f"c{i}.cell_contents is w{i}")
            if self._contents and isinstance(value, np.ndarray):
                defaults[f"cb{i}"] = value.tobytes()
                terms.append(f"w{i}.tobytes() == cb{i}")
        if not terms:
            return _always
        source = (f"def holds({', '.join(f'{k}={k}' for k in defaults)}):\n    try:\n"
                  f"        return {' and '.join(terms)}\n    except (KeyError, ValueError):\n        return False\n")
        namespace = dict(defaults)
        exec(compile(source, "<dualtape globals guard>", "exec"), namespace)
        return namespace["holds"]


_LIBRARIES = {"numpy", "scipy", "numba", "dualtape"}


def _user_module(value):
    """A module of the user's (not the standard library's or an installed package's), whose
    attributes generated code may read (`other.K`; numba freezes them at compile time)."""
    if not isinstance(value, types.ModuleType):
        return False
    top = (value.__name__ or "").partition(".")[0]
    origin = getattr(getattr(value, "__spec__", None), "origin", None) or ""
    return (top not in _LIBRARIES and top not in sys.stdlib_module_names and origin not in ("built-in", "frozen")
            and "site-packages" not in origin and "dist-packages" not in origin)


def _always():
    return True


def _unbound(cell):
    try:
        cell.cell_contents
    except ValueError:
        return True
    return False


def user_functions(functions):
    """`functions`, each generated one replaced by the user functions it was made from (hvp
    reads grad's compiled adjoint back)."""
    seen = []
    for fn in functions:
        made_from = getattr(fn, "__dualtape_user_functions__", None)
        for f in (made_from if made_from is not None else (fn,)):
            if f not in seen:
                seen.append(f)
    return tuple(seen)


def _names(code):
    """(every name, the names read as globals, the names read as attributes) of a code object
    and the code nested in it (comprehensions, lambdas)."""
    every, as_globals, as_attributes = set(code.co_names), set(), set()
    for instruction in dis.get_instructions(code):
        if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            as_globals.add(instruction.argval)
        elif instruction.opname in ("LOAD_ATTR", "LOAD_METHOD"):
            as_attributes.add(instruction.argval)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            for mine, theirs in zip((every, as_globals, as_attributes), _names(const)):
                mine |= theirs
    return every, as_globals, as_attributes
