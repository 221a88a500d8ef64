"""Versions the transformer makes of a user function it calls: a helper changing a list
argument in place (calls/list_arguments.py), a generator (calls/generators.py), a function
with `*args` per call shape (calls/star_args.py).

A version runs in its function's globals, so it holds them, and they hold the function: a
cache beside the function (a WeakKeyDictionary from function to versions) would keep the
function, its module and every version alive for the whole process. The versions are kept on
the function itself (`versions_of`) and go with it.
"""

import inspect

from ..frontend.function_values import lift
from ..frontend.parse import source_tree
from ..ir import syntax
from ..ir.naming import unused_name
from ..ir.syntax import nodes as n


def versions_of(fn, kind):
    """The dict of `fn`'s versions of one `kind` ("lists", "generator", "star"), kept on fn."""
    store = getattr(fn, "__dict__", None)
    if store is None:  # (not a Python function: nothing is kept)
        return {}
    return store.setdefault("__dualtape_versions__", {}).setdefault(kind, {})


def lifted_version(fn, suffix, rewrite):
    """A version of the user function `fn` made from its source: a copy of its tree that
    `rewrite(tree)` changes in place (returning False where no version applies), lifted as
    `<name>_<suffix>` in fn's globals and the values its closure holds now. None where the
    source cannot be read or `rewrite` declines."""
    try:
        tree = syntax.copy(source_tree(fn).body[0])
        lines, first = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or "<unknown>"
    except (OSError, TypeError, SyntaxError, IndexError):
        return None
    if not isinstance(tree, n.FunctionDef) or rewrite(tree) is False:
        return None
    namespace = dict(fn.__globals__)
    try:  # (a function defined in another one reads its closure)
        namespace.update(inspect.getclosurevars(fn).nonlocals)
    except (TypeError, ValueError):
        return None
    tree.decorator_list = []
    tree.name = unused_name(f"{fn.__name__}_{suffix}", set(namespace))
    version = lift(tree, namespace, filename, first, [line.rstrip("\n") for line in lines])
    namespace[tree.name] = version
    return version
