"""The inference of concrete.py: one abstract value per local name of a generated function.

Values: ("a", shape, dtype) for an array or number (dtype: a NumPy dtype, or the Python type
of a Python number: NumPy's "weak" scalars), ("a", (), int, n) for a Python int whose value n
the shapes decide (`x.shape[1] * 64`: slice bounds), ("s", shape) for a tuple of ints known before
the run (`np.shape(v)`), ("t", items) for a tuple of values (pushed on `_stack`), None for
unknown. A name's value is the join of all its assignments (equal, or unknown), computed
flow-insensitively to a fixpoint from the parameters' values.
"""

import ast

import numpy as np

from ..ir import syntax

TOP = None  # unknown
_BOT = ("bottom",)  # no assignment seen yet
WEAK = (bool, int, float, complex)  # Python scalars: NumPy's "weak" dtypes
UNARY = {"sin", "cos", "tan", "tanh", "sinh", "cosh", "exp", "expm1", "log", "log1p", "log2", "log10",
         "sqrt", "square", "negative", "abs", "absolute", "arctan", "arcsin", "arccos", "arctanh",
         "arcsinh", "arccosh", "reciprocal", "sign", "cbrt", "exp2", "positive", "conj", "real"}
REDUCE = {"sum", "mean", "prod", "max", "min", "amax", "amin"}
_MATH = {"sin", "cos", "tan", "tanh", "sinh", "cosh", "exp", "expm1", "log", "log1p", "sqrt", "atan"}
BINOPS = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.true_divide,
          ast.Pow: np.power, ast.FloorDiv: np.floor_divide, ast.Mod: np.remainder}
_INTOPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)
_PYOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
          ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}


def arg_value(v):
    """The abstract value of an argument: ("a", shape, dtype) for NumPy arrays and scalars and
    Python numbers (dtype: the Python type), None for anything else."""
    if type(v) is np.ndarray:
        return ("a", v.shape, v.dtype)
    if type(v) in WEAK:
        return ("a", (), type(v))
    if isinstance(v, np.generic) and type(v) is np.dtype(type(v)).type:
        return ("a", (), v.dtype)
    return TOP


def _join(a, b):
    if a is _BOT:
        return b
    if b is _BOT or a == b:
        return a
    if a is not TOP and b is not TOP and a[0] == "a" and a[:3] == b[:3]:
        return a[:3]  # (ints of two values: an int)
    return TOP


def int_value(v):
    """The value of a Python int known before the run, else None."""
    return v[3] if v is not TOP and v is not _BOT and len(v) == 4 else None


def _int(n):
    return ("a", (), int, n)


def _dummy(v):
    dt = v[2]
    return dt(1) if isinstance(dt, type) else np.ones((), dt)


def _dtype_of(x):
    return type(x) if type(x) in WEAK else np.asarray(x).dtype


def is_array(v):
    return v is not TOP and v is not _BOT and v[0] == "a" and v[2] is not None


def is_float(v):
    """A NumPy (not Python) float or complex value: its arithmetic never raises."""
    return is_array(v) and not isinstance(v[2], type) and v[2].kind in "fc"


def _matmul_shape(a, b):
    if not a or not b:
        return TOP
    x = a if len(a) >= 2 else (1,) + a
    y = b if len(b) >= 2 else b + (1,)
    if x[-1] != y[-2]:
        return TOP
    try:
        out = tuple(np.broadcast_shapes(x[:-2], y[:-2])) + (x[-2], y[-1])
    except ValueError:
        return TOP
    if len(b) == 1:
        out = out[:-1]
    if len(a) == 1:
        out = out[:-2] + out[-1:] if len(b) > 1 else out[:-1]
    return out


class Infer:
    def __init__(self, env):
        self.env = env

    def name(self, name):
        return self.env.get(name, TOP)

    def __call__(self, node):  # noqa: C901 (one case per kind of expression)
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.Constant):
            if type(node.value) is int:
                return _int(node.value)
            return ("a", (), type(node.value)) if type(node.value) in WEAK else TOP
        if isinstance(node, ast.Tuple):
            items = [self(e) for e in node.elts]
            if any(i is _BOT for i in items):
                return _BOT
            if all(int_value(i) is not None for i in items):
                return ("s", tuple(int_value(i) for i in items))
            return ("t", tuple(items))
        if isinstance(node, ast.BinOp):
            return self.binop(type(node.op), self(node.left), self(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = self(node.operand)
            if int_value(v) is not None:  # (-1 of a slice's step: its value too)
                return _int(-int_value(v) if isinstance(node.op, ast.USub) else int_value(v))
            return v if v is _BOT or is_array(v) and v[2] is not bool else TOP
        if isinstance(node, ast.Attribute):
            v = self(node.value)
            if v is _BOT or not is_array(v) or isinstance(v[2], type):
                return _BOT if v is _BOT else TOP
            if node.attr == "shape":
                return ("s", v[1])
            if node.attr == "T":
                return ("a", v[1][::-1], v[2])
            return ("a", (), int) if node.attr == "ndim" else TOP
        if isinstance(node, ast.Subscript):
            v, k = self(node.value), node.slice
            if v is _BOT:
                return _BOT
            if v is not TOP and v[0] in "st" and isinstance(k, ast.Constant) and type(k.value) is int \
                    and -len(v[1]) <= k.value < len(v[1]):
                return _int(v[1][k.value]) if v[0] == "s" else v[1][k.value]
            return indexed(v, static_index(k, self))
        if isinstance(node, ast.Call):
            return self.call(node)
        return TOP

    def binop(self, op, left, right):
        if left is _BOT or right is _BOT:
            return _BOT
        if not (is_array(left) and is_array(right)):
            return TOP
        if op is ast.MatMult:
            if isinstance(left[2], type) or isinstance(right[2], type):
                return TOP
            shape = _matmul_shape(left[1], right[1])
            return TOP if shape is TOP else ("a", shape, np.result_type(left[2], right[2]))
        fn = BINOPS.get(op)
        if fn is None:
            return TOP
        weak = isinstance(left[2], type) and isinstance(right[2], type)
        if weak and op is ast.Pow:  # 2 ** -1 is a float: the type depends on the value
            return TOP
        try:
            shape = tuple(np.broadcast_shapes(left[1], right[1]))
            with np.errstate(all="ignore"):
                dummy = (_PYOPS[op] if weak else fn)(_dummy(left), _dummy(right))
        except (ValueError, TypeError, KeyError):
            return TOP
        out = ("a", shape, _dtype_of(dummy))
        a, b = int_value(left), int_value(right)
        if out[2] is int and a is not None and b is not None and op in _INTOPS and not (
                op in (ast.FloorDiv, ast.Mod) and b == 0):
            return _int(_PYOPS[op](a, b))
        return out

    def call(self, node):  # noqa: C901
        f, args = node.func, node.args
        vals = [self(a) for a in args]
        if any(v is _BOT for v in vals):
            return _BOT
        if isinstance(f, ast.Attribute) and f.attr in ("sum", "reshape") and not (
                isinstance(f.value, ast.Name) and f.value.id in ("np", "math", "_stack")):
            x = self(f.value)  # a NumPy value's method (concrete.py writes np.sum(x, axis=k) as x.sum(axis=k))
            if x is _BOT:
                return _BOT
            if not is_array(x) or isinstance(x[2], type):
                return TOP
            if f.attr == "sum":
                return self.reduce(np.sum, x, node.keywords) if not args else TOP
            return reshaped(x, known_shape(vals[0])) if len(args) == 1 and not node.keywords else TOP
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            mod, attr = f.value.id, f.attr
            if mod == "_stack" and attr == "pop" and not args:
                return self.name("_stack")
            if mod == "np" and attr in ("shape",) and len(args) == 1 and not node.keywords:
                return ("s", vals[0][1]) if is_array(vals[0]) else TOP
            if mod == "np" and attr == "transpose" and len(args) == 1 and not node.keywords:
                return ("a", vals[0][1][::-1], vals[0][2]) if is_float(vals[0]) else TOP
            if mod == "np" and attr in UNARY and len(args) == 1 and not node.keywords and is_array(vals[0]):
                try:
                    with np.errstate(all="ignore"):
                        return ("a", vals[0][1], getattr(np, attr)(_dummy(vals[0])).dtype)
                except (TypeError, AttributeError):
                    return TOP
            if mod == "np" and attr in REDUCE and len(args) == 1 and is_array(vals[0]):
                return self.reduce(getattr(np, attr), vals[0], node.keywords)
            if mod == "math" and attr in _MATH and len(args) == 1 and is_array(vals[0]) and vals[0][1] == ():
                return ("a", (), float)
            if mod == "np" and attr in ("empty_like", "zeros_like") and len(args) == 1 and not node.keywords:
                return vals[0] if is_array(vals[0]) and not isinstance(vals[0][2], type) else TOP
            if mod == "np" and attr == "reshape" and len(args) == 2 and not node.keywords:
                return reshaped(vals[0], known_shape(vals[1]))
            return TOP
        if not isinstance(f, ast.Name) or node.keywords:
            return TOP
        if f.id == "shape_of" and len(args) == 1:
            return ("s", vals[0][1]) if is_array(vals[0]) else TOP
        if f.id in ("unbroadcast", "unreduce") and len(args) >= 2 and known_shape(vals[1]) is not TOP:
            g = vals[0]
            if f.id == "unreduce":
                dt = np.dtype(float) if is_array(g) and g[2] is float else (g[2] if is_float(g) else None)
            else:
                dt = g[2] if is_float(g) or is_array(g) and g[2] is float and vals[1][1] == () else None
            return ("a", known_shape(vals[1]), dt)
        if f.id == "reshape_like" and len(args) == 2 and is_array(vals[1]):  # (no batch axes: plain arrays)
            return reshaped(vals[0], vals[1][1])
        if f.id == "add_at" and len(args) == 3 and is_float(vals[0]) and is_array(vals[2]) \
                and static_index(args[1], self) is not None:
            return vals[0]  # (`b[index] += g` on b: b's shape and dtype)
        if f.id in ("matmul_cotangent_x", "matmul_cotangent_y") and len(args) == 3 and all(map(is_float, vals)):
            x = vals[1 if f.id.endswith("x") else 2]
            return ("a", x[1], np.result_type(*[v[2] for v in vals]))
        if f.id in ("zeros_like", "broadcast_tangent") and len(args) == 1 + (f.id != "zeros_like"):
            v = vals[-1]
            if not is_array(v):
                return TOP
            if f.id == "broadcast_tangent":
                return ("a", v[1], vals[0][2]) if is_float(vals[0]) else TOP
            return ("a", (), float) if isinstance(v[2], type) else ("a", v[1], v[2] if v[2].kind in "fc" else
                                                                        np.dtype(float))
        return TOP

    def reduce(self, fn, v, keywords):
        kw = {}
        for k in keywords:
            if k.arg not in ("axis", "keepdims") or not isinstance(k.value, ast.Constant):
                return TOP
            kw[k.arg] = k.value.value
        shape, axes = _reduced(v[1], kw.get("axis"), kw.get("keepdims", False))
        if shape is TOP or fn in (np.max, np.min, np.amax, np.amin) and any(v[1][a] == 0 for a in axes):
            return TOP  # (a maximum over nothing raises)
        try:
            with np.errstate(all="ignore"):
                return ("a", shape, _dtype_of(fn(_dummy(v) if isinstance(v[2], type)
                                                 else np.ones((1,) * len(v[1]), v[2]), **kw)))
        except (ValueError, TypeError, np.exceptions.AxisError):
            return TOP


def _reduced(shape, axis, keepdims):
    """(shape of a reduction of an array of `shape` over `axis`, the axes), or (TOP, ())."""
    ndim = len(shape)
    if axis is None:
        axes = tuple(range(ndim))
    else:
        axes = axis if isinstance(axis, tuple) else (axis,)
        if not all(type(a) is int and -ndim <= a < ndim for a in axes):
            return TOP, ()
        axes = tuple(a % ndim for a in axes)
        if len(set(axes)) != len(axes):
            return TOP, ()
    if not isinstance(keepdims, bool):
        return TOP, ()
    out = tuple(1 if i in axes else n for i, n in enumerate(shape)) if keepdims else tuple(
        n for i, n in enumerate(shape) if i not in axes)
    return out, axes


def static_index(node, infer_=None):
    """The index `node` spells with ints known before the run (constants, or with `infer_`, names
    and arithmetic of the shapes), slices of them or None, `slice(...)` calls, tuples of them: a
    basic index whose result shape the shapes decide, else None."""
    if isinstance(node, ast.Slice):
        parts = [node.lower, node.upper, node.step]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "slice" \
            and not node.keywords and 1 <= len(node.args) <= 3:
        parts = list(node.args) if len(node.args) > 1 else [None, node.args[0]]
    elif isinstance(node, ast.Tuple):
        items = [static_index(e, infer_) for e in node.elts]
        return None if any(i is None for i in items) else tuple(items)
    else:
        return _known_int(node, infer_)
    bounds = []
    for p in (parts + [None] * 3)[:3]:
        if p is None or isinstance(p, ast.Constant) and p.value is None:
            bounds.append(None)
            continue
        k = _known_int(p, infer_)
        if k is None:
            return None
        bounds.append(k)
    return slice(*bounds)


def _known_int(node, infer_):
    if isinstance(node, ast.Constant):
        return node.value if type(node.value) is int else None
    return None if infer_ is None else int_value(infer_(node))


def indexed(v, index):
    """The value of `x[index]` for x of value `v` and a static index (None: unknown)."""
    if index is None or not is_array(v) or isinstance(v[2], type) or v[1] == ():
        return TOP
    try:
        if isinstance(index, slice) and index.step == 0 or isinstance(index, tuple) and any(
                isinstance(i, slice) and i.step == 0 for i in index):
            return TOP
        shape = np.broadcast_to(np.zeros((), v[2]), v[1])[index].shape  # (a view: no memory)
    except (IndexError, TypeError, ValueError):
        return TOP
    return ("a", tuple(shape), v[2])


def reshaped(v, shape):
    """The value of `np.reshape(x, shape)` for x of value `v`, with `shape` known."""
    if not is_array(v) or isinstance(v[2], type) or shape is TOP:
        return TOP
    shape = tuple(shape) if isinstance(shape, tuple) else (shape,)
    size, known = int(np.prod(v[1], dtype=np.int64)), int(np.prod([n for n in shape if n != -1], dtype=np.int64))
    if sum(n == -1 for n in shape) > 1 or any(n < -1 for n in shape):
        return TOP
    if -1 in shape:  # (NumPy's rule: the one unknown length that makes the sizes equal)
        if known == 0 or size % known:
            return TOP
        shape = tuple(size // known if n == -1 else n for n in shape)
    return ("a", shape, v[2]) if int(np.prod(shape, dtype=np.int64)) == size else TOP


def known_shape(v):
    return v[1] if v is not TOP and v is not _BOT and v[0] == "s" else TOP


def infer(fn, params, global_int=None):
    """name -> abstract value for the body of `fn` (an ast.FunctionDef), or None when the body
    binds names in ways this pass does not read. `global_int(name)`: the value of a global that
    holds a Python int, else None (the version is dropped when a global it read is rebound:
    cache.Guard)."""
    stores = []  # (targets as a Name or tuple of Names, value node or a marker)
    for node in syntax.walk(fn):
        if node is not fn and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
                                                ast.Global, ast.Nonlocal, ast.comprehension, ast.NamedExpr)):
            return None
        if isinstance(node, ast.Attribute) and (isinstance(node.ctx, ast.Store) or node.attr == "resize"):
            return None  # `a.shape = ...`, `a.resize(...)`: an array changing shape in place
    handled, stack_uses = set(), set()
    for node in syntax.walk(fn):
        if isinstance(node, ast.Attribute) and node.attr in ("append", "pop"):
            stack_uses.add(id(node.value))
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.List) and not node.value.elts
                and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "_stack"):
            handled.add(id(node.targets[0]))  # `_stack = []`: its values are what is pushed
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            stores.append((node.targets[0], node.value))
            handled.add(id(node.targets[0]))
            handled.update(id(e) for e in getattr(node.targets[0], "elts", ()))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            stores.append((node.target, node))
            handled.add(id(node.target))
        elif isinstance(node, ast.For) and isinstance(node.target, ast.Name) and _is_range(node.iter):
            stores.append((node.target, "int"))
            handled.add(id(node.target))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append"
              and isinstance(node.func.value, ast.Name) and node.func.value.id == "_stack" and len(node.args) == 1):
            stores.append((ast.Name(id="_stack", ctx=ast.Store()), node.args[0]))
    env = dict(params)
    top = set()
    for node in syntax.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and id(node) not in handled:
            top.add(node.id)  # bound some other way (a for over a list, `with ... as`, del): unknown
        if isinstance(node, ast.Name) and node.id == "_stack" and id(node) not in stack_uses \
                and isinstance(node.ctx, ast.Load):
            top.add("_stack")  # passed on (a helper may push or pop): its values are unknown
    for target, _ in stores:
        for t in getattr(target, "elts", [target]):
            if isinstance(t, ast.Name) and t.id not in env:
                env[t.id] = _BOT
    env.setdefault("_stack", _BOT)
    if global_int is not None:
        for node in syntax.walk(fn):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in env \
                    and node.id not in top and global_int(node.id) is not None:
                env[node.id] = _int(global_int(node.id))
    infer_ = Infer(env)
    changed = True
    while changed:
        changed = False
        for target, value in stores:
            if value == "int":
                v = ("a", (), int)
            elif isinstance(value, ast.AugAssign):
                v = infer_.binop(type(value.op), infer_.name(target.id), infer_(value.value))
            else:
                v = infer_(value)
            for name, got in _unpack(target, v):
                new = TOP if name in top else _join(env.get(name, _BOT), got)
                if new != env.get(name, _BOT):
                    env[name], changed = new, True
    return {k: (TOP if v is _BOT else v) for k, v in env.items()}


def _unpack(target, v):
    if isinstance(target, ast.Name):
        return [(target.id, v)]
    if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
        n = len(target.elts)
        if v is _BOT:
            items = [_BOT] * n
        elif v is not TOP and v[0] == "t" and len(v[1]) == n:
            items = list(v[1])
        elif v is not TOP and v[0] == "s" and len(v[1]) == n:
            items = [_int(k) for k in v[1]]
        else:
            items = [TOP] * n
        return [(e.id, i) for e, i in zip(target.elts, items)]
    return [(e.id, TOP) for e in syntax.walk(target) if isinstance(e, ast.Name) and isinstance(e.ctx, ast.Store)]


def _is_range(node):
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "reversed" \
            and len(node.args) == 1:
        node = node.args[0]
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"
