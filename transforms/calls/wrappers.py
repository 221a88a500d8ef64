"""Which single registry primitive a dnp wrapper function stands for, if any.

`dnp.sum(x, axis=None, ...)` checks its arguments and calls the `Sum` primitive: to the
transformer a call of it is that primitive, its VJP rule inlined. A wrapper that calls other
ops too is a composition (`np.cov` centres with `mean`, then `transpose` and `matmul`):
mapping it to its one primitive would give wrong code, so `wrapped_primitive` reads
every op a wrapper calls, through its private helpers, and stands for a primitive only when
that is the one op, or when the others are listed in `_ALSO_CALLS` with why the primitive
still gives NumPy's values in the transformer.
"""

import functools
import inspect

from dualtape.core import dnp
from dualtape.core.registry import NOT_DIFFERENTIABLE, Primitive

from ..ir import syntax
from ..ir.syntax import nodes as n
from ..frontend.parse import source_tree

# wrapper -> (the other ops it may call, why the transformer is still right mapping the call to
# its primitive), each audited
_ALSO_CALLS = {
    "dualtape.ops.linalg.outer": ({"ravel"}, "the normalizer writes np.outer as an einsum of reshapes"),
    "dualtape.ops.linalg.diagonal": ({"moveaxis", "getitem"}, "the normalizer writes it as an einsum"),
    "dualtape.ops.linalg.trace": ({"moveaxis", "getitem"}, "the normalizer writes it as an einsum"),
    "dualtape.ops.indexing.take": ({"ravel"}, "axis=None is take_axis(x), refused beyond vectors"),
    "dualtape.ops.joining.concatenate": ({"ravel"}, "axis=None is refused (opmap._bind_variadic)"),
    "dualtape.ops.shape.tile": ({"reshape"}, "Tile's rules read reps as NumPy (rulekit.tile_reps)"),
    "dualtape.ops.linalg_np.linalg_solve": ({"expand_dims", "getitem"},
                                            "a vector b is solved as a column by the normalizer (_solve)"),
    "dualtape.ops.statistics.average": ({"mean"}, "Average's rules take weights=None as equal weights"),
}
# np.sum(x, dtype=np.float64) and the like: the forward sweep runs NumPy with the dtype, and
# a float cast passes the derivative through
for _name in ("sum", "mean", "prod", "max", "min", "std", "var", "all", "any"):
    _ALSO_CALLS[f"dualtape.ops.reductions.{_name}"] = ({"cast"}, "dtype=: a float cast")
_ALSO_CALLS["dualtape.ops.scans.cumsum"] = ({"cast"}, "dtype=: a float cast")


def _is_op(obj):
    """A primitive, or a public dnp function of the op modules (itself one op or several)."""
    if isinstance(obj, Primitive):
        return True
    if not inspect.isfunction(obj) or not (obj.__module__ or "").startswith("dualtape.ops"):
        return False
    try:
        return getattr(dnp, obj.__name__, None) is obj or obj in dnp.NUMPY_DISPATCH.values()
    except TypeError:
        return False


def _names_read(fn):
    """The objects `fn`'s source reads, each with whether it is read in a loop: its globals by
    name (not its parameters or locals), and `dnp.<name>` attributes."""
    try:
        tree = source_tree(fn)
    except (OSError, TypeError, SyntaxError):
        return None
    local = syntax.store_names(tree)
    for node in syntax.walk(tree):
        if isinstance(node, (n.FunctionDef, n.Lambda)):
            args = node.args
            local |= {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
    found = []
    loops = [node for node in syntax.walk(tree) if isinstance(node, (n.For, n.While, n.comprehension))]
    looped = {id(x) for loop in loops for x in syntax.walk(loop)}
    for node in syntax.walk(tree):
        obj = None
        if isinstance(node, n.Name) and isinstance(node.ctx, n.Load) and node.id not in local:
            obj = fn.__globals__.get(node.id)
        elif isinstance(node, n.Attribute) and isinstance(node.value, n.Name) and node.value.id == "dnp":
            obj = getattr(dnp, node.attr, None)
        else:
            continue
        found.append((obj, id(node) in looped))
    return found


def ops_called(fn, depth=0, seen=None):
    """The ops `fn` calls (primitives and dnp functions), through the private helpers of
    dualtape it calls, each with whether it runs in a loop; None when some source cannot be read."""
    seen = set() if seen is None else seen
    if fn in seen or depth > 6:
        return []
    seen.add(fn)
    objs = _names_read(fn)
    if objs is None:
        return None
    ops = []
    for obj, looped in objs:
        if obj is fn:
            continue
        if _is_op(obj):
            ops.append((obj, looped))
        elif inspect.isfunction(obj) and (obj.__module__ or "").startswith("dualtape."):
            inner = ops_called(obj, depth + 1, seen)
            if inner is None:
                return None
            ops.extend((op, looped or inner_looped) for op, inner_looped in inner)
    return ops


def _name(op):
    return op.name if isinstance(op, Primitive) else op.__name__


@functools.lru_cache(maxsize=None)
def wrapped_primitive(fn):
    """The single primitive a dnp wrapper function stands for, or None (see the module doc)."""
    ops = ops_called(fn) or []
    allowed = _ALSO_CALLS.get(f"{fn.__module__}.{fn.__qualname__}", (set(), ""))[0]
    prims = {op for op, _ in ops if isinstance(op, Primitive) and op.name not in allowed}
    if len(prims) != 1:
        return None
    prim, = prims
    if prim.vjp is NOT_DIFFERENTIABLE:  # no derivative: what else it calls does not matter
        return prim
    if any(looped for _, looped in ops):  # a loop of ops (np.linalg.multi_dot's matmul chain)
        return None
    return prim if all(op is prim or _name(op) in allowed for op, _ in ops) else None
