"""`keras.Sequential`: a model that calls its layers one after another.

>>> model = dualtape.keras.Sequential([dualtape.keras.Input((4,)), dualtape.keras.layers.Dense(2)])
>>> [v.name for v in model.trainable_variables]
['dense/kernel:0', 'dense/bias:0']
"""

from .model import Model
from .. import graph
from ..layers.base import Layer
from ..naming import unique_name
from ..layers.input_layer import InputLayer


class Sequential(Model):
    """`Sequential([layer, ...])` or `add(layer)`; an `Input` (or `input_shape=` on the first
    layer) builds each layer as it is added, so `summary()` works before any data."""

    def __init__(self, layers=None, trainable=True, name=None):
        super().__init__(trainable=trainable, name=name or unique_name("sequential"))
        self.input_layer = None
        for layer in layers or []:
            self.add(layer)

    @property
    def layers(self):
        return [layer for layer in self._layers if not isinstance(layer, InputLayer)]

    def add(self, layer):
        """Append a layer (or a keras.Input, as the first element)."""
        if isinstance(layer, graph.KerasTensor) and getattr(layer, "input_layer", None) is not None:
            layer = layer.input_layer
        if not isinstance(layer, Layer):
            raise TypeError(f"[{self.name}.add] expected a keras layer, got {type(layer).__name__}.")
        if isinstance(layer, InputLayer):
            if self._layers:
                raise ValueError(f"[{self.name}.add] an Input must come first, before any layer.")
            self.input_layer = layer
        elif self.input_layer is None and not self._layers and layer.declared_input_shape is not None:
            self.input_layer = InputLayer(shape=layer.declared_input_shape)
            self._layers.append(self.input_layer)
        self._layers.append(layer)
        if self.input_layer is not None and not isinstance(layer, InputLayer):
            self.build_symbolically()

    def pop(self):
        if not self.layers:
            raise TypeError(f"[{self.name}.pop] there are no layers to remove.")
        self._layers.pop()

    def build_symbolically(self):
        """Build the layers from the Input's shape, by calling each on a placeholder."""
        x = self.input_layer.output
        for layer in self.layers:
            x = layer(x)
        self.built = True

    def build(self, input_shape=None):
        if input_shape is None and self.input_layer is not None:
            return
        super().build(input_shape)

    def call(self, inputs, training=None):
        x = inputs
        call_kwargs = {} if training is None else {"training": training}
        for layer in self.layers:
            x = layer(x, **layer.accepted(call_kwargs))
        return x

    def summary_rows(self):
        rows = []
        for layer in self.layers:
            shape = layer.output_shape_seen
            if shape is not None and isinstance(shape, tuple):
                shape = (None,) + tuple(shape[1:])
            rows.append((layer.name, type(layer).__name__, shape, layer.count_params()))
        return rows
