"""Deterministic names for generated code: adjoints `bx`, versions `x_1`, temporaries `_cond1`.

A name already used in the user's function gets a numeric suffix (`bx_2`); nothing is
random, so golden tests of the emitted source are stable. Names generated code reads
without a Namer (`_stack`, the runtime helpers, `np`, `len`) are taken from the user's
locals first (`rename_reserved`), so every generated name is fresh.
"""

import ast

from . import syntax
from .. import runtime
from .syntax import nodes as n
from ..runtime.names import RUNTIME_NAMES as RUNTIME_HELPERS


class Namer:
    def __init__(self, taken):
        self.taken = set(taken)
        self._adjoints = {}
        self._counts = {}

    def fresh(self, base):
        """`base1`, `base2`, ... for numbered temporaries (`_cond1`), else `base` if free."""
        if base.endswith(("_cond", "_range", "_count", "_i", "_b")):
            k = self._counts.get(base, 0)
            while True:
                k += 1
                name = f"{base}{k}"
                if name not in self.taken:
                    self._counts[base] = k
                    self.taken.add(name)
                    return name
        return self.unique(base)

    def unique(self, base):
        name = unused_name(base, self.taken)
        self.taken.add(name)
        return name

    def adjoint(self, var):
        """The adjoint of `var`: `b` + var, suffixed if the user already uses that name."""
        if var not in self._adjoints:
            self._adjoints[var] = self.unique("b" + var)
        return self._adjoints[var]

    def version(self, var):
        """A fresh name for one more value of `var` inside a recomputed loop body."""
        k = self._counts.get(("v", var), 0)
        while True:
            k += 1
            name = f"{var}_{k}"
            if name not in self.taken:
                self._counts[("v", var)] = k
                self.taken.add(name)
                return name


# builtins that generated code calls (loop headers, iteration over sequences, index spelling)
_GENERATED_BUILTINS = {"reversed", "range", "len", "min", "max", "list", "tuple", "slice", "zip", "enumerate",
                       "float", "int", "isinstance", "abs", "sum"}


# locals generated code binds without a Namer (forward mode's batch size `_k`, the stacks): a
# name the front end makes for the user's code (`_k` for a comprehension's `k`) must differ
GENERATED_LOCALS = frozenset({"_k", "_stack", "_dstack"})


def _reserved():
    # what generated code reads without asking a Namer: the runtime helpers, the modules, the
    # stacks of saved values, and the builtins it calls
    return set(RUNTIME_HELPERS) | {"_stack", "_dstack", "np", "math", "dnp"} | _GENERATED_BUILTINS


def shadowed_helper(functions, params):
    """A parameter named like a runtime helper that the generated functions (trees) call, or
    None (a parameter `step` is fine until the adjoint needs the helper `step(...)`)."""
    suspects = sorted(set(params) & set(RUNTIME_HELPERS))
    if not suspects:
        return None
    called = {x.func.id for fn in functions for x in syntax.walk(fn)
              if isinstance(x, ast.Call) and isinstance(x.func, ast.Name)}
    return next((name for name in suspects if name in called), None)


def all_names(node):
    """Every identifier `node` mentions: names, parameters, attributes."""
    out = set()
    for x in syntax.walk(node):
        if isinstance(x, n.Name):  # parameters are Names too in gast
            out.add(x.id)
        elif isinstance(x, n.Attribute):
            out.add(x.attr)
    return out


def reserved_names():
    """The names generated code reads (`_stack`, the runtime helpers, `np`, builtins it calls):
    a name the transformer makes for the user's code must not be one of them."""
    return set(_reserved())


def rename_reserved(fn_node, params, fail):
    """Rename the user's local variables named like what generated code reads (`_stack`,
    `unbroadcast`, `np`, `len`, ...): `_stack = x * 2` would otherwise replace the stack of saved
    values and silently corrupt the adjoint. The function computes the same with `_stack_1`.
    A parameter cannot be renamed (callers pass it by name): `fail(name)` makes the refusal."""
    reserved = _reserved()
    stored = {x.id for x in syntax.walk(fn_node) if isinstance(x, n.Name) and isinstance(x.ctx, n.Store)}
    always = reserved - set(RUNTIME_HELPERS)
    for name in params:
        if name in always:
            raise fail(name)
    clash = sorted((stored - set(params)) & reserved)
    if not clash:
        return {}
    return _rename(fn_node, clash, all_names(fn_node) | reserved)


def alias_shadowed_globals(fn_node, local_names, namespace):
    """Rename the globals and closure variables the function reads that are named like a runtime
    helper (a user's `step(y, h)` or constant `rows`): the generated module imports the helper
    under that name, so the user's object is reached as `step_1` instead. Returns {alias: object}
    for the namespace the generated code runs in."""
    clash = {x.id for x in syntax.walk(fn_node) if isinstance(x, n.Name) and isinstance(x.ctx, n.Load)
             and x.id not in local_names and x.id in RUNTIME_HELPERS and x.id in namespace
             and namespace[x.id] is not getattr(runtime, x.id, None)}  # (the user's `np` is NumPy)
    if not clash:
        return {}
    mapping = _rename(fn_node, sorted(clash), all_names(fn_node) | set(namespace) | _reserved())
    return {new: namespace[old] for old, new in mapping.items()}


def alias_foreign_globals(fn_node, local_names, namespace, shared):
    """Rename the globals and closure variables the function reads that the shared namespace
    of the generated module holds under the same name with another object: a helper from
    another module reading its own `K` while the transformed function's module has a `K` of
    its own (the helper's adjoint would read the caller's, a wrong number). Returns
    {alias: object}, added to `shared` by the caller."""
    clash = {x.id for x in syntax.walk(fn_node) if isinstance(x, n.Name) and isinstance(x.ctx, n.Load)
             and x.id not in local_names and x.id in namespace and shared.get(x.id, namespace[x.id]) is not
             namespace[x.id]}
    if not clash:
        return {}
    mapping = _rename(fn_node, sorted(clash), all_names(fn_node) | set(namespace) | set(shared) | _reserved())
    return {new: namespace[old] for old, new in mapping.items()}


def _rename(fn_node, names, used):
    """Rename each of `names` in `fn_node` to `name_1` (`name_2`, ... past those in `used`);
    returns {old: new}."""
    mapping = {}
    for name in names:
        k, new = 1, f"{name}_1"
        while new in used:
            k += 1
            new = f"{name}_{k}"
        used.add(new)
        mapping[name] = new
    for x in syntax.walk(fn_node):
        if isinstance(x, n.Name) and x.id in mapping:
            x.id = mapping[x.id]
    return mapping


def _code_names(code):
    """Every name a code object and the code nested in it (lambdas, comprehensions) mention."""
    out = set(code.co_names) | set(code.co_varnames) | set(code.co_freevars) | set(code.co_cellvars)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            out |= _code_names(const)
    return out


def identifier(name):
    """`name` as a Python identifier: a lambda's `<lambda>_vjp` is `lambda_vjp`."""
    return "".join(c for c in name if c.isalnum() or c == "_")


def fresh_function_name(base, fn, taken=()):
    """`base` (`f_vjp`), or `base_2`, ... when the user's function `fn` could see it: a global or
    closure variable of fn's, or a name fn mentions. The generated module runs in a copy of fn's
    globals, so a user's own `f_vjp` would otherwise be replaced by the generated function, or
    (in .save) clobber it; helper names are made fresh the same way (Module.unique)."""
    used = set(fn.__globals__) | set(fn.__code__.co_freevars) | _code_names(fn.__code__) | _reserved() | set(taken)
    return unused_name(identifier(base), used)


def unused_name(base, taken):
    """`base`, or `base_2`, `base_3`, ... : the first that is not in `taken`."""
    name, k = base, 1
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    return name
