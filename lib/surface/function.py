"""`tf.function`, `tf.TensorSpec`, `tf.py_function` and `tf.numpy_function`, run eagerly.

dualtape has no graphs: a `tf.function` calls the Python function each time, so it gives
the eager results (and gradients: a tape around or inside it records every op). What
graph tracing would add is kept where a training script can observe it: an
`input_signature` checks and converts the arguments as TF does, and what the function
returns comes back as tensors (a Python float returned from a `tf.function` is a tensor in
TF). Python side effects (print, appending to a list) run on every call, as under
`tf.config.run_functions_eagerly(True)`.
"""

import functools as _functools

import numpy as _np

from ..core import dtypes as _dtypes, nest as _nest
from ..core.errors import InvalidArgumentError as _InvalidArgumentError
from ..core.registry import Traced as _Traced
from ..reverse.tensor import Tensor as _Tensor, TensorShape, convert_to_tensor as _convert, wrap as _wrap

__all__ = ["function", "Function", "TensorSpec", "py_function", "numpy_function"]


class TensorSpec:
    """The shape and dtype of a tensor, as `tf.TensorSpec`; `None` dimensions match any size.

    >>> TensorSpec(shape=(None, 3), dtype=float32)
    TensorSpec(shape=(None, 3), dtype=tf.float32, name=None)
    """

    def __init__(self, shape, dtype=_dtypes.float32, name=None):
        self.shape = TensorShape(() if shape is None else tuple(None if d is None else int(d) for d in shape))
        self._unknown_rank = shape is None
        self.dtype = _dtypes.as_dtype(dtype)
        self.name = name

    @classmethod
    def from_tensor(cls, tensor, name=None):
        tensor = _convert(tensor)
        return cls(tensor.shape, tensor.dtype, name)

    def is_compatible_with(self, spec_or_value):
        """True when a tensor (or spec) has this dtype and a shape these dimensions allow."""
        if isinstance(spec_or_value, TensorSpec):
            other_shape, other_dtype = spec_or_value.shape, spec_or_value.dtype
            if spec_or_value._unknown_rank:
                return other_dtype == self.dtype
        else:
            value = spec_or_value if isinstance(spec_or_value, _Tensor) else _convert(spec_or_value)
            other_shape, other_dtype = value.shape, value.dtype
        if other_dtype != self.dtype:
            return False
        if self._unknown_rank:
            return True
        return len(other_shape) == len(self.shape) and all(
            a is None or b is None or a == b for a, b in zip(self.shape, other_shape))

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and self.shape == other.shape and self.dtype == other.dtype
                and self._unknown_rank == other._unknown_rank and self.name == other.name)

    def __hash__(self):
        return hash((tuple(self.shape), self.dtype.name, self.name))

    def __repr__(self):
        shape = "<unknown>" if self._unknown_rank else str(tuple(self.shape))
        return f"TensorSpec(shape={shape}, dtype=tf.{self.dtype.name}, name={self.name!r})"


def _conform(value, spec, where):
    """`value` as a tensor matching `spec`, or TF's kind of error naming the argument."""
    if isinstance(value, _Traced) and not isinstance(value, _Tensor):
        value = _wrap(value)  # a dual number inside jvp: keep its tangent
    elif not isinstance(value, _Tensor):
        try:
            value = _convert(value, spec.dtype)
        except (TypeError, ValueError) as error:
            raise TypeError(f"[tf.function] {where}: cannot convert {value!r} to a tensor of dtype "
                            f"{spec.dtype.name} for {spec}. Pass a value of that dtype.") from error
    if not spec.is_compatible_with(value):
        raise TypeError(f"[tf.function] {where} has shape {tuple(value.shape)} and dtype {value.dtype.name}, "
                        f"which does not match the input_signature's {spec}. Pass a tensor of that "
                        "shape and dtype (tf.cast / tf.reshape), or widen the signature with None dimensions.")
    return value


def _as_output(value):
    """What a graph function returns: numbers and arrays become tensors; tensors, variables,
    None and other Python objects pass through."""
    if isinstance(value, (bool, int, float, complex, _np.ndarray, _np.generic)):
        return _convert(value)
    return value


class Function:
    """What `tf.function` returns: calls the Python function eagerly (see the module doc)."""

    def __init__(self, python_function, input_signature=None, jit_compile=None, reduce_retracing=False,
                 autograph=True, name=None, experimental_relax_shapes=None, **_ignored):
        if not callable(python_function):
            raise TypeError(f"[tf.function] expects a callable, got {type(python_function).__name__}. "
                            "Decorate a function or a method: @tf.function.")
        if input_signature is not None:
            input_signature = tuple(input_signature)
            for spec in _nest.flatten(input_signature):
                if not isinstance(spec, TensorSpec):
                    raise TypeError(f"[tf.function] input_signature must hold tf.TensorSpec objects, got "
                                    f"{type(spec).__name__}. Write tf.TensorSpec(shape, dtype).")
        self.python_function = python_function
        self.input_signature = input_signature
        self.jit_compile = jit_compile
        self.reduce_retracing = reduce_retracing or bool(experimental_relax_shapes)
        self.autograph = autograph
        self._name = name or getattr(python_function, "__name__", "function")
        self._attribute = None
        _functools.update_wrapper(self, python_function)

    @property
    def name(self):
        return self._name

    def __set_name__(self, owner, name):
        self._attribute = name

    def __get__(self, instance, owner=None):
        """A method decorated with tf.function: bound once per instance, as TF does (kept in the
        instance's __dict__ under the method's name, so it lives as long as the instance)."""
        if instance is None:
            return self
        bound = Function(self.python_function.__get__(instance, owner), self.input_signature, self.jit_compile,
                         self.reduce_retracing, self.autograph, self._name)
        if self._attribute is not None:  # (None: assigned outside a class body)
            try:
                vars(instance)[self._attribute] = bound  # later lookups find it there, not here
            except TypeError:  # an instance without a __dict__ (__slots__)
                pass
        return bound

    def _signed(self, args, kwargs):
        signature = self.input_signature
        if signature is None:
            return args, kwargs
        if kwargs:
            raise TypeError(f"[tf.function] {self._name} has an input_signature; pass its "
                            f"{len(signature)} arguments by position, not by keyword ({sorted(kwargs)}).")
        if len(args) != len(signature):
            raise TypeError(f"[tf.function] {self._name} takes {len(signature)} positional arguments by its "
                            f"input_signature, got {len(args)}. Pass one value per tf.TensorSpec.")
        conformed = []
        for i, (arg, spec) in enumerate(zip(args, signature)):
            specs = _nest.flatten(spec)
            try:
                values = _nest.flatten(arg) if _nest.is_nested(spec) else [arg]
            except TypeError:
                values = [arg]
            if len(values) != len(specs):
                raise TypeError(f"[tf.function] argument {i} of {self._name} does not have the structure "
                                f"of its input_signature entry {spec}. Pass a matching nested structure.")
            parts = [_conform(v, s, f"argument {i} of {self._name}") for v, s in zip(values, specs)]
            conformed.append(_nest.pack_sequence_as(spec, parts) if _nest.is_nested(spec) else parts[0])
        return tuple(conformed), {}

    def __call__(self, *args, **kwargs):
        args, kwargs = self._signed(args, kwargs)
        return _nest.map_structure(_as_output, self.python_function(*args, **kwargs))

    def get_concrete_function(self, *args, **kwargs):
        """A callable for these argument types; eagerly, the function itself."""
        return self

    def experimental_get_tracing_count(self):
        return 0  # nothing is ever traced

    def __repr__(self):
        return f"<dualtape.function {self._name} (runs eagerly)>"


def function(func=None, input_signature=None, autograph=True, jit_compile=None, reduce_retracing=False,
             experimental_implements=None, experimental_autograph_options=None, experimental_attributes=None,
             experimental_relax_shapes=None, experimental_compile=None, experimental_follow_type_hints=None,
             name=None):
    """`tf.function`, bare (`@tf.function`) or with options (`@tf.function(input_signature=...)`).

    Runs `func` eagerly on each call with the same results and gradients; the options are
    accepted for compatibility (`input_signature` is checked: see `Function`).

    >>> f = function(lambda x: x * 2.0)
    >>> f(1.5)
    <tf.Tensor: shape=(), dtype=float32, numpy=3.0>
    """
    options = dict(input_signature=input_signature, jit_compile=jit_compile if jit_compile is not None
                   else experimental_compile, reduce_retracing=reduce_retracing, autograph=autograph, name=name,
                   experimental_relax_shapes=experimental_relax_shapes)
    if func is None:
        return lambda f: Function(f, **options)
    return Function(func, **options)


def _tout_list(Tout):
    if Tout is None:
        return None, []
    if isinstance(Tout, (list, tuple)):
        return False, [_dtypes.as_dtype(t) for t in Tout]
    return True, [_dtypes.as_dtype(Tout)]


def _results(api, func, outputs, Tout, convert):
    single, dtypes = _tout_list(Tout)
    if single is None:
        return None
    values = [outputs] if single else (list(outputs) if isinstance(outputs, (list, tuple)) else [outputs])
    if len(values) != len(dtypes):
        raise ValueError(f"[{api}] {getattr(func, '__name__', 'func')} returned {len(values)} values but Tout "
                         f"declares {len(dtypes)} ({[d.name for d in dtypes]}). Make Tout list one dtype per "
                         "returned value.")
    out = [convert(v, d, i) for i, (v, d) in enumerate(zip(values, dtypes))]
    return out[0] if single else out


def _inputs(api, inp):
    if not isinstance(inp, (list, tuple)):
        raise TypeError(f"[{api}] inp must be a list of tensors (one per argument of func), got "
                        f"{type(inp).__name__}. Write [x] for a single input.")
    return inp


def _check_dtype(api, func, index, got, dtype):
    if _np.dtype(got) != _dtypes.as_numpy_dtype(dtype):
        raise _InvalidArgumentError(f"[{api}] value {index} returned by {getattr(func, '__name__', 'func')} "
                                   f"has dtype {_np.dtype(got).name}, but Tout expects {dtype.name}. Return "
                                   f"arrays of dtype {dtype.name} (x.astype(...)) or change Tout.")


def py_function(func, inp, Tout, name=None):
    """`tf.py_function`: calls `func` eagerly on the tensors `inp` (a list); its ops are
    recorded by any tape, so gradients flow through it, as in TF. `Tout` is a dtype (one
    tensor back) or a list of dtypes (a list back)."""
    args = [x if isinstance(x, _Traced) else _convert(x) for x in _inputs("py_function", inp)]

    def convert(value, dtype, index):
        if isinstance(value, _Traced):
            tensor = value if isinstance(value, _Tensor) else _wrap(value)
            if tensor.dtype != dtype:
                _check_dtype("py_function", func, index, _dtypes.as_numpy_dtype(tensor.dtype), dtype)
            return tensor
        return _convert(value, dtype)  # arrays and Python numbers are converted, as TF's convert_to_tensor

    return _results("py_function", func, func(*args), Tout, convert)


def numpy_function(func, inp, Tout, stateful=True, name=None):
    """`tf.numpy_function`: calls `func` on NumPy arrays (each input's `.numpy()`) and wraps
    what it returns in tensors of `Tout`. Nothing is differentiated through it: a tape's
    gradient with respect to an input is None, as in TF (use `tf.py_function` to keep it)."""
    args = [x.numpy() if isinstance(x, _Tensor) else _np.asarray(x) for x in _inputs("numpy_function", inp)]

    def convert(value, dtype, index):
        if isinstance(value, _Traced):
            raise TypeError(f"[numpy_function] {getattr(func, '__name__', 'func')} returned a tensor; it "
                            "must return NumPy arrays. Call .numpy(), or use tf.py_function for tensors.")
        if isinstance(value, (_np.ndarray, _np.generic)):
            _check_dtype("numpy_function", func, index, value.dtype, dtype)
        return _wrap(_dtypes.to_array(value, dtype))

    return _results("numpy_function", func, func(*args), Tout, convert)
