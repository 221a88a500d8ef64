"""`Batched`: one value per example of a `vmap`, held as one array with the batch axis first.

`vmap(f)` runs `f` once, on `Batched` values: to `f` each looks like one example (its
`shape` leaves the batch axis out), while every registry op on it runs once for the whole
batch through the op's batching rule (`rules.py`). A `Batched` value carries the level of
its `vmap`, taken from the counter tapes and dual numbers share, so that nested transforms
never mix: an op works on the newest level among its arguments first, and values of older
levels are constants to it (see `route`).

Where a value would have to be one number for the whole batch (a Python `if` on it,
`float()`, `np.asarray`), the example's values differ, so it is refused, naming the fix.
"""

import numpy as np

from ..core import dnp
from ..core.errors import RefusalError
from ..core.array_like import ArrayLike
from ..forward.dual import install_numpy_protocols, install_operators


class Batched(ArrayLike):
    """The values of one array for every example of a `vmap` at `level`: `_value` holds them
    stacked on axis 0 (`batch_size` of them); `shape`, `ndim` and `len` are one example's."""

    __slots__ = ("_value", "level", "batch_size", "__weakref__")
    _unsized = "each example of this vmap value is a scalar"
    __array_priority__ = 300

    def __init__(self, value, level, batch_size):
        self._value = value
        self.level = level
        self.batch_size = batch_size

    @property
    def shape(self):
        value = self._value
        if value.__class__ is np.ndarray:
            return value.shape[1:]
        return tuple(dnp.shape(value))[1:]

    @property
    def dtype(self):
        value = self._value
        if value.__class__ is np.ndarray:
            return value.dtype
        return dnp.result_dtype(value)

    @property
    def primal(self):
        """Refused: there is one value per example, not one array (plain_value walks here)."""
        raise _refusal("a conversion to one plain value (a Python `if` on it, bool(), int(), .item())")

    def __setitem__(self, index, value):
        raise RefusalError(f"[vmap] a batched value cannot be written into (t[{index!r}] = ...): "
                           "build a new array instead, with np.where(mask, value, t), "
                           "np.concatenate of slices or np.stack of items.")

    def __bool__(self):
        raise _refusal("bool() (a Python `if`, `while`, `and`/`or` or assert on it)")

    def __float__(self):
        raise _refusal("float()")

    def __complex__(self):
        raise _refusal("complex()")

    def __int__(self):
        raise _refusal("int()")

    def __index__(self):
        raise _refusal("an index (operator.index)")

    def __array__(self, dtype=None, copy=None):
        raise _refusal("np.array / np.asarray (also what indexing a NumPy array with it, a[i], "
                       "runs: write dualtape.numpy_api.take(a, i, axis=0) instead)")

    def numpy(self):
        raise _refusal(".numpy()")

    def __repr__(self):
        return f"Batched(level={self.level}, batch_size={self.batch_size}, value={self._value!r})"

    __hash__ = None


def _refusal(route):
    return RefusalError(
        f"[vmap] a value that vmap batches met {route}, which needs one value for the whole "
        "batch, but each example has its own. Fix: keep it an array: np.where(cond, a, b) "
        "for a branch on it (both sides are computed), np.stack / np.concatenate to build "
        "arrays, or compute the value outside vmap (in_axes=None for an argument that is the "
        "same for every example).")


def _binary(fn):
    def forward(self, other):
        return fn(self, other)

    def reverse(self, other):
        return fn(other, self)

    return forward, reverse


install_operators(Batched, _binary)
Batched.__invert__ = lambda self: dnp.logical_not(self)
for _name, _fn in (("and", dnp.logical_and), ("or", dnp.logical_or)):
    _fwd, _rev = _binary(_fn)  # masks (bool arrays); NumPy's bitwise ops on ints are not ops here
    setattr(Batched, f"__{_name}__", _fwd)
    setattr(Batched, f"__r{_name}__", _rev)
Batched.T = property(lambda self: dnp.transpose(self))
install_numpy_protocols(Batched, lambda name: (
    f"[np.{name}] has no dualtape version that vmap can batch, and one of its arguments is "
    "batched by vmap. Use a dnp op, or compute it outside vmap."))
