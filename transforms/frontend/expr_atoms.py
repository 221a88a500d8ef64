"""Small pieces the expression normalizer (`normalize_expr`) builds with: loads of names,
key/value pairs, hashability, arrays as stacks, atoms (`_simple`) and temporary-name hints."""

from ..ir import syntax
from ..ir.syntax import nodes as n


def _as_load(node):
    node = syntax.copy(node)
    for sub in syntax.walk(node):
        if hasattr(sub, "ctx"):
            sub.ctx = n.Load()
    return node


def _pairs(node):
    """A literal ((before, after), ...) pad width."""
    return isinstance(node, n.Tuple) and all(isinstance(e, n.Tuple) and len(e.elts) == 2 for e in node.elts)


def _hashable_obj(obj):
    try:
        hash(obj)
        return True
    except TypeError:
        return False


def _array_as_stack(seq):
    """`[[a, b], [c, d]]` as `np.stack([np.stack([a, b]), np.stack([c, d])])`: what np.array makes of it."""
    elts = [_array_as_stack(x) if isinstance(x, (n.List, n.Tuple)) and x.elts else x for x in seq.elts]
    call = syntax.parse_expr("np.stack([])")
    call.args[0].elts = elts
    for sub in syntax.walk(call):
        sub.lineno = getattr(seq, "lineno", 1)
        sub.col_offset = getattr(seq, "col_offset", 0)
    return call


def _simple(e):
    if isinstance(e, (n.Name, n.Constant)):
        return True
    if isinstance(e, n.Attribute):
        return _simple(e.value)
    if isinstance(e, n.UnaryOp):
        return _simple(e.operand)
    if isinstance(e, n.BinOp):
        return _simple(e.left) and _simple(e.right)
    return False


def _hint(word, *atoms):
    parts = []
    for a in atoms:
        if isinstance(a, n.Name):
            parts.append(a.id.strip("_"))
        elif isinstance(a, n.Constant) and isinstance(a.value, int) and not isinstance(a.value, bool) and a.value >= 0:
            parts.append(str(a.value))
        else:
            return None
    return "_" + "_".join([word] + parts) if parts else None
