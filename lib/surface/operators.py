"""Python operators and NumPy's dispatch protocols on `Tensor`; each routes to `dnp`.

Operators follow TF's dtype rules: a Python number takes the tensor's dtype (a float
with an integer tensor is a TypeError), and two tensors of different float dtypes raise
`InvalidArgumentError`. NumPy functions called on tensors (`np.sin(t)`,
`np.mean(t, axis=0)`) are recorded like `dnp` calls, a deliberate improvement over TF.
"""

import numpy as np

from ..core import dtypes
from ..core import dnp
from ..core.duck import is_duck_array
from ..reverse.dispatch import STATE
from ..core.errors import InvalidArgumentError, RefusalError
from ..core.registry import Primitive, Traced, tensor_bind
from ..reverse.tensor import Tensor


def _coerce(tensor, other, op_name):
    """`other` ready to combine with `tensor` under TF's rules (NumPy's under the functional
    API: `_numpy_rules`), or NotImplemented."""
    kind = type(other)
    if kind is _ndarray and other.dtype is getattr(tensor._value, "dtype", None):
        return other  # the hot path of an array operand (a bias): nothing to convert
    if kind is float or kind is int:  # the hot path: a Python number takes the tensor's dtype
        if kind is float and _np_dtype(tensor).kind in "iu" and not _numpy_rules(tensor, other):
            raise TypeError(f"Cannot convert {other!r} to EagerTensor of dtype "
                            f"{dtypes.as_dtype(_np_dtype(tensor)).name}")
        return other
    if isinstance(other, Tensor):
        a, b = tensor._value, other._value
        if a.__class__ is _ndarray and b.__class__ is _ndarray and a.dtype is b.dtype:
            return other  # the hot path: two tensors of one dtype
        a, b = _np_dtype(tensor), _np_dtype(other)
        if (a is not b and a != b and a.kind in "fciu" and b.kind in "fciu" and (a.kind in "fc" or b.kind in "fc")
                and not _numpy_rules(tensor, other)):
            raise InvalidArgumentError(
                f"cannot compute {op_name} as input #1(zero-based) was expected to be a "
                f"{_TF_TYPE_NAMES.get(a.name, a.name)} tensor but is a "
                f"{_TF_TYPE_NAMES.get(b.name, b.name)} tensor "
                f"[Op:{op_name}]. Cast one side with dualtape.cast(x, dtype).")
        return other
    if isinstance(other, Traced) or kind is complex or kind is bool:
        return other
    if isinstance(other, (list, tuple)):
        return np.asarray(other) if _numpy_rules(tensor, other) else dtypes.to_array(other, _np_dtype(tensor))
    if isinstance(other, (np.ndarray, np.generic)):
        # TF converts an array operand to the tensor's dtype (float64 data, float32 tensor)
        mine = _np_dtype(tensor)
        if other.dtype != mine and mine.kind in "fc" and other.dtype.kind in "fiub" and not _numpy_rules(tensor, other):
            return np.asarray(other, dtype=mine)
        return other
    if is_duck_array(other):  # a dask array: the same conversion, kept lazy
        mine = _np_dtype(tensor)
        if other.dtype != mine and mine.kind in "fc" and other.dtype.kind in "fiub":
            return other.astype(mine)
        return other
    return NotImplemented


def _numpy_rules(tensor, other):
    """True under the functional API (grad, jvp, ...), where dtypes promote as in NumPy
    (x - np.floor(x).astype(int) is a float): TF's strict rules stay with a user's tape."""
    from ..forward.inplace import numpy_semantics
    return numpy_semantics(tensor) or (isinstance(other, Tensor) and numpy_semantics(other))


_ndarray = np.ndarray
_TF_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def _np_dtype(t):
    dtype = getattr(t._value, "dtype", None)
    return dtype if isinstance(dtype, np.dtype) else dnp.result_dtype(t)


def _binary(fn, op_name):
    # operators go straight to the binder: the operands are known to include a tensor
    bind = tensor_bind[0] if isinstance(fn, Primitive) else None
    no_static = {}

    def forward(self, other):
        other = _coerce(self, other, op_name)
        if other is NotImplemented:
            return NotImplemented
        return bind(fn, (self, other), no_static) if bind else fn(self, other)

    def reverse(self, other):
        other = _coerce(self, other, op_name)
        if other is NotImplemented:
            return NotImplemented
        return bind(fn, (other, self), no_static) if bind else fn(other, self)

    return forward, reverse


_OPERATORS = {
    "add": (dnp.add, "AddV2"), "sub": (dnp.subtract, "Sub"), "mul": (dnp.multiply, "Mul"),
    "truediv": (dnp.divide, "RealDiv"), "floordiv": (dnp.floor_divide, "FloorDiv"),
    "mod": (dnp.mod, "FloorMod"), "pow": (dnp.power, "Pow"), "matmul": (dnp.matmul, "MatMul"),
    "and": (dnp.logical_and, "LogicalAnd"), "or": (dnp.logical_or, "LogicalOr"),
}

for _name, (_fn, _op) in _OPERATORS.items():
    _fwd, _rev = _binary(_fn, _op)
    setattr(Tensor, f"__{_name}__", _fwd)
    setattr(Tensor, f"__r{_name}__", _rev)

for _name, _fn, _op in (("lt", dnp.less, "Less"), ("le", dnp.less_equal, "LessEqual"),
                        ("gt", dnp.greater, "Greater"), ("ge", dnp.greater_equal, "GreaterEqual")):
    setattr(Tensor, f"__{_name}__", _binary(_fn, _op)[0])


def _eq(self, other):
    if other is None:
        return False
    other = _coerce(self, other, "Equal")
    return NotImplemented if other is NotImplemented else dnp.equal(self, other)


def _ne(self, other):
    if other is None:
        return True
    other = _coerce(self, other, "NotEqual")
    return NotImplemented if other is NotImplemented else dnp.not_equal(self, other)


Tensor.__eq__ = _eq
Tensor.__ne__ = _ne
Tensor.__neg__ = lambda self: dnp.negative(self)
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = lambda self: dnp.abs(self)
Tensor.__invert__ = lambda self: dnp.logical_not(self)
Tensor.__getitem__ = lambda self, index: dnp.getitem(self, index)


def _setitem(self, index, value):
    raise RefusalError(f"[Tensor.__setitem__] tensors are immutable (as in TF), so t[{index!r}] = ... "
                    "cannot write into one. Build a new tensor instead: dnp.where(mask, value, t), "
                    "dnp.concatenate of slices, or a Variable and its assign().")


Tensor.__setitem__ = _setitem


# -- NumPy's protocols -------------------------------------------------------------------------

def _is_live(x):
    """True when some tape or accumulator would need derivatives through `x`."""
    if not isinstance(x, Tensor):
        return isinstance(x, Traced)
    if any(x._id in tape._watched for tape in STATE.tapes):
        return True
    if getattr(x, "_is_variable", False) and x.trainable and any(t._watch_accessed for t in STATE.tapes):
        return True  # reading it would make the tape watch it
    return any(acc._tracks(x) for acc in STATE.accumulators) or isinstance(x._value, Traced)


def _plain(x):
    if isinstance(x, Tensor):
        value = x._value  # a dask value goes to NumPy's function as is: it dispatches there, lazily
        return value if is_duck_array(value) else np.asarray(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(v) for v in x)
    return x


def _unsupported(name, args):
    leaves = list(args)
    for a in args:
        if isinstance(a, (list, tuple)):
            leaves.extend(a)
    if any(_is_live(a) for a in leaves):
        raise TypeError(f"[np.{name}] has no differentiable dualtape version, and one of its "
                        "arguments is being differentiated. Use a dnp/dualtape op, wrap the "
                        "computation with dualtape.custom_gradient, or apply stop_gradient first.")


def _numpy_result(result):
    """A NumPy call's result: integer and bool tensors come back as NumPy values.

    They carry no gradient, and NumPy code goes on with NumPy's promotion rules on them
    (`np.sum(x < y) + 0.0` is a float, where an int64 tensor would refuse the Python float
    under TF's rules), as NumPy calls on TF tensors return NumPy values.
    """
    if isinstance(result, Tensor):
        value = result._value
        if isinstance(value, np.generic) and value.dtype.kind not in "fc":
            return value
        if value.__class__ is np.ndarray and value.dtype.kind not in "fc":
            return value.copy() if value.ndim else value[()]
    return result


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    fn = dnp.NUMPY_DISPATCH.get(ufunc)
    if method == "__call__" and fn is not None and not kwargs:
        return _numpy_result(fn(*inputs))
    if "out" in kwargs:  # a += b into a traced a (NumPy's semantics) or a NumPy array a: inplace.py
        from ..forward.inplace import ufunc_out
        result = ufunc_out(ufunc, method, inputs, kwargs, _is_live)
        if result is not NotImplemented:
            return result
    _unsupported(f"{ufunc.__name__}{'' if method == '__call__' else '.' + method}", inputs)
    if "out" in kwargs:
        kwargs["out"] = tuple(_plain(o) for o in kwargs["out"])
    return getattr(ufunc, method)(*_plain(inputs), **kwargs)


def _array_function(self, func, types, args, kwargs):
    fn = dnp.NUMPY_DISPATCH.get(func)
    if fn is not None:
        return _numpy_result(fn(*args, **kwargs))
    _unsupported(func.__name__, tuple(args) + tuple(kwargs.values()))
    return func(*_plain(args), **{k: _plain(v) for k, v in kwargs.items()})


Tensor.__array_ufunc__ = _array_ufunc
Tensor.__array_function__ = _array_function
