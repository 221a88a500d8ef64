"""Specialize generated code on the concrete shapes and dtypes of the arguments of one call.

A gradient called with NumPy arrays is compiled once per combination of argument shapes and
dtypes (api.py keys its cache on them). For that version this pass infers, for every local
name, one (shape, dtype) that every value it ever holds has, and rewrites what the general
code computed at run time:

- `np.shape(v)` becomes the tuple literal `(32, 64)`;
- `unbroadcast(g, shape)` becomes `g` where the shapes are equal, or `g.sum(axis=0)`;
- `unreduce(g, shape, ...)` of a scalar becomes `np.broadcast_to(g, shape)`, and `g` itself
  where every use is an elementwise operation with an array of that shape and dtype;
- `matmul_cotangent_x(g, x, y)` on matrices becomes `g @ y.T` (`_y`: `x.T @ g`);
- `np.transpose(x)`, `np.reshape(x, s)`, `np.sum(x, axis=k)` of NumPy values become `x.T`,
  `x.reshape(s)`, `x.sum(axis=k)` (NumPy's functions call these methods);
- `reshape_like(g, x)` becomes `g.reshape((4096,))`, `zeros_like(x)` of a float array
  `np.zeros_like(x)`, and `b = add_at(b, slice(0, 4096), g)` becomes `b[0:4096] += g` (slices.py);
- assignments of values nobody reads that cannot raise (NumPy float arithmetic on known
  shapes) are removed: with the shapes literal, grad no longer computes f's value.

The inference is flow-insensitive: a name's value is the join of all its assignments (two
different shapes: unknown), iterated to a fixpoint from the parameters' shapes. Anything this
pass does not read (globals, lists, calls it does not know) is unknown and left as written.
"""

import ast

import numpy as np

from .concrete_infer import arg_value  # noqa: F401 (the api's)
from .cse import share_subexpressions
from .concrete_infer import BINOPS, REDUCE, TOP, UNARY, Infer, infer, is_array, is_float, known_shape
from .function import function, parameter_names, remove, statements

from .hoist import hoist_invariants
from .aliases import drop_aliases
from .in_place import write_in_place
from .scalings import fold_scalings
from .transposes import contiguous_transposes
from .preaccumulate import preaccumulate
from .shapes import drop_dead
from .slices import first_writes, in_place_slices, same_shape_allocations, unread_writes

from ..ir import syntax


def _np(attr, *args, **kwargs):
    return ast.Call(func=ast.Attribute(value=ast.Name(id="np", ctx=ast.Load()), attr=attr, ctx=ast.Load()),
                    args=list(args), keywords=[ast.keyword(arg=k, value=v) for k, v in kwargs.items()])


def _const(value):
    if isinstance(value, tuple):
        return ast.Tuple(elts=[ast.Constant(value=int(v)) for v in value], ctx=ast.Load())
    return ast.Constant(value=value)


def _summed(g, have, want):
    """`g` of shape `have` summed down to `want` (what unbroadcast does), or None."""
    lead = len(have) - len(want)
    if lead < 0 or any(w not in (1, h) for h, w in zip(have[lead:], want)):
        return None
    ones = tuple(lead + i for i, w in enumerate(want) if w == 1 and have[lead + i] != 1)
    axes = tuple(range(lead)) + ones
    if not axes:
        return g
    axis = _const(axes if len(axes) > 1 else axes[0])
    if not ones:
        return _method(g, "sum", axis=axis)
    if not lead:
        return _method(g, "sum", axis=axis, keepdims=ast.Constant(value=True))
    return _method(_method(g, "sum", axis=axis), "reshape", _const(want))


METHODS = {"transpose": (1, ()), "reshape": (2, ()), "sum": (1, ("axis", "keepdims"))}  # arguments, keywords


def _as_method(node, infer_):
    """`np.transpose(x)`, `np.reshape(x, shape)`, `np.sum(x, axis=k)` of a NumPy array or scalar x
    (not a Python number) as `x.T`, `x.reshape(shape)`, `x.sum(axis=k)`: what NumPy's functions call,
    without their dispatch (a few hundred ns each, per call of the gradient). Else None."""
    f = node.func
    if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "np"
            and f.attr in METHODS and node.args):
        return None
    count, keywords = METHODS[f.attr]
    x = infer_(node.args[0])
    if len(node.args) != count or any(k.arg not in keywords or not isinstance(k.value, ast.Constant)
                                       for k in node.keywords) or not is_array(x) or isinstance(x[2], type):
        return None
    if f.attr == "transpose":
        return ast.Attribute(value=node.args[0], attr="T", ctx=ast.Load())
    return ast.Call(func=ast.Attribute(value=node.args[0], attr=f.attr, ctx=ast.Load()), args=node.args[1:],
                    keywords=node.keywords)


def _method(x, attr, *args, **kwargs):
    """`x.attr(*args, **kwargs)` on an array known to be an ndarray (its methods skip the dispatch of
    NumPy's functions: np.sum(g) calls g.sum)."""
    return ast.Call(func=ast.Attribute(value=x, attr=attr, ctx=ast.Load()), args=list(args),
                    keywords=[ast.keyword(arg=k, value=v) for k, v in kwargs.items()])


class _Rewrite(ast.NodeTransformer):
    """The rewrites of the module docstring, on one statement, given the inferred values."""

    def __init__(self, infer_):
        self.infer = infer_
        self.changed = False

    def visit_Call(self, node):
        self.generic_visit(node)
        new = self.rewrite(node)
        if new is not None:
            self.changed = True
            return ast.copy_location(new, node)
        return node

    def rewrite(self, node):
        f, args, infer_ = node.func, node.args, self.infer
        method = _as_method(node, infer_)
        if method is not None:
            return method
        if node.keywords:
            return None
        name = f.id if isinstance(f, ast.Name) else (
            f"np.{f.attr}" if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
            and f.value.id == "np" else None)
        vals = [infer_(a) for a in args]
        if name in ("np.shape", "shape_of") and len(args) == 1 and is_array(vals[0]):
            return _const(vals[0][1])
        if name == "unbroadcast" and len(args) == 2 and is_array(vals[0]) and known_shape(vals[1]) is not TOP:
            want = known_shape(vals[1])
            if vals[0][1] == want:
                return args[0]
            return _summed(args[0], vals[0][1], want) if is_float(vals[0]) else None
        if name == "unreduce" and len(args) >= 2 and is_array(vals[0]) and known_shape(vals[1]) is not TOP:
            want = known_shape(vals[1])
            if vals[0][1] == want and not isinstance(vals[0][2], type):
                return args[0]
            keepdims = len(args) > 3 and isinstance(args[3], ast.Constant) and args[3].value is True
            if vals[0][1] == () or keepdims and len(vals[0][1]) == len(want):
                return _np("broadcast_to", args[0], _const(want))
            return None
        if name in ("matmul_cotangent_x", "matmul_cotangent_y") and len(args) == 3 and all(map(is_float, vals)) \
                and all(len(v[1]) == 2 for v in vals):
            g, x, y = args
            if name.endswith("x"):
                return ast.BinOp(left=g, op=ast.MatMult(), right=ast.Attribute(value=y, attr="T", ctx=ast.Load()))
            return ast.BinOp(left=ast.Attribute(value=x, attr="T", ctx=ast.Load()), op=ast.MatMult(), right=g)
        if name == "reshape_like" and len(args) == 2 and is_float(vals[0]) and is_array(vals[1]) \
                and infer_(node) is not TOP:  # (plain arrays: no batch axes to keep)
            return args[0] if vals[0][1] == vals[1][1] else _method(args[0], "reshape", _const(vals[1][1]))
        if name == "zeros_like" and len(args) == 1 and is_float(vals[0]) and vals[0][1] != ():
            return _np("zeros_like", args[0])  # (a float array's zeros: its shape and dtype)
        if name == "broadcast_tangent" and len(args) == 2 and is_array(vals[0]) and is_array(vals[1]) \
                and vals[0][1] == vals[1][1]:
            return args[0]
        return None


def _pure(node, infer_):
    """Whether evaluating `node` surely raises nothing and has no effect (so that an assignment of
    it nobody reads can go)."""
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Tuple):
        return all(_pure(e, infer_) for e in node.elts)
    v = infer_(node)
    if v is TOP or v[0] == "t":
        return False
    weak_sum = isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)) and all(
        isinstance(e, ast.Constant) and type(e.value) is int and abs(e.value) < 2 ** 53 or is_array(infer_(e))
        and infer_(e)[2] is float for e in (node.left, node.right))  # (Python floats: never raises)
    if v[0] == "a" and not (is_float(v) or weak_sum) and not isinstance(node, (ast.Attribute, ast.Subscript)):
        return False  # (integer arithmetic may raise: 0 // 0 on Python ints, negative powers; 1.0 / 0.0)
    if isinstance(node, ast.BinOp):
        return _pure(node.left, infer_) and _pure(node.right, infer_)
    if isinstance(node, ast.UnaryOp):
        return _pure(node.operand, infer_)
    if isinstance(node, (ast.Attribute, ast.Subscript)):
        return _pure(node.value, infer_)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("sum", "reshape"):
        return _pure(node.func.value, infer_) and all(_pure(a, infer_) for a in node.args) and all(
            isinstance(k.value, ast.Constant) for k in node.keywords)  # (_as_method's: inferred above, so known)
    if isinstance(node, ast.Call) and not node.keywords or isinstance(node, ast.Call) and _np_call(node):
        f = node.func
        known = _np_call(node) or isinstance(f, ast.Name) and f.id in (
            "unbroadcast", "unreduce", "matmul_cotangent_x", "matmul_cotangent_y", "shape_of", "zeros_like")
        return known and all(_pure(a, infer_) for a in node.args) and all(
            isinstance(k.value, ast.Constant) for k in node.keywords)
    return False


def _ndarray(v):
    """Whether the abstract value `v` is a NumPy array of at least one dimension."""
    return is_array(v) and not isinstance(v[2], type) and v[1] != ()


def _quiet(node, infer_):
    """Whether evaluating `node` has no effect, though it may raise: `_pure`, or operators on
    operands of known NumPy or Python number types (`1.0 / n` raises where n is 0, and writes
    nothing)."""
    if isinstance(node, (ast.BinOp, ast.UnaryOp)) and infer_(node) is not TOP:
        return all(_quiet(e, infer_) for e in ast.iter_child_nodes(node) if isinstance(e, ast.expr))
    return _pure(node, infer_)


def _np_call(node):
    f = node.func
    return (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "np"
            and f.attr in UNARY | REDUCE | {"shape", "broadcast_to", "reshape", "transpose"})


def specialize(body, signature, params, probe=None, global_number=None, adjoints=None, global_int=None,
               final=True):
    """The `body` (lines or statements: function.py) of `def f(signature)` rewritten for
    arguments of the abstract values `params` (name -> arg_value), with the assignments nobody
    reads removed. With `probe` (a name), (body, whether that name surely holds a scalar); with
    `global_number(name)` (whether a global holds a number), loop invariants computed before
    their loops (hoist.py); with `adjoints` (their names), linear adjoint statements folded
    (preaccumulate.py); with `global_int(name)` (a global's value when it is a Python int), those
    values (slice bounds); with `final` (code that runs, not code forward mode reads back, which
    cannot differentiate `out=`), negations and scalings folded into constants (scalings.py), second names
    dropped (aliases.py), transposes copied for products (transposes.py) and arithmetic written
    into dead temporaries (in_place.py). `signature`: the parameters (`ast.arguments`, names,
    or their text)."""
    done = (lambda out, env: (out, probe is not None and is_array(env.get(probe)) and env[probe][1] == ())
            ) if probe is not None else (lambda out, env: out)
    if not any(v is not TOP for v in params.values()):
        return done(body, {})
    try:
        tree = body
    except SyntaxError:
        return done(body, {})
    fn = function(tree, signature)
    env = infer(fn, {k: v for k, v in params.items() if v is not TOP}, global_int)
    if env is None:
        return done(body, {})
    infer_ = Infer(env)
    scalars = _scalar_broadcasts(fn, infer_)
    checks, changed = set(), False
    for st in statements(fn.body):
        if not isinstance(st, (ast.Assign, ast.AugAssign, ast.Expr, ast.Return)):
            continue
        if isinstance(st, ast.Expr) and _scalar_check(st.value, infer_):
            checks.add(id(st))  # check_scalar_output(v) of a v known to be a scalar
            continue
        rewrite = _Rewrite(infer_)
        new = rewrite.visit(st)
        if isinstance(st, ast.Assign) and id(st) in scalars:  # `g`, not np.broadcast_to(g, shape)
            new.value, rewrite.changed = st.value.args[0] if st.value is new.value else new.value.args[0], True
        changed = changed or rewrite.changed
    remove(fn, checks)
    in_place = unread_writes(first_writes(same_shape_allocations(in_place_slices(fn.body, infer_), infer_), infer_),
                             infer_)
    if in_place is not fn.body:
        fn.body, changed = in_place, True
    out = _drop_dead(fn.body, infer_)
    if adjoints:
        folded = preaccumulate(out, fn.args, infer_, adjoints)
        out = out if folded is out else _drop_dead(folded, infer_)
    out = share_subexpressions(out, lambda st: _pure(st.value, infer_), lambda st: _quiet(st.value, infer_))
    if global_number is not None:
        out = hoist_invariants(out, fn.args, env, global_number)
    if final:
        out = fold_scalings(out, parameter_names(fn.args), lambda node: _ndarray(infer_(node)) and is_float(infer_(node)),
                            lambda node: is_array(infer_(node)) and infer_(node)[1] == () and infer_(node)[2] in (int, float))
        out = drop_aliases(out, parameter_names(fn.args), lambda node: _ndarray(infer_(node)))
        out = contiguous_transposes(out, lambda st: _quiet(st.value, infer_), infer_)
        out = write_in_place(out, parameter_names(fn.args), infer_)
    changed = changed or bool(checks) or out is not fn.body
    return done(out if changed else body, env)


def _scalar_check(node, infer_):
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "check_scalar_output"
            and node.args and is_array(infer_(node.args[0])) and infer_(node.args[0])[1] == ())


def _scalar_broadcasts(fn, infer_):
    """The assignments `t = unreduce(g, shape, ...)` of a scalar `g` whose every use is an
    elementwise operation with an array of that shape and of the dtype the broadcast would have:
    `t = g` gives the same values (ids of the ast.Assign nodes)."""
    parents, stores, loads = {}, {}, {}
    for node in syntax.walk(fn):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, ast.Name):
            (loads if isinstance(node.ctx, ast.Load) else stores).setdefault(node.id, []).append(node)
    found = set()
    for st in syntax.walk(fn):
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Name)
                and st.value.func.id == "unreduce" and len(st.value.args) >= 2):
            continue
        g, t = infer_(st.value.args[0]), infer_(st.targets[0])
        if not (is_array(g) and g[1] == () and is_float(t)) or len(stores.get(st.targets[0].id, ())) != 1:
            continue
        if (np.dtype(float) if g[2] is float else g[2]) != t[2]:
            continue
        ok = bool(loads.get(st.targets[0].id))
        for use in loads.get(st.targets[0].id, ()):
            op = parents.get(id(use))
            other = (op.right if op.left is use else op.left) if isinstance(op, ast.BinOp) else None
            ok = ok and other is not None and type(op.op) in BINOPS and infer_(other) == t
        if ok:
            found.add(id(st))
    return found


def _drop_dead(body, infer_):
    """Remove assignments nobody reads whose value cannot raise (`_pure` for the inferred types)."""
    return drop_dead(body, lambda st: _pure(st.value, infer_))
