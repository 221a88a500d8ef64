"""Slice adjoints written in place: `bx = add_at(bx, slice(a, b), g)` as `bx[a:b] += g`.

A function that slices its parameters out of one flat vector (`W1 = theta[0:n1].reshape(a, b)`)
gets one `add_at` per slice in its adjoint, each into the one flat adjoint `btheta` that
`zeros_like` allocated. On plain float arrays `add_at` with a basic index is `b[index] += g`;
in the version for concrete shapes (concrete.py), where `b` is known to be a float array, `g`
an array or number and the index basic (a `slice(...)`, ints, tuples of them: never an array),
the statement says so directly, and Python's call and `add_at`'s type tests go. Each slice's adjoint then costs its own
size, as hand-written code, whatever the size of the flat vector.

Then `first_writes`: after `b = np.zeros_like(x)`, the writes `b[index] += g` that follow in the
same block, before anything else names b, touch regions known at transform time; a write into
a region no earlier one touched is `b[index] = g` (0 + g is g), and when those regions cover all
of b and no `+=` lands on a region partly untouched, nothing needs the zeros: `b = np.empty_like(x)`. Fresh zeroed memory is what a flat
adjoint's cost was made of; the hand-written gradient writes each slice once into `empty_like`.

Last, `unread_writes`: an array made here (`b = np.empty_like(x)`) that nothing reads but the
writes into it goes with them. Forward over reverse (hvp) differentiates the whole adjoint and
returns the tangent of the gradient only: the gradient's own flat array, and so the products that
only filled it, are dead. (`np.zeros_like(b)` reads b's shape and dtype only: it becomes
`np.zeros_like(x)` first, `same_shape_allocations`.)
"""

import ast

import numpy as np

from .concrete_infer import is_array, is_float, static_index
from .function import inner_blocks, statements


def _index_node(index):
    """The subscript for a static index (ints, slices, tuples of them)."""
    if isinstance(index, tuple):
        return ast.Tuple(elts=[_index_node(i) for i in index], ctx=ast.Load())
    if isinstance(index, slice):
        part = lambda v: None if v is None else ast.Constant(value=v)  # noqa: E731
        return ast.Slice(lower=part(index.start), upper=part(index.stop), step=part(index.step))
    return ast.Constant(value=index)


def _basic(node, infer_):
    """The subscript that the index `node` of add_at spells, when it is a basic index (a slice, an
    int, tuples of them: never an array), else None."""
    index = static_index(node, infer_)
    if index is not None:
        return _index_node(index)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "slice" \
            and not node.keywords and 1 <= len(node.args) <= 3:
        parts = list(node.args) if len(node.args) > 1 else [None, node.args[0]]
        return ast.Slice(*(parts + [None] * 3)[:3])
    if isinstance(node, ast.Tuple):
        items = [_basic(e, infer_) for e in node.elts]
        return None if any(i is None for i in items) else ast.Tuple(elts=items, ctx=ast.Load())
    v = infer_(node)
    if is_array(v) and v[1] == () and (v[2] is int or not isinstance(v[2], type) and v[2].kind in "iu"):
        return node
    return None


def _in_place(st, infer_):
    """`b[index] += g` for the statement `b = add_at(b, index, g)` it may stand for, else None."""
    if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
            and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Name)
            and st.value.func.id == "add_at" and len(st.value.args) == 3 and not st.value.keywords):
        return None
    b, index, g = st.value.args
    name = st.targets[0].id
    if not (isinstance(b, ast.Name) and b.id == name and is_float(infer_(b)) and is_array(infer_(g))):
        return None
    index = _basic(index, infer_)
    if index is None:
        return None
    target = ast.Subscript(value=ast.Name(id=name, ctx=ast.Load()), slice=index, ctx=ast.Store())
    return ast.copy_location(ast.AugAssign(target=target, op=ast.Add(), value=g), st)


def in_place_slices(body, infer_):
    """`body` (a list of statements, nested blocks too) with its slice adjoints written in place;
    the same list object when nothing changed."""
    out, changed = [], False
    for st in body:
        new = _in_place(st, infer_)
        if new is not None:
            out.append(new)
            changed = True
            continue
        for field, inner in inner_blocks(st):
            kept = in_place_slices(inner, infer_)
            if kept is not inner:
                setattr(st, field, kept)
                changed = True
        out.append(st)
    return out if changed else body


MASK_LIMIT = 1 << 22  # (the regions are tracked on a boolean mask of b's shape: up to this size)


def _fresh_zeros(st, infer_):
    """(name, x) of the statement `b = np.zeros_like(x)` of a float array x of known shape, else None."""
    if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
            and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Attribute)
            and isinstance(st.value.func.value, ast.Name) and st.value.func.value.id == "np"
            and st.value.func.attr == "zeros_like" and len(st.value.args) == 1 and not st.value.keywords):
        return None
    x = infer_(st.value.args[0])
    if not is_float(x) or int(np.prod(x[1])) > MASK_LIMIT:
        return None
    return st.targets[0].id, x


def _write_into(st, name, infer_):
    """The static index of `name[index] += g` or `name[index] = g`, else None."""
    target = st.target if isinstance(st, ast.AugAssign) and isinstance(st.op, ast.Add) else (
        st.targets[0] if isinstance(st, ast.Assign) and len(st.targets) == 1 else None)
    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == name:
        return static_index(target.slice, infer_)
    return None


def _names(st, name):
    return any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(st))


def first_writes(body, infer_):
    """`body` with the first writes into fresh zeros as assignments, and the zeros as `empty_like`
    where the writes cover them (module docstring); the same list object when nothing changed."""
    out, changed = list(body), False
    for i, st in enumerate(out):
        for field, inner in inner_blocks(st):
            kept = first_writes(inner, infer_)
            if kept is not inner:
                setattr(st, field, kept)
                changed = True
        fresh = _fresh_zeros(st, infer_)
        if fresh is None:
            continue
        name, x = fresh
        touched = np.zeros(x[1], dtype=bool)
        reads_zeros = False  # (a `+=` into a region partly untouched adds to the zeros there)
        for j in range(i + 1, len(out)):
            index = _write_into(out[j], name, infer_)
            if index is None:
                if _names(out[j], name):
                    break  # (b read, or written otherwise: its zeros may be seen)
                continue
            if _names(out[j].value, name):
                break
            region = touched[index]
            if isinstance(out[j], ast.AugAssign) and not np.any(region):
                out[j] = ast.copy_location(ast.Assign(targets=[out[j].target], value=out[j].value), out[j])
                changed = True
            elif isinstance(out[j], ast.AugAssign) and not np.all(region):
                reads_zeros = True
            touched[index] = True
        if touched.all() and not reads_zeros:
            st.value.func.attr = "empty_like"
            changed = True
    return out if changed else body


def _fresh_of(st):
    """(name, argument) of `b = np.empty_like(x)` / `np.zeros_like(x)` with x a name, else None."""
    if (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
            and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Attribute)
            and isinstance(st.value.func.value, ast.Name) and st.value.func.value.id == "np"
            and st.value.func.attr in ("empty_like", "zeros_like") and len(st.value.args) == 1
            and isinstance(st.value.args[0], ast.Name) and not st.value.keywords):
        return st.targets[0].id, st.value.args[0].id
    return None


def same_shape_allocations(body, infer_):
    """`np.zeros_like(b)` / `np.empty_like(b)` as `np.zeros_like(x)` where every value of b is
    `np.empty_like(x)` or `np.zeros_like(x)` of one x of known float shape (the same shape and dtype;
    changed in place)."""
    made = {}
    for st in statements(body):
        fresh = _fresh_of(st)
        if fresh is not None and is_float(infer_(ast.Name(id=fresh[1], ctx=ast.Load()))):
            made.setdefault(fresh[0], set()).add(fresh[1])
    stored = {}
    for st in statements(body):
        for node in ast.walk(st):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                stored[node.id] = stored.get(node.id, 0) + 1
    for st in statements(body):
        fresh = _fresh_of(st)
        if fresh is None:
            continue
        sources = made.get(fresh[1])
        if sources and len(sources) == 1 and stored.get(fresh[1]) == sum(
                1 for s in statements(body) if (_fresh_of(s) or ("",))[0] == fresh[1]):
            st.value.args[0] = ast.Name(id=next(iter(sources)), ctx=ast.Load())
    return body


def unread_writes(body, infer_):
    """`body` without the arrays made here that nothing reads but writes into them with basic
    indices and names or constants (module docstring); the same list object when nothing changed."""
    every = list(statements(body))
    fresh = {made[0] for made in map(_fresh_of, every) if made is not None}
    writes, reads = {}, []  # reads: (the array a write goes into or None, the names the statement uses)
    for st in every:
        made = _fresh_of(st)
        target = st.target if isinstance(st, ast.AugAssign) else (
            st.targets[0] if isinstance(st, ast.Assign) and len(st.targets) == 1 else None)
        into = None
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                and isinstance(st.value, (ast.Name, ast.Constant)) and _basic(target.slice, infer_) is not None:
            into = target.value.id
            writes.setdefault(into, []).append(st)
        if isinstance(st, ast.Delete):
            continue
        names = {(node.id, isinstance(node.ctx, ast.Load)) for node in ast.walk(st.value if made else st)
                 if isinstance(node, ast.Name)}
        if into is not None:
            names.discard((into, True))
        reads.append((into, names))
    for field_st in every:  # (names a block's head reads: `for`, `if`, `while`)
        for field in ("test", "iter"):
            node = getattr(field_st, field, None)
            if isinstance(node, ast.AST):
                reads.append((None, {(n.id, True) for n in ast.walk(node) if isinstance(n, ast.Name)}))
    dead = set(fresh)
    while True:
        used = {name for into, names in reads if into not in dead for name, load in names if load}
        stored = {name for into, names in reads for name, load in names if not load}
        still = {name for name in dead if name not in used and name not in stored}
        if still == dead:
            break
        dead = still
    if not dead:
        return body
    gone = {id(st) for name in dead for st in writes.get(name, ())}
    gone |= {id(st) for st in every if (_fresh_of(st) or ("",))[0] in dead}

    def keep(block):
        out = []
        for st in block:
            if id(st) in gone:
                continue
            if isinstance(st, ast.Delete):
                st.targets = [t for t in st.targets if not (isinstance(t, ast.Name) and t.id in dead)]
                if not st.targets:
                    continue
            for field, inner in list(inner_blocks(st)):
                setattr(st, field, keep(inner) or [ast.Pass()])
            out.append(st)
        return out
    return keep(body)
