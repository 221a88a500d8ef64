"""`Tensor` and `Variable`: immutable values with an identity the tapes can watch.

A tensor wraps a read-only ndarray (or, inside the functional API's forward mode, a dual
number) and a unique integer id. Tapes and accumulators watch ids, never Python objects,
so a variable keeps its id while `assign` replaces its value.
"""

import itertools
import math

import numpy as np

from ..core import dtypes
from ..core.duck import is_duck_array, refuse_compute, values_of
from ..core.errors import RefusalError
from ..core.registry import Traced
from ..core.scipy_hints import escape_hint
from .tape_escapes import ROUTES as TAPE_ROUTES, recording_tape, tape_escape_error

next_id = itertools.count(1).__next__


class TensorShape(tuple):
    """A tuple of dimensions that prints as TF's TensorShape does."""

    def as_list(self):
        return list(self)

    @property
    def rank(self):
        return len(self)

    def num_elements(self):
        return int(np.prod(self)) if self else 1

    def __getitem__(self, key):
        item = tuple.__getitem__(self, key)
        return TensorShape(item) if isinstance(key, slice) else item

    def __repr__(self):
        return f"TensorShape({list(self)})"

    def __str__(self):
        return str(tuple(self))


class Tensor(Traced):
    """An immutable array that GradientTape can watch. Created by `constant` and every op."""

    __slots__ = ("_value", "_id", "__weakref__")
    __array_priority__ = 100

    # -- identity and contents ------------------------------------------------------------
    @property
    def shape(self):
        """The shape, a `TensorShape` (a tuple of ints)."""
        value = self._value
        return TensorShape(value.shape if value.__class__ is np.ndarray else np.shape(value))

    @property
    def ndim(self):
        return np.ndim(self._value)

    @property
    def dtype(self):
        """The element type, a `DType` (`dualtape.float32`, ...)."""
        return dtypes.as_dtype(_np_dtype(self._value))

    @property
    def size(self):
        return int(np.size(self._value))

    def numpy(self):
        """The value as a new, writable NumPy array (or NumPy scalar for 0-d tensors)."""
        check_escape(self, ".numpy()")
        value = np.array(self._value, copy=True)
        return value[()] if value.ndim == 0 else value

    def ref(self):
        """A hashable reference to this tensor (tensors themselves compare elementwise)."""
        return _Ref(self)

    def __array__(self, dtype=None, copy=None):
        check_escape(self, "np.array / np.asarray")
        value = np.asarray(self._value)
        if dtype is not None and value.dtype != dtype:
            return value.astype(dtype)
        return value.copy() if copy else value

    def __len__(self):
        shape = np.shape(self._value)
        if not shape:
            raise TypeError("len() of unsized object: a scalar tensor has no length")
        return shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __bool__(self):
        if np.size(self._value) != 1:
            raise ValueError(f"[Tensor.__bool__] the truth value of a tensor of shape "
                             f"{self.shape} is ambiguous. Use dualtape.reduce_any or reduce_all.")
        return bool(np.asarray(_primal(self._value)).reshape(()))

    def __float__(self):
        check_escape(self, "float()")
        return float(np.asarray(_primal(self._value)).reshape(()))

    def __complex__(self):
        check_escape(self, "complex()")
        return complex(np.asarray(_primal(self._value)).reshape(()))

    # int(), bool(), indexing and math.floor / ceil / trunc stay allowed on traced values:
    # their results are piecewise constant, so the derivative they drop is zero (`if x > 0:`
    # branches as in NumPy).
    def __floor__(self):
        return math.floor(np.asarray(_primal(self._value)).item())

    def __ceil__(self):
        return math.ceil(np.asarray(_primal(self._value)).item())

    def __trunc__(self):
        return math.trunc(np.asarray(_primal(self._value)).item())

    def __int__(self):
        return int(np.asarray(_primal(self._value)).reshape(()))

    def __index__(self):
        value = np.asarray(_primal(self._value))
        if value.dtype.kind not in "iu":
            raise TypeError(f"[Tensor.__index__] only integer tensors can be used as an index, "
                            f"not {self.dtype.name}. Cast it with dualtape.cast(t, tf.int32).")
        return int(value.reshape(()))

    def __hash__(self):
        raise TypeError("Tensor is unhashable. Instead, use tensor.ref() as the key.")

    def __repr__(self):
        return f"<tf.Tensor: shape={self.shape}, dtype={self.dtype.name}, numpy={numpy_repr(self._value)}>"

    def __str__(self):
        return f"tf.Tensor({_numpy_str(self._value)}, shape={self.shape}, dtype={self.dtype.name})"

    def __format__(self, spec):
        if spec:  # printing is not an escape: the string carries no derivative
            value = np.asarray(_primal(self._value))
            return format(float(value) if value.ndim == 0 else value, spec)
        return str(self)

    def __reduce__(self):
        return (constant, (self.numpy(),))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


class EagerTensor(Tensor):
    """The concrete tensor type (named as in TF, so `type(x).__name__` reads the same)."""

    __slots__ = ()


class _Ref:
    __slots__ = ("_tensor",)

    def __init__(self, tensor):
        self._tensor = tensor

    def deref(self):
        return self._tensor

    def __hash__(self):
        return self._tensor._id

    def __eq__(self, other):
        return isinstance(other, _Ref) and other._tensor._id == self._tensor._id


# -- values leaving dualtape ---------------------------------------------------------------------

dispatch_state = [None]  # dispatch.STATE, set by dispatch.py: the recording tapes of this thread


def escaping_api(tensor):
    """The functional transform (`grad`, `jvp`, ...) that differentiates through `tensor`
    right now, or None: a plain value made from it would silently drop that derivative.

    Only the functional API's private tapes (and its dual numbers) count here. A user's
    recording GradientTape refuses fewer routes (`.numpy()` stays the way out, as in TF):
    `check_escape` asks tape_escapes.py about it.
    """
    value = tensor._value
    if value.__class__ is not np.ndarray and isinstance(value, Traced):
        return "jvp"  # a dual number inside: forward mode of the functional API
    state = dispatch_state[0]
    if state is not None:
        for tape in state.tapes:
            api = getattr(tape, "_escape_api", None)
            if api is not None and tensor._id in tape._watched:
                return api
    return None


def escape_error(api, route):
    """The error for a traced value turned into a plain Python number or NumPy array."""
    plain = "a plain Python number" if route in ("float()", "complex()", ".item()") else "a plain NumPy array"
    if route.startswith("float() in "):  # float() in a write into a NumPy array (functional/values.py)
        plain = "a plain Python number"
    return RefusalError(
        f"[{api}] a value being differentiated became {plain} through {route}, which would "
        "silently drop its derivative (its tangent or gradient). float() is also what math.* "
        "functions and a write into a NumPy array call; np.array / np.asarray also run "
        "inside np.r_, NumPy functions given a list of traced values, and SciPy. "
        "Fix: keep it traced: build arrays with np.stack / np.concatenate instead of "
        "np.array, np.r_ or writes into np.zeros (np.where(mask, v, out) or "
        "dnp.put_along_axis for a write at indices), or differentiate with dualtape.transforms "
        "(dualtape.transforms.grad, jvp, ...), which keeps writes into arrays (out[i] = v) as "
        "written; use np.* (or dnp.*) functions instead of "
        "math.*; call dnp / dualtape ops where NumPy or SciPy has none; or, if the value "
        "is meant to be a constant, apply dnp.stop_gradient(x) first. Branching on a value "
        "(`if x > 0:`), int() and math.floor are fine." + escape_hint())  # the SciPy call that did it, if any


def plain_value(x):
    """The NumPy value under `x` (a tensor, dual number or array), without the escape check:
    for dualtape's own conversions whose result carries no derivative (argmax, indices)."""
    value = _primal(x)
    if is_duck_array(value):  # a value-dependent result (tf.where's indices, .item()): never computed silently
        raise refuse_compute("Tensor", value, "This result depends on the array's values; compute "
                             "them first (x.compute()), or keep the computation elementwise.")
    return np.asarray(value)


def check_escape(tensor, route):
    api = escaping_api(tensor)
    if api is not None:
        raise escape_error(api, route)
    state = dispatch_state[0]
    if route in TAPE_ROUTES and state is not None and state.tapes and recording_tape(tensor, state.tapes):
        raise tape_escape_error(tensor, route)  # a user's tape: tape_escapes.py


def _primal(value):
    """The plain array under any nesting of tensors and dual numbers."""
    while isinstance(value, Traced):
        value = value._value if isinstance(value, Tensor) else value.primal
    return value


def _np_dtype(value):
    value = values_of(value)  # (a vmap's values: one dtype, though no one primal)
    dtype = getattr(value, "dtype", None)
    return dtype if dtype is not None else np.asarray(value).dtype


def _numpy_str(value):
    if isinstance(value, Traced) or is_duck_array(value):  # printing never computes a dask array
        return repr(value)
    text = str(np.asarray(value))
    return "\n" + text if "\n" in text else text  # TF starts a multi-line value on its own line


def numpy_repr(value):
    if isinstance(value, Traced) or is_duck_array(value):
        return repr(value)
    value = np.asarray(value)
    return repr(value[()]) if value.ndim == 0 and value.dtype.kind != "f" else (
        str(value[()]) if value.ndim == 0 else repr(value))


def wrap(value):
    """A new tensor holding `value` (an ndarray, NumPy scalar or dual number)."""
    t = object.__new__(EagerTensor)
    if type(value) is np.ndarray:
        value.setflags(write=False)  # (half the cost of assigning flags.writeable)
    t._value = value
    t._id = next_id()
    return t


def alias(value, tensor_id):
    """A tensor that shares `tensor_id`: the tape's view of a recorded input or output."""
    t = object.__new__(EagerTensor)
    t._value = value
    t._id = tensor_id
    return t


def constant(value, dtype=None, shape=None, name=None):
    """A tensor from Python data or an array, with TF's dtype rules (float -> float32).

    >>> dualtape.constant([1, 2.5])
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1. , 2.5], dtype=float32)>
    """
    if isinstance(value, Tensor):
        if dtype is None and shape is None and not getattr(value, "_is_variable", False):
            api = escaping_api(value)
            if api is not None:
                raise escape_error(api, "dualtape.constant()")
            return value  # TF returns an eager tensor itself: a tape still sees it
        check_escape(value, "dualtape.constant()")
        value = value._value if dtype is None else value.numpy()
        if dtype is None and shape is None:
            return wrap(value)
    arr = dtypes.to_array(value, dtype)
    if shape is not None:
        shape = tuple(int(s) for s in shape)
        if arr.size == 1:
            arr = np.broadcast_to(arr.reshape(()), shape).copy()
        elif arr.size == int(np.prod(shape)):
            arr = arr.reshape(shape)
        else:
            raise TypeError(f"[constant] Expected Tensor's shape: {shape}, but got {arr.shape}.")
    return wrap(arr)


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    """`value` as a tensor: tensors and variables pass through (checked against `dtype`);
    an IndexedSlices becomes its dense tensor, as in TF."""
    dense = getattr(value, "_dense", None)  # IndexedSlices (indexed_slices.py)
    if dense is not None and not isinstance(value, Tensor):
        return dense(dtype)
    if isinstance(value, Traced) and not isinstance(value, Tensor) and dtype is None:
        return wrap(value)  # a dual number inside jvp: the tensor holds it, tangent and all
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype != dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} "
                             f"for Tensor with dtype {value.dtype.name}: {value}")
        return value
    if dtype is None and dtype_hint is not None:
        try:
            return wrap(dtypes.to_array(value, dtype_hint))
        except (TypeError, ValueError):
            pass
    return wrap(dtypes.to_array(value, dtype))


def is_tensor(x):
    return isinstance(x, Tensor)
