"""`np.stack(ys)` and `np.concatenate(ys, axis=k)` of a list held by a name or computed
(one the function built, e.g. with `append`; `ys[1:] + zs`), whose length the transformer does not see: an op of its own
("sequence"), whose adjoint splits the incoming adjoint into one piece per item
(`sequence_adjoint`) and whose tangent stacks the items' tangents (`sequence_tangent`,
transforms/runtime/lists.py). A list written out (`np.stack([a, b])`) stays a registry op."""

import numpy as np

from ..ir import syntax
from ..ir.syntax import nodes as n
from ..ir.nodes import Op

SEQUENCE_FUNCTIONS = {np.stack: "stack", np.concatenate: "concatenate", np.vstack: "vstack"}


def sequence_call(norm, obj, e, out, s, target):
    """The "sequence" op of `np.stack(ys, axis)` / `np.concatenate(ys, axis)` with `ys` a name
    holding differentiated values, or None for any other call."""
    try:
        kind = SEQUENCE_FUNCTIONS.get(obj)
    except TypeError:  # an unhashable callable
        return None
    if (kind is None or not e.args or isinstance(e.args[0], (n.List, n.Tuple, n.Starred))
            or not norm.expr_varied(e.args[0])):
        return None
    keywords = {k.arg: k.value for k in e.keywords}
    if kind == "vstack" and (len(e.args) > 1 or keywords):
        raise norm.fail(s, "`np.vstack` of a list held by a name takes the list only",
                        "Call it as np.vstack(ys).")
    if len(e.args) > 2 or set(keywords) - {"axis"} or (len(e.args) == 2 and keywords):
        raise norm.fail(s, f"`np.{kind}` of a list held by a name takes the list and `axis` only",
                        f"Call it as np.{kind}(ys, axis=0).")
    axis = e.args[1] if len(e.args) == 2 else keywords.get("axis", syntax.constant(0))
    if norm.expr_varied(axis) or (syntax.is_constant(axis) and axis.value is None):
        raise norm.fail(s, f"the axis of `np.{kind}` must be a fixed integer to be differentiated",
                        f"Pass an integer axis: np.{kind}(ys, axis=0).")
    line, text = norm.loc(s)
    seq = norm.expr(e.args[0], out, s)  # `np.stack(ys[1:] + zs)`: the list as a name first
    name = target or norm.fresh(f"{kind}_{seq.id}")
    call = n.Call(func=syntax.copy(e.func), args=[syntax.copy(seq)],
                  keywords=[] if kind == "vstack" else [n.keyword(arg="axis", value=syntax.copy(axis))])
    norm._emit(Op(target=name, kind="sequence", expr=call, args=[syntax.copy(seq)], line=line, text=text,
                  static={"axis": axis}, container=kind), out)
    return syntax.name(name)
