"""Facts forward mode needs: which arguments a tangent flows from, which names carry one.

- active: depends differentiably on a `wrt` input (and, with optimize, reaches the output):
  only active names get a tangent `d<name>`. Computed by `analysis.activity` over `jvp_args`.
- `_t = x * a; x = _t` (the normalizer never lets an op read its own target) is merged
  back into `x = x * a`, its tangent line written first.
"""

from dualtape.core.registry import LINEAR, NOT_DIFFERENTIABLE

from ..ir.analysis import flow_args
from ..ir.nodes import Op, is_name


def _no_jvp(prim, k):
    rule = prim.jvp if prim.variadic else prim.jvp_rule(k)
    return (rule is NOT_DIFFERENTIABLE or (prim.variadic and k in prim.nondiff_argnums)
            or (prim.jvp is LINEAR and k in prim.nondiff_argnums))


def jvp_args(op):
    """(position, name) of the arguments a tangent can flow from."""
    return flow_args(op, _no_jvp)


def merge_split_copies(block):
    """`_t = x * a; x = _t` (made so an op never reads its own target) becomes `x = x * a`,
    its tangent line written first, while it still reads the old `x` and `dx`."""
    out = []
    for st in block:
        for sub in ("body", "orelse"):
            if isinstance(getattr(st, sub, None), list):
                setattr(st, sub, merge_split_copies(getattr(st, sub)))
        prev = out[-1] if out else None
        if (isinstance(st, Op) and st.kind == "copy" and getattr(st, "split", False) and isinstance(prev, Op)
                and prev.kind == "prim" and is_name(st.args[0]) and prev.target == st.args[0].id):
            prev.target = st.target
            prev.writes = {st.target}
            prev.tangent_first = True
            continue
        out.append(st)
    return out
