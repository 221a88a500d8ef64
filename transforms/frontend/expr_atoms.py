"""Small pieces the expression normalizer (`normalize_expr`) builds with: loads of names,
literal pad widths, arrays as stacks, atoms (`is_simple`) and temporary-name hints."""

from ..ir import syntax
from ..ir.syntax import nodes as n
from ..templates import quote


def as_load(node):
    node = syntax.copy(node)
    for sub in syntax.walk(node):
        if hasattr(sub, "ctx"):
            sub.ctx = n.Load()
    return node


def is_pad_pairs(node):
    """A literal ((before, after), ...) pad width."""
    return isinstance(node, n.Tuple) and all(isinstance(e, n.Tuple) and len(e.elts) == 2 for e in node.elts)


def array_as_stack(seq):
    """`[[a, b], [c, d]]` as `np.stack([np.stack([a, b]), np.stack([c, d])])`: what np.array makes of it."""
    elts = [array_as_stack(x) if isinstance(x, (n.List, n.Tuple)) and x.elts else x for x in seq.elts]
    call = quote.expr("np.stack([])")
    call.args[0].elts = elts
    for sub in syntax.walk(call):
        sub.lineno = getattr(seq, "lineno", 1)
        sub.col_offset = getattr(seq, "col_offset", 0)
    return call


def is_simple(e):
    if isinstance(e, (n.Name, n.Constant)):
        return True
    if isinstance(e, n.Attribute):
        return is_simple(e.value)
    if isinstance(e, n.UnaryOp):
        return is_simple(e.operand)
    if isinstance(e, n.BinOp):
        return is_simple(e.left) and is_simple(e.right)
    return False


def name_hint(word, *atoms):
    parts = []
    for a in atoms:
        if isinstance(a, n.Name):
            parts.append(a.id.strip("_"))
        elif isinstance(a, n.Constant) and isinstance(a.value, int) and not isinstance(a.value, bool) and a.value >= 0:
            parts.append(str(a.value))
        else:
            return None
    return "_" + "_".join([word] + parts) if parts else None
