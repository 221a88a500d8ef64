"""`Variable`: a tensor with state. `assign` replaces its value; its id stays the same.

Reading a trainable variable inside a tape makes the tape watch it. State blocks
gradients: after `x1.assign_add(x0)` the tape sees x1's new value, not how it was made.
"""

import numpy as np

from ..core import dnp, dtypes
from ..core.duck import as_array, is_duck_array
from ..reverse.tensor import Tensor, TensorShape, check_escape, next_id, numpy_repr, wrap


class Variable(Tensor):
    """A mutable tensor; `Variable(3.0)` makes a float32 scalar variable named 'Variable:0'."""

    __slots__ = ("trainable", "_name", "_shape")
    _is_variable = True

    def __new__(cls, *args, **kwargs):
        return object.__new__(ResourceVariable if cls is Variable else cls)

    def __init__(self, initial_value=None, trainable=True, name=None, dtype=None, shape=None):
        if initial_value is None:
            raise ValueError("[Variable] initial_value must be specified.")
        if callable(initial_value):
            initial_value = initial_value()
        if isinstance(initial_value, Tensor):
            value = np.array(initial_value.numpy(), dtype=None if dtype is None else dtypes.as_numpy_dtype(dtype))
        else:
            value = dtypes.to_array(initial_value, dtype)
        if isinstance(value, np.ndarray):  # a dask array is immutable already
            value.flags.writeable = False
        self._value = value
        self._id = next_id()
        self.trainable = bool(trainable)
        self._name = (name or "Variable") + ":0"
        self._shape = value.shape

    @property
    def name(self):
        return self._name

    @property
    def shape(self):
        return TensorShape(self._shape)

    def value(self):
        """The current value as a tensor (a snapshot: later assignments do not change it).

        A read, recorded as one (TF's ReadVariableOp): an Identity op on the variable, so a
        recording tape watches a trainable variable read this way (watch_accessed_variables)
        and the gradient flows through, as do forward accumulators' tangents.
        """
        if is_duck_array(self._value):  # Identity copies into NumPy; this identity stays lazy
            return dnp.reshape(self, self._shape)
        return dnp.identity(self)

    def read_value(self):
        """The current value as a tensor, recorded as a read: see `value`."""
        return self.value()

    def assign(self, value, use_locking=False, name=None, read_value=True):
        """Replace the value (same shape and dtype). Not recorded: state stops gradients."""
        if isinstance(value, Tensor):
            check_escape(value, "Variable.assign")  # state blocks the functional derivative
            new = value._value
        else:
            new = value
        new = as_array(new, self._value.dtype) if is_duck_array(self._value) else np.array(new, dtype=self._value.dtype)
        if new.shape != self._shape:
            raise ValueError(f"[Variable.assign] Cannot assign value of shape {new.shape} to variable "
                             f"'{self._name}' of shape {self._shape}. Reshape the value first.")
        if isinstance(new, np.ndarray):
            new.flags.writeable = False
        self._value = new
        return self

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        """Add `delta` to the value in place, as `assign`: not recorded, state stops gradients."""
        if isinstance(delta, Tensor):
            check_escape(delta, "Variable.assign_add")
            delta = delta._value
        return self.assign(np.add(self._value, delta))

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        """Subtract `delta` from the value in place, as `assign`: not recorded, state stops gradients."""
        if isinstance(delta, Tensor):
            check_escape(delta, "Variable.assign_sub")
            delta = delta._value
        return self.assign(np.subtract(self._value, delta))

    def __repr__(self):
        return (f"<tf.Variable '{self._name}' shape={self.shape} dtype={self.dtype.name}, "
                f"numpy={numpy_repr(self._value)}>")

    def __str__(self):
        return repr(self)

    def __deepcopy__(self, memo):
        return Variable(self._value, trainable=self.trainable, name=self._name[:-2])


class ResourceVariable(Variable):
    """The concrete variable type (named as in TF)."""

    __slots__ = ()
