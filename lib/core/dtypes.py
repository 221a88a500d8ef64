"""TF-style dtypes (`dualtape.float32`, ...) and TF's conversion rules for Python values."""

import numpy as np

from .duck import as_array, is_duck_array


class DType:
    """A dtype that prints as TF does (`tf.float32`) and compares equal to NumPy's."""

    __slots__ = ("_np",)

    def __init__(self, np_dtype):
        self._np = np.dtype(np_dtype)

    @property
    def name(self):
        return "bool" if self._np == np.bool_ else self._np.name

    @property
    def as_numpy_dtype(self):
        return self._np.type

    @property
    def is_floating(self):
        return self._np.kind == "f"

    @property
    def is_complex(self):
        return self._np.kind == "c"

    @property
    def is_integer(self):
        return self._np.kind in "iu"

    @property
    def is_bool(self):
        return self._np.kind == "b"

    def __eq__(self, other):
        try:
            return self._np == as_numpy_dtype(other)
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(self._np)

    def __repr__(self):
        return f"tf.{self.name}"

    __str__ = __repr__


float16 = DType(np.float16)
float32 = DType(np.float32)
float64 = DType(np.float64)
double = float64
int8 = DType(np.int8)
int16 = DType(np.int16)
int32 = DType(np.int32)
int64 = DType(np.int64)
uint8 = DType(np.uint8)
bool = DType(np.bool_)  # noqa: A001 - TF spells it tf.bool
complex64 = DType(np.complex64)
complex128 = DType(np.complex128)
string = DType(np.str_)

_BY_NUMPY = {d._np: d for d in (float16, float32, float64, int8, int16, int32, int64, uint8,
                                bool, complex64, complex128)}


def as_dtype(d):
    """The DType for a DType, NumPy dtype, type or name."""
    if isinstance(d, DType):
        return d
    npd = np.dtype(d)
    return _BY_NUMPY.get(npd) or DType(npd)


def as_numpy_dtype(d):
    """The NumPy dtype for a DType, NumPy dtype, type or name (TypeError if none)."""
    if isinstance(d, DType):
        return d._np
    if d is None:
        raise TypeError("None is not a dtype")
    return np.dtype(d)


def is_differentiable_dtype(np_dtype):
    """Floating and complex dtypes carry gradients; integers, bools and strings do not."""
    return np_dtype.kind in "fc"


def complex_error(api, what):
    """The error for a complex value meeting an op with no complex rules (every mode)."""
    return TypeError(
        f"[{api}] {what} is complex, and {api} has no complex derivative rules: its real "
        "rules would give a wrong derivative, so every mode refuses it. Fix: hold the real "
        "and imaginary parts in separate float arrays (z = a + 1j * b: compute with a and b), "
        "apply dnp.stop_gradient to the value if no derivative should flow through it, or "
        "declare complex rules for the op (defop(..., complex=True), docs/numerics.md).")


def is_complex_value(value):
    """True for a complex array, scalar or traced value (by its dtype, never its data)."""
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return value.__class__ is complex
    kind = getattr(dtype, "kind", None)
    if kind is None:
        kind = as_numpy_dtype(dtype).kind
    return kind == "c"


def any_complex(values):
    """True when a value among `values` is complex (an op without complex rules refuses)."""
    for v in values:
        dtype = getattr(v, "dtype", None)
        if dtype is None:
            if v.__class__ is complex:
                return True
        elif getattr(dtype, "kind", None) == "c" or (dtype.__class__ is not np.dtype and is_complex_value(v)):
            return True
    return False


def refuse_complex_op(op, values, ans, why):
    """Raise complex_error when `op` has no complex rules and a value it sees is complex.

    values: the op's inputs that carry a derivative; why: who differentiates (a phrase)."""
    if op.complex:
        return
    for v in (ans, *values):
        if is_complex_value(v):
            dtypes = ", ".join(str(getattr(w, "dtype", type(w).__name__)) for w in values)
            raise complex_error(op.name, f"a value (inputs of dtypes {dtypes}, output of dtype "
                                         f"{getattr(ans, 'dtype', type(ans).__name__)}; {why})")


def to_array(value, dtype=None):
    """Convert Python data to an ndarray with TF's rules (new memory, never a view).

    Python floats become float32 and ints int32; nested lists take the widest kind among
    their leaves; NumPy arrays keep their dtype. A float that cannot be held exactly by an
    integer `dtype` raises TypeError, as TF's convert_to_tensor does.
    """
    if isinstance(value, np.ndarray):
        arr = np.array(value, dtype=None if dtype is None else as_numpy_dtype(dtype), copy=True)
        return arr
    if is_duck_array(value):  # a dask array keeps its dtype, as a NumPy array does, and stays lazy
        return as_array(value, None if dtype is None else as_numpy_dtype(dtype))
    if dtype is not None:
        npd = as_numpy_dtype(dtype)
        arr = np.array(value)
        if npd.kind in "iub" and arr.dtype.kind in "fc":
            if not np.all(np.equal(arr, np.round(arr.real))):
                raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {as_dtype(npd).name}")
        return np.array(arr, dtype=npd)
    arr = np.array(value)
    if arr.dtype == np.float64 and not isinstance(value, np.floating):
        return arr.astype(np.float32)
    if arr.dtype == np.int64 and not isinstance(value, np.integer):
        if arr.size == 0 or (arr.min() >= -2**31 and arr.max() < 2**31):
            return arr.astype(np.int32)
    return arr
