"""Symbolic tensors for the functional API: `keras.Input` and layers called on them.

Calling a layer on a `KerasTensor` records a `Node` (the layer, its arguments with the
symbolic tensors in place) and returns new `KerasTensor`s whose shapes come from running the
layer once on a batch of one (a `None` dimension read as 1). `Model(inputs, outputs)` walks
the nodes back from its outputs and replays them eagerly on real tensors (`run`).
"""

import numpy as np

from ..core import nest
from ..reverse.tensor import wrap


class KerasTensor:
    """A placeholder: a shape (batch dimension None), a dtype, and the node that made it."""

    def __init__(self, shape, dtype="float32", node=None, index=0, name=None):
        self.shape = tuple(None if s is None else int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.node, self.index, self.name = node, index, name

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype.name}, name={self.name}>"

    def refuse(self, *args, **kwargs):
        raise TypeError(f"[keras.Input] a KerasTensor {self.shape} is a placeholder of the functional API: "
                        "only keras layers can be called on it. Wrap this computation in a layer "
                        "(keras.layers.Lambda(lambda x: ...)) or a Layer subclass.")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __matmul__ = refuse
    __array__ = __float__ = __getitem__ = __neg__ = __pow__ = refuse


class Node:
    """One layer call on symbolic inputs: replayed as `layer(*args, **kwargs)`."""

    def __init__(self, layer, args, kwargs, outputs):
        self.layer, self.args, self.kwargs, self.outputs = layer, args, kwargs, outputs

    @property
    def inputs(self):
        return [x for x in nest.flatten((self.args, self.kwargs)) if isinstance(x, KerasTensor)]


def is_symbolic(structure):
    return any(isinstance(x, KerasTensor) for x in nest.flatten(structure))


def concrete(x):
    """A zero tensor standing for a KerasTensor (batch of one); other values as they are."""
    if not isinstance(x, KerasTensor):
        return x
    return wrap(np.zeros(tuple(1 if s is None else s for s in x.shape), x.dtype))


def symbolic_call(layer, args, kwargs):
    """Call `layer` on symbolic arguments: run it on stand-ins, record a node, return KerasTensors."""
    stand_in_args = nest.map_structure(concrete, args)
    stand_in_kwargs = nest.map_structure(concrete, kwargs)
    result = layer(*stand_in_args, **stand_in_kwargs)
    node = Node(layer, args, kwargs, None)
    leaves = nest.flatten(result)
    outputs = [KerasTensor((None,) + tuple(np.shape(leaf))[1:], leaf.dtype.as_numpy_dtype, node, i, layer.name)
               for i, leaf in enumerate(leaves)]
    node.outputs = outputs
    return nest.pack_sequence_as(result, outputs)


def nodes_between(inputs, outputs):
    """The nodes from `inputs` to `outputs`, in an order that runs each after its inputs."""
    inputs_ids = {id(x) for x in inputs}
    order, seen = [], set()

    def visit(tensor):
        if id(tensor) in inputs_ids:
            return
        node = tensor.node
        if node is None:
            raise ValueError(f"[keras.Model] output {tensor} does not depend on the model's inputs: "
                             "pass every keras.Input it was computed from in `inputs`.")
        if id(node) in seen:
            return
        seen.add(id(node))
        for x in node.inputs:
            visit(x)
        order.append(node)

    for tensor in outputs:
        visit(tensor)
    return order


def run(nodes, inputs, values, outputs, **call_kwargs):
    """Replay `nodes` with `values` in place of `inputs`; return the values of `outputs`."""
    known = {id(x): v for x, v in zip(inputs, values)}

    def value(x):
        return known[id(x)] if isinstance(x, KerasTensor) else x

    for node in nodes:
        args = nest.map_structure(value, node.args)
        kwargs = {**nest.map_structure(value, node.kwargs), **node.layer.accepted(call_kwargs)}
        leaves = nest.flatten(node.layer(*args, **kwargs))
        for x, leaf in zip(node.outputs, leaves):
            known[id(x)] = leaf
    return [known[id(x)] for x in outputs]
