"""`keras.Model`: a layer that trains. Subclass it and write `call`, or build it functionally
from `keras.Input` placeholders: `keras.Model(inputs, outputs)`, replayed eagerly on each call.

>>> inputs = dualtape.keras.Input(shape=(3,))
>>> outputs = dualtape.keras.layers.Dense(2)(inputs)
>>> model = dualtape.keras.Model(inputs, outputs)
>>> model(dualtape.ones((4, 3))).shape
TensorShape([4, 2])
"""

import pickle

import numpy as np

from . import summary as summary_module
from .trainer import Trainer
from .. import graph, metrics as metrics_module
from ..layers.base import Layer
from ..naming import unique_name
from ..layers.input_layer import InputLayer
from ...core import nest
from ...reverse.tensor import wrap


class Model(Trainer, Layer):
    """Layers with `compile`, `fit`, `evaluate`, `predict`, `summary` and weight saving."""

    def __init__(self, *args, **kwargs):
        inputs = args[0] if len(args) > 0 else kwargs.pop("inputs", None)
        outputs = args[1] if len(args) > 1 else kwargs.pop("outputs", None)
        if len(args) > 2:
            raise TypeError(f"[{type(self).__name__}] takes (inputs, outputs) positionally, got {len(args)} arguments.")
        if inputs is not None and kwargs.get("name") is None and type(self) is Model:
            kwargs["name"] = unique_name("functional")
        Layer.__init__(self, **kwargs)
        self.init_trainer()
        self._graph = None
        if inputs is not None or outputs is not None:
            self.init_graph(inputs, outputs)

    def __setattr__(self, name, value):
        if (isinstance(value, metrics_module.Metric) and not name.startswith("_")
                and all(value is not m for m in getattr(self, "_metrics", []))):
            self._metrics.append(value)
        Layer.__setattr__(self, name, value)

    # -- the functional form ------------------------------------------------------------------

    def init_graph(self, inputs, outputs):
        if inputs is None or outputs is None:
            raise ValueError("[keras.Model] a functional model needs both `inputs` and `outputs` (KerasTensors "
                             "from keras.Input and from layers called on them).")
        flat_inputs, flat_outputs = nest.flatten(inputs), nest.flatten(outputs)
        for x in flat_inputs + flat_outputs:
            if not isinstance(x, graph.KerasTensor):
                raise TypeError(f"[keras.Model] inputs and outputs must be KerasTensors (keras.Input(...) and layers "
                                f"called on them), got {type(x).__name__}. To write the forward pass in Python, "
                                "subclass keras.Model and implement call().")
        for x in flat_inputs:
            if getattr(x, "input_layer", None) is None:
                raise ValueError(f"[keras.Model] every input must come from keras.Input(...); {x} is the output of "
                                 "a layer.")
        nodes = graph.nodes_between(flat_inputs, flat_outputs)
        self._graph = (inputs, outputs, flat_inputs, flat_outputs, nodes)
        for layer in [x.input_layer for x in flat_inputs] + [node.layer for node in nodes]:
            if all(layer is not known for known in self._layers):
                self._layers.append(layer)
        self.built = True

    @property
    def inputs(self):
        return None if self._graph is None else self._graph[2]

    @property
    def outputs(self):
        return None if self._graph is None else self._graph[3]

    def call(self, inputs, training=None):
        if self._graph is None:
            raise NotImplementedError(f"[{type(self).__name__}] a subclassed Model implements call(inputs), or is "
                                      "built functionally: keras.Model(inputs, outputs).")
        structure, outputs, flat_inputs, flat_outputs, nodes = self._graph
        if isinstance(inputs, dict):  # by the keys of a dict of inputs, else by the Inputs' names
            keys = sorted(structure) if isinstance(structure, dict) else [x.name for x in flat_inputs]
            missing = [key for key in keys if key not in inputs]
            if missing:
                raise ValueError(f"[{self.name}] the inputs dict has keys {sorted(inputs)}; the model's inputs are "
                                 f"named {keys} (missing {missing}).")
            values = [inputs[key] for key in keys]
        else:
            values = nest.flatten(inputs) if nest.is_nested(structure) else [inputs]
        if len(values) != len(flat_inputs):
            raise ValueError(f"[{self.name}] expected {len(flat_inputs)} input(s), got {len(values)}.")
        for x, value in zip(flat_inputs, values):
            if tuple(value.shape[1:]) != tuple(x.shape[1:]) and None not in x.shape[1:]:
                raise ValueError(f"[{self.name}] input {x.name!r} expects samples of shape {x.shape[1:]} "
                                 f"(keras.Input(shape={x.shape[1:]})), got a batch of shape {tuple(value.shape)}.")
        values = [x.input_layer.convert_input(v) for x, v in zip(flat_inputs, values)]
        call_kwargs = {} if training is None else {"training": training}
        results = graph.run(nodes, flat_inputs, values, flat_outputs, **call_kwargs)
        return nest.pack_sequence_as(outputs, results)

    # -- building -------------------------------------------------------------------------------

    def build_for_call(self, input_shapes):
        self.built = True  # the first call creates the sublayers' weights

    def build(self, input_shape=None):
        """Create the weights by running the model once on zeros of `input_shape` (batch may be None)."""
        if input_shape is None:
            raise ValueError(f"[{self.name}.build] pass the input shape, e.g. model.build((None, 784)).")
        self.built = True
        shapes = input_shape if isinstance(input_shape, list) else [input_shape]
        zeros = [wrap(np.zeros(tuple(1 if s is None else s for s in shape), self.dtype)) for shape in shapes]
        self(zeros if isinstance(input_shape, list) else zeros[0])

    # -- inspection and saving ------------------------------------------------------------------

    def summary_rows(self):
        rows = []
        for layer in self.layers:
            shape = layer.output.shape if isinstance(layer, InputLayer) else layer.output_shape_seen
            if shape is not None and self._graph is not None and isinstance(shape, tuple):
                shape = (None,) + tuple(shape[1:])
            rows.append((layer.name, type(layer).__name__, shape, layer.count_params()))
        return rows

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False, show_trainable=False,
                layer_range=None):
        """Print Keras 3's table of the layers, their output shapes and parameter counts."""
        lines = summary_module.summary_lines(self, self.summary_rows())
        for line in lines:
            (print_fn or print)(line)

    def get_layer(self, name=None, index=None):
        if index is not None:
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"[{self.name}.get_layer] no layer named {name!r}; the layers are "
                         f"{[layer.name for layer in self.layers]}.")

    def save(self, filepath, overwrite=True, **kwargs):
        raise NotImplementedError(f"[{self.name}.save] saving a whole model (.keras, SavedModel) is not supported by "
                                  "dualtape.keras; save the weights with model.save_weights(path) and rebuild the "
                                  "model in code before model.load_weights(path).")

    def save_weights(self, filepath, overwrite=True):
        """Save the weights' values (a pickle of NumPy arrays, in `weights` order; not Keras' .h5)."""
        with open(filepath, "wb") as handle:
            pickle.dump([v.numpy() for v in self.weights], handle)

    def load_weights(self, filepath, skip_mismatch=False):
        """Load weights written by `save_weights` (the model must be built with the same layers)."""
        with open(filepath, "rb") as handle:
            self.set_weights(pickle.load(handle))
