"""A call of a user generator function, read as a call of a version that returns the list of
what it yields.

    def unpack_layers(weights):             def unpack_layers_list(weights):
        for m, n in shapes:                     _yielded = []
            yield weights[:m], weights[m]  ->   for m, n in shapes:
            weights = weights[m + 1:]               _yielded.append((weights[:m], weights[m]))
                                                    weights = weights[m + 1:]
                                                return _yielded

`for W, b in unpack_layers(w)`, `sum(g(x))`, `zip(g(x), ys)` read the same values from the
list as from the generator; the list is one the version made, so its `append` is written as a
list operation (frontend/list_methods.py) and the version is differentiated like any helper.
That holds while running the generator to its end before the loop is what the loop sees:
a generator without an end (`while True`), one that receives values (`x = yield v`), returns
(early, or a value), delegates (`yield from`) or defines functions keeps the refusal of `yield`.
Every call of such a function in `f` calls the version (also where no argument is
differentiated: the generated code indexes what it iterates over).
"""

import inspect

from ..frontend.desugar import stmt_at
from ..ir import syntax
from ..ir.naming import unused_name
from ..ir.syntax import nodes as n
from .versions import lifted_version, versions_of


def rewrite_generator_calls(fn_node, resolve, register):
    """Each call in `fn_node` of a user generator function that has a list version calls the
    version instead (`register(version)` gives the name to call it by), and `list(g(x))` is
    that call alone (the version's list is a new one). True if any changed."""
    changed = False
    for node in syntax.walk(fn_node):
        if isinstance(node, n.Call) and not getattr(node, "_dualtape_generator", False):
            obj = resolve(node.func)
            if inspect.isgeneratorfunction(obj) and not inspect.isasyncgenfunction(obj):
                version = list_version(obj)
                if version is not None:
                    node.func = syntax.name(register(version))
                    node._dualtape_generator = True
                    changed = True
    if changed:
        for node in syntax.walk(fn_node):
            syntax.replace_children(node, lambda v: v.args[0] if _listed(v, resolve) else None)
    return changed


def _listed(node, resolve):
    return (isinstance(node, n.Call) and len(node.args) == 1 and not node.keywords
            and getattr(node.args[0], "_dualtape_generator", False) and resolve(node.func) is list)


def list_version(fn):
    """`fn`'s version returning the list of what it yields, or None (see the module docstring)."""
    versions = versions_of(fn, "generator")
    if "list" not in versions:
        versions["list"] = lifted_version(fn, "list", lambda tree: follows(tree) and bool(collect_yields(tree)))
    return versions["list"]


def collect_yields(tree):
    """The generator FunctionDef `tree` (one that `follows`) rewritten in place to return the
    list of what it yields: `_yielded = []` first, `_yielded.append(v)` for `yield v`, the list
    returned at the end."""
    taken = syntax.store_names(tree) | syntax.load_names(tree) | {a.id for a in tree.args.args}
    out = unused_name("_yielded", taken)
    _collecting(tree, out)
    first_body = tree.body[0]
    doc = 1 if isinstance(first_body, n.Expr) and syntax.is_constant(first_body.value) else 0
    tree.body[doc:doc] = [stmt_at("OUT = []", first_body, OUT=out)]
    tree.body.append(stmt_at("return OUT", tree.body[-1], OUT=out))
    return tree


def follows(tree):
    """Whether running `tree` to its end gives the values a loop over it reads: yields only as
    statements, no `yield from`, no `return`, no nested function, no `while True`."""
    statement_yields = {id(s.value) for s in syntax.walk(tree) if isinstance(s, n.Expr) and isinstance(s.value, n.Yield)}
    for x in syntax.walk(tree):
        if isinstance(x, n.Yield) and id(x) not in statement_yields:
            return False  # (`v = yield x`: a generator that receives values)
        if isinstance(x, (n.YieldFrom, n.Lambda, n.AsyncFunctionDef, n.ClassDef, n.Await)):
            return False
        if isinstance(x, n.FunctionDef) and x is not tree:
            return False
        if isinstance(x, n.Return):
            return False  # (a value is StopIteration's; an early `return` would alias the list it ends)
        if isinstance(x, n.While) and syntax.is_constant(x.test) and x.test.value:
            return False  # (no end: the consumer's `break` stops it)
    return True


def _collecting(node, out):
    """Each `yield v` in `node`'s statement lists as `out.append(v)`."""
    for field in ("body", "orelse", "finalbody"):
        body = getattr(node, field, None)
        if not isinstance(body, list):
            continue
        for i, st in enumerate(body):
            if isinstance(st, n.Expr) and isinstance(st.value, n.Yield):
                value = st.value.value if st.value.value is not None else syntax.constant(None)
                body[i] = stmt_at("OUT.append(V)", st, OUT=out, V=value)
            else:
                _collecting(st, out)
    for handler in getattr(node, "handlers", ()):
        _collecting(handler, out)
