"""`Layer`: a callable that creates its weights from the first input's shape (Keras 3).

A layer tracks the weights it creates (`add_weight`) and the layers and variables assigned
to its attributes, in assignment order, so `weights` lists them as Keras does: its own
trainable weights, its own non-trainable ones, then each sublayer's. Floating inputs are cast
to the layer's dtype (float32), as Keras' autocasting does. A call that does not pass
`training=` inherits the value of the outermost call that did (Keras' call context).
Variables are named as TF 2 names them: `dense/kernel:0`, `dense_1/kernel:0`, ...
"""

import functools
import inspect

import numpy as np

from .. import graph, initializers, regularizers
from ..naming import snake_case, unique_name
from ...core import nest
from ...reverse.tensor import Tensor, convert_to_tensor
from ...surface.module import Module
from ...surface.tf_ops import cast
from ...surface.variables import Variable

call_context = []  # the `training` values of the calls in progress, outermost first
call_depth = [0]  # how many layer calls are in progress (0: the next call is an outermost one)


@functools.lru_cache(maxsize=None)
def call_parameters(cls):
    """The parameter names of `cls.call` (to pass `training=` only where it is accepted)."""
    parameters = inspect.signature(cls.call).parameters
    names = set(parameters)
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        names.add("**")
    return frozenset(names)


class Layer(Module):
    """Base class of layers: override `build(input_shape)` (create weights) and `call(inputs)`.

    >>> class Scale(dualtape.keras.layers.Layer):
    ...     def build(self, input_shape):
    ...         self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="w")
    ...     def call(self, x):
    ...         return x * self.w
    >>> Scale()(dualtape.constant([[1.0, 2.0]])).numpy()
    array([[1., 2.]], dtype=float32)
    """

    def __init__(self, name=None, dtype="float32", trainable=True, input_shape=None, input_dim=None, **kwargs):
        # `<weight>_regularizer=` penalises the weight of that name (kernel, bias, recurrent_kernel, ...)
        weight_regularizers = {key[:-len("_regularizer")]: regularizers.get(kwargs.pop(key))
                               for key in [k for k in kwargs if k.endswith("_regularizer")]}
        activity_regularizer = weight_regularizers.pop("activity", None)
        for unsupported in [k for k in kwargs if k.endswith("_constraint")]:
            if kwargs.pop(unsupported) is not None:
                raise ValueError(f"[{type(self).__name__}] `{unsupported}` is not supported by dualtape.keras; "
                                 "clip or project the weight after each optimizer step instead.")
        kwargs.pop("autocast", None)
        if kwargs:
            raise TypeError(f"[{type(self).__name__}] unexpected keyword arguments: {sorted(kwargs)}.")
        object.__setattr__(self, "_layers", [])
        object.__setattr__(self, "_own_weights", [])
        object.__setattr__(self, "_tracked_variables", [])
        object.__setattr__(self, "_regularized", [])  # (variable, regularizer) pairs
        super().__init__(name or unique_name(snake_case(type(self).__name__)))
        self.built = False
        self.dtype = np.dtype(getattr(dtype, "as_numpy_dtype", dtype) or "float32")
        self._trainable = bool(trainable)
        self._added_losses = []
        self.weight_regularizers = {k: v for k, v in weight_regularizers.items() if v is not None}
        self.activity_regularizer = activity_regularizer
        self.output_shape_seen = None
        if input_dim is not None and input_shape is None:
            input_shape = (input_dim,)
        self.declared_input_shape = None if input_shape is None else tuple(input_shape)

    # -- tracking ------------------------------------------------------------------------------

    def __setattr__(self, name, value):
        if not name.startswith("_"):
            for item in (value if isinstance(value, (list, tuple)) else [value]):
                if isinstance(item, Layer) and item is not self and all(item is not x for x in self._layers):
                    self._layers.append(item)
                elif (isinstance(item, Variable) and all(item is not w for w in self._own_weights)
                      and all(item is not w for w in self._tracked_variables)):
                    self._tracked_variables.append(item)
        object.__setattr__(self, name, value)

    @property
    def layers(self):
        return list(self._layers)

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        self._trainable = bool(value)
        for layer in self._layers:
            layer.trainable = value

    def add_weight(self, shape=None, initializer=None, dtype=None, trainable=True, name=None, **kwargs):
        """Create a variable of `shape` owned by this layer (Keras 3's signature), named
        '<layer>/<name>:0'; `regularizer=` (or the layer's `<name>_regularizer=`) penalises it."""
        if isinstance(shape, str):
            raise TypeError(f"[{self.name}.add_weight] got the name {shape!r} where the shape goes; pass keywords: "
                            "add_weight(shape=..., initializer=..., name=...).")
        regularizer = regularizers.get(kwargs.pop("regularizer", None)) or self.weight_regularizers.get(name)
        if kwargs.pop("constraint", None) is not None:
            raise ValueError(f"[{self.name}.add_weight] `constraint` is not supported by dualtape.keras; clip or "
                             "project the weight after each optimizer step instead.")
        for ignored in ("autocast", "aggregation", "synchronization", "use_resource"):
            kwargs.pop(ignored, None)
        if kwargs:
            raise TypeError(f"[{self.name}.add_weight] unexpected keyword arguments: {sorted(kwargs)}.")
        dtype = np.dtype(getattr(dtype, "as_numpy_dtype", dtype) or self.dtype)
        if initializer is None:
            initializer = "glorot_uniform" if dtype.kind == "f" else "zeros"
        init = initializers.get(initializer)
        shape = () if shape is None else tuple(int(s) for s in shape)
        value = np.asarray(init(shape, dtype), dtype=dtype)
        variable = Variable(value, trainable=trainable, name=f"{self.name}/{name or 'variable'}")
        self._own_weights.append(variable)
        if regularizer is not None:
            self._regularized.append((variable, regularizer))
        return variable

    def own_variables(self):
        own = self._own_weights + [v for v in self._tracked_variables if all(v is not w for w in self._own_weights)]
        return [v for v in own if v.trainable] + [v for v in own if not v.trainable]

    @property
    def weights(self):
        found, seen = [], set()
        for v in self.own_variables() + [w for layer in self._layers for w in layer.weights]:
            if id(v) not in seen:
                seen.add(id(v))
                found.append(v)
        return found

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        found, seen = [], set()
        own = [v for v in self.own_variables() if v.trainable]
        for v in own + [w for layer in self._layers for w in layer.trainable_weights]:
            if id(v) not in seen:
                seen.add(id(v))
                found.append(v)
        return found

    @property
    def non_trainable_weights(self):
        trainable = {id(v) for v in self.trainable_weights}
        return [v for v in self.weights if id(v) not in trainable]

    variables = weights
    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    def get_weights(self):
        """The weights' values as NumPy arrays, in `weights` order."""
        return [v.numpy() for v in self.weights]

    def set_weights(self, weights):
        """Assign NumPy arrays to `weights`, in order; counts and shapes must match."""
        weights = list(weights)
        mine = self.weights
        if len(weights) != len(mine):
            raise ValueError(f"[{self.name}.set_weights] expected {len(mine)} arrays "
                             f"({[tuple(v.shape) for v in mine]}), got {len(weights)}. Build the layer first "
                             "(call it once, or model.build(input_shape)) so its weights exist.")
        for variable, value in zip(mine, weights):
            value = np.asarray(value)
            if value.shape != tuple(variable.shape):
                raise ValueError(f"[{self.name}.set_weights] {variable.name} has shape {tuple(variable.shape)}, "
                                 f"got an array of shape {value.shape}.")
            variable.assign(value.astype(variable.dtype.as_numpy_dtype))

    def rename(self, name):
        """Give an unbuilt layer another name (its weights take it: 'forward_lstm/kernel:0')."""
        if self.built:
            raise ValueError(f"[{self.name}] a built layer keeps its name (its weights carry it); rename it "
                             "before its first call.")
        self._name = name

    def count_params(self):
        return int(sum(np.prod(v.shape) for v in self.weights))

    # -- losses added by layers ------------------------------------------------------------------

    def add_loss(self, loss):
        """Add a scalar to the losses of this call (`model.losses`; `fit` adds them to the loss)."""
        self._added_losses.append(loss)

    @property
    def losses(self):
        """The losses added during the latest outermost call (`add_loss`, activity regularizers),
        this layer's and its sublayers', then the penalties of the trainable weights'
        regularizers, computed now (Keras 3's order)."""
        regularized = dict(self.regularized_weights())
        return self.added_losses() + [regularized[id(v)][1](v) for v in self.trainable_weights if id(v) in regularized]

    def added_losses(self):
        return list(self._added_losses) + [x for layer in self._layers for x in layer.added_losses()]

    def regularized_weights(self):
        """(id, (variable, regularizer)) for every regularized weight of this layer and its sublayers."""
        return [(id(v), (v, r)) for v, r in self._regularized] + [
            pair for layer in self._layers for pair in layer.regularized_weights()]

    def clear_losses(self):
        self._added_losses.clear()
        for layer in self._layers:
            layer.clear_losses()

    # -- building and calling --------------------------------------------------------------------

    def build(self, input_shape):
        self.built = True

    def __init_subclass__(cls, **kwargs):
        """A subclass's `build` marks the layer built, whether called by hand or by `__call__`."""
        super().__init_subclass__(**kwargs)
        if "build" in cls.__dict__:
            original = cls.__dict__["build"]

            @functools.wraps(original)
            def build(self, input_shape=None, *args, **kwargs):
                original(self, input_shape, *args, **kwargs)
                self.built = True

            cls.build = build

    def accepted(self, call_kwargs):
        """The subset of `call_kwargs` (such as `training`) that this layer's call accepts."""
        names = call_parameters(type(self))
        return {k: v for k, v in call_kwargs.items() if k in names or "**" in names}

    def convert_input(self, x):
        """Inputs as tensors; floating ones cast to the layer's dtype (Keras' autocast)."""
        if isinstance(x, graph.KerasTensor) or x is None or isinstance(x, (str, bool)):
            return x
        if not isinstance(x, Tensor):
            x = convert_to_tensor(x, dtype=self.dtype if not hasattr(x, "dtype") and np.asarray(x).dtype.kind == "f"
                                  else None)
        if x.dtype.is_floating and x.dtype.as_numpy_dtype != self.dtype and self.dtype.kind == "f":
            x = cast(x, self.dtype)
        return x

    def __call__(self, inputs, *args, **kwargs):
        if isinstance(inputs, (list, tuple)) and all(isinstance(x, (int, float)) for x in nest.flatten(inputs)):
            inputs = np.asarray(inputs)  # nested Python numbers are one array, not a list of inputs
        inputs = nest.map_structure(self.convert_input, inputs)
        if graph.is_symbolic((inputs, args, kwargs)):
            return graph.symbolic_call(self, (inputs,) + args, kwargs)
        if not self.built:
            self.build_for_call(nest.map_structure(lambda x: tuple(x.shape) if hasattr(x, "shape") else None, inputs))
        names = call_parameters(type(self))
        explicit = "training" in kwargs and kwargs["training"] is not None
        training = bool(kwargs["training"]) if explicit else None
        if "training" in names and not explicit:
            kwargs.pop("training", None)
            if call_context:
                kwargs["training"] = call_context[-1]
        elif "training" not in names and "**" not in names:
            kwargs.pop("training", None)
        if not call_depth[0]:
            self.clear_losses()  # an outermost call starts the losses that `add_loss` collects afresh
        if explicit:
            call_context.append(training)
        call_depth[0] += 1
        try:
            outputs = self.call(inputs, *args, **kwargs)
        finally:
            call_depth[0] -= 1
            if explicit:
                call_context.pop()
        if self.activity_regularizer is not None:  # per sample: divided by the batch size, as Keras 3
            for output in nest.flatten(outputs):
                if isinstance(output, Tensor):
                    penalty = self.activity_regularizer(output)
                    if len(output.shape) and output.shape[0]:
                        penalty = penalty / np.asarray(output.shape[0], penalty.dtype.as_numpy_dtype)
                    self.add_loss(penalty)
        if self.output_shape_seen is None:  # the first call's, as Keras' summary shows
            self.output_shape_seen = nest.map_structure(lambda x: tuple(x.shape) if hasattr(x, "shape") else None,
                                                        outputs)
        return outputs

    def build_for_call(self, input_shapes):
        """Build before the first call (a model instead creates its weights during that call)."""
        self.build(input_shapes)
        self.built = True

    def call(self, inputs, *args, **kwargs):
        raise NotImplementedError(f"[{type(self).__name__}] a Layer subclass implements call(inputs).")

    def compute_output_shape(self, input_shape):
        """The output shape for `input_shape`, found by calling the layer on a placeholder."""
        out = self(graph.KerasTensor(input_shape))
        return nest.map_structure(lambda t: t.shape, out)

    def get_config(self):
        return {"name": self.name, "trainable": self.trainable, "dtype": self.dtype.name}

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"
