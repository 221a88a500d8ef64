"""Facts forward mode needs: which arguments a tangent flows from, which names carry one.

- active: depends differentiably on a `wrt` input (and, with optimize, reaches the output):
  only active names get a tangent `d<name>`.
- `_t = x * a; x = _t` (the normalizer never lets an op read its own target) is merged
  back into `x = x * a`, its tangent line written first.
"""

from dualtape.registry import LINEAR, NOT_DIFFERENTIABLE

from .analysis import walk_items
from .ir import Op, SetItem, is_name


def jvp_args(op):
    """(position, name) of the arguments a tangent can flow from."""
    out = []
    for k, a in enumerate(op.args):
        if not is_name(a):
            continue
        if op.kind == "prim":
            prim = op.spec.prim
            rule = prim.jvp if prim.variadic else prim.jvp_rule(k)
            if rule is NOT_DIFFERENTIABLE or (prim.variadic and k in prim.nondiff_argnums):
                continue
            if prim.jvp is LINEAR and k in prim.nondiff_argnums:
                continue
        out.append((k, a.id))
    if op.kind == "call":
        out += [(key, a.id) for key, a in op.keywords.items() if is_name(a)]
    return out


def forward_activity(block, wrt_names, ret_names, optimize):
    stmts = [s for s in walk_items(block) if isinstance(s, (Op, SetItem))]
    varied = set(wrt_names)
    changed = True
    while changed:
        changed = False
        for s in stmts:
            hit = any(name in varied for _, name in jvp_args(s)) if isinstance(s, Op) else (
                is_name(s.value) and s.value.id in varied)
            if hit and s.target not in varied:
                varied.add(s.target)
                changed = True
    if not optimize:
        return varied
    useful = set(ret_names)
    changed = True
    while changed:
        changed = False
        for s in stmts:
            if s.target not in useful:
                continue
            names = [name for _, name in jvp_args(s)] if isinstance(s, Op) else (
                [s.value.id] if is_name(s.value) else [])
            for name in names:
                if name not in useful:
                    useful.add(name)
                    changed = True
    return varied & useful


def _merge_split_copies(block):
    """`_t = x * a; x = _t` (made so an op never reads its own target) becomes `x = x * a`,
    its tangent line written first, while it still reads the old `x` and `dx`."""
    out = []
    for st in block:
        for sub in ("body", "orelse"):
            if isinstance(getattr(st, sub, None), list):
                setattr(st, sub, _merge_split_copies(getattr(st, sub)))
        prev = out[-1] if out else None
        if (isinstance(st, Op) and st.kind == "copy" and getattr(st, "split", False) and isinstance(prev, Op)
                and prev.kind == "prim" and is_name(st.args[0]) and prev.target == st.args[0].id):
            prev.target = st.target
            prev.writes = {st.target}
            prev.tangent_first = True
            continue
        out.append(st)
    return out
