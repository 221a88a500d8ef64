"""`IndexedSlices`: the gradient of a gather along axis 0, as rows (TF's tf.IndexedSlices).

`tape.gradient(loss, table)` where `table` is only read through `tf.gather(table, ids)`
(`tf.nn.embedding_lookup`) is, as in TF, `IndexedSlices(values, indices, dense_shape)`:
`values[k]` is the cotangent of row `indices[k]`, repeated rows are not added up (several
gathers concatenate their slices), and `tf.convert_to_tensor` adds them into the dense
gradient. A source that also gets a dense cotangent gets a dense gradient (TF's add_n).
Jacobians, the functional API and a gradient recorded by another tape stay dense.
"""

import numpy as np

from ..core import dtypes
from .tensor import Tensor, TensorShape, wrap


class IndexedSlices:
    """A sparse representation of a set of tensor slices along axis 0 (TF's class).

    `values` (shape `(n,) + dense_shape[1:]`), `indices` (shape `(n,)`) and `dense_shape`
    (int32) are tensors; `tf.convert_to_tensor(slices)` is the dense tensor, the values of
    repeated indices added.
    """

    __slots__ = ("_values", "_indices", "_dense_shape")

    def __init__(self, values, indices, dense_shape=None):
        self._values = values if isinstance(values, Tensor) else wrap(np.asarray(values))
        self._indices = indices if isinstance(indices, Tensor) else wrap(np.asarray(indices))
        if dense_shape is not None and not isinstance(dense_shape, Tensor):
            dense_shape = wrap(np.asarray(dense_shape, dtype=np.int32))
        self._dense_shape = dense_shape

    @property
    def values(self):
        return self._values

    @property
    def indices(self):
        return self._indices

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def shape(self):
        """The dense shape, as a TensorShape (None for the rows when it is unknown)."""
        if self._dense_shape is None:
            return TensorShape((None,) + tuple(self._values.shape[1:]))
        return TensorShape(int(d) for d in np.asarray(self._dense_shape._value))

    def __neg__(self):
        return IndexedSlices(wrap(-self._values._value), self._indices, self._dense_shape)

    def _dense(self, dtype=None):
        """The dense tensor: the values added into zeros at their rows (TF's conversion)."""
        if self._dense_shape is None:
            raise ValueError("[IndexedSlices] cannot convert to a dense tensor without a dense_shape.")
        shape = tuple(int(d) for d in np.asarray(self._dense_shape._value))
        values = np.asarray(self._values._value)
        out = np.zeros(shape, dtype=values.dtype if dtype is None else dtypes.as_numpy_dtype(dtype))
        np.add.at(out, np.asarray(self._indices._value).reshape(-1), values)
        return wrap(out)

    def __array__(self, dtype=None, copy=None):
        """np.asarray(slices): the dense array (a convenience TF's class lacks)."""
        value = self._dense(dtype)._value
        return value.copy() if copy else value

    def __str__(self):
        shape = "" if self._dense_shape is None else f", dense_shape={self._dense_shape}"
        return f"IndexedSlices(indices={self._indices}, values={self._values}{shape})"

    __repr__ = __str__


def merge_slices(dense, parts, like):
    """`dense` (or None) plus the slices `parts` [(cotangent, indices, params), ...] added
    into zeros shaped like `like`: the dense cotangent of a gathered source."""
    out = np.zeros(np.shape(like), dtype=np.result_type(*[g for g, _, _ in parts]))
    for g, indices, _ in parts:
        np.add.at(out, np.asarray(indices), g)
    return out if dense is None else dense + out


def slices_result(parts, source):
    """The IndexedSlices gradient of `source` from its gathers' slices, in the source's dtype."""
    tail = tuple(np.shape(source._value))[1:]
    values = np.concatenate([np.reshape(g, (-1,) + tail) for g, _, _ in parts])
    indices = np.concatenate([np.reshape(i, (-1,)) for _, i, _ in parts])
    dtype = source.dtype._np
    if values.dtype != dtype and dtype.kind == "f":
        values = values.astype(dtype)
    return IndexedSlices(wrap(values), wrap(indices), wrap(np.array(np.shape(source._value), np.int32)))
