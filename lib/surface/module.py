"""`Module`: a named container whose variables are found by walking its attributes."""

import re

from .variables import Variable


class Module:
    """Collect `Variable`s held in attributes (also inside lists, tuples, dicts, submodules).

    >>> class Affine(dualtape.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.w = dualtape.Variable([[1.0, 2.0]])
    ...         self.b = dualtape.Variable([0.0], trainable=False)
    >>> [v.name for v in Affine().trainable_variables]
    ['Variable:0']
    """

    def __init__(self, name=None):
        self._name = name or snake_case(type(self).__name__)

    @property
    def name(self):
        return self._name

    @property
    def variables(self):
        """Every variable of this module and its submodules, attributes in sorted order."""
        return tuple(_walk(self, Variable, set()))

    @property
    def trainable_variables(self):
        return tuple(v for v in self.variables if v.trainable)

    @property
    def non_trainable_variables(self):
        return tuple(v for v in self.variables if not v.trainable)

    @property
    def submodules(self):
        return tuple(m for m in _walk(self, Module, set()) if m is not self)


def snake_case(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _walk(obj, kind, seen):
    """Depth-first, attributes sorted by name (as tf.Module), each object once."""
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, kind):
        yield obj
    if isinstance(obj, Variable):
        return
    if isinstance(obj, Module):
        children = [v for _, v in sorted(vars(obj).items())]
    elif isinstance(obj, dict):
        children = [obj[k] for k in sorted(obj, key=str)]
    elif isinstance(obj, (list, tuple)):
        children = list(obj)
    else:
        return
    for child in children:
        if isinstance(child, (Module, Variable, list, tuple, dict)):
            yield from _walk(child, kind, seen)
