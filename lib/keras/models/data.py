"""The batches `fit`, `evaluate` and `predict` iterate over.

Arrays (NumPy or tensors, or lists/dicts of them) are cut into batches of `batch_size`,
shuffled each epoch when asked; anything else iterable (a `tf.data.Dataset`, a generator
function's output, a list of `(x, y)` pairs) is taken as already batched, one element a step.
"""

import numpy as np

from ...core import nest
from ...reverse.tensor import Tensor


def values(x):
    """NumPy arrays for the leaves of `x` (tensors read once)."""
    return nest.map_structure(lambda a: None if a is None else a.numpy() if isinstance(a, Tensor) else np.asarray(a),
                              x)


def num_samples(structure, api):
    sizes = {np.shape(a)[0] for a in nest.flatten(structure) if a is not None}
    if len(sizes) != 1:
        raise ValueError(f"[{api}] all inputs and targets must have the same number of samples (first dimension), "
                         f"got sizes {sorted(sizes)}.")
    return sizes.pop()


def unpack(data):
    """(x, y, sample_weight) from a batch: x, (x,), (x, y) or (x, y, sample_weight)."""
    if isinstance(data, tuple):
        if len(data) == 1:
            return data[0], None, None
        if len(data) == 2:
            return data[0], data[1], None
        if len(data) == 3:
            return data
        raise ValueError(f"[fit] a batch must be x, (x,), (x, y) or (x, y, sample_weight); got a tuple of "
                         f"{len(data)} elements.")
    return data, None, None


class ArrayBatches:
    """Batches of in-memory arrays; `len()` is the number of steps per epoch."""

    def __init__(self, x, y=None, sample_weight=None, batch_size=None, shuffle=False, api="fit"):
        self.data = values((x, y, sample_weight))
        self.size = num_samples(self.data, api)
        self.batch_size = int(batch_size or 32)
        self.shuffle = shuffle

    def __len__(self):
        return -(-self.size // self.batch_size)

    def split(self, fraction):
        """(training part, validation part): the last `fraction` of the samples is for validation."""
        cut = int(self.size * (1.0 - fraction))
        if cut == 0 or cut == self.size:
            raise ValueError(f"[fit] validation_split={fraction} leaves no training or no validation samples "
                             f"out of {self.size}.")
        head = ArrayBatches(*nest.map_structure(lambda a: None if a is None else a[:cut], self.data),
                            self.batch_size, self.shuffle)
        tail = ArrayBatches(*nest.map_structure(lambda a: None if a is None else a[cut:], self.data),
                            self.batch_size, False)
        return head, tail

    def __iter__(self):
        order = np.random.permutation(self.size) if self.shuffle else np.arange(self.size)
        x, y, sample_weight = self.data
        for start in range(0, self.size, self.batch_size):
            index = order[start:start + self.batch_size]
            pick = (lambda a: None if a is None else a[index])
            batch = (nest.map_structure(pick, x), nest.map_structure(pick, y), nest.map_structure(pick, sample_weight))
            yield batch[0] if y is None and sample_weight is None else batch[:2] if sample_weight is None else batch


class IterableBatches:
    """Batches from an iterable; re-iterated each epoch (a one-shot iterator serves one epoch)."""

    def __init__(self, iterable, steps=None):
        self.iterable, self.steps = iterable, steps
        self.known = None
        try:
            self.known = len(iterable)
        except TypeError:
            pass

    def __len__(self):
        if self.steps is not None:
            return int(self.steps)
        if self.known is None:
            raise TypeError("length unknown")
        return self.known

    def __iter__(self):
        if self.steps is not None and iter(self.iterable) is self.iterable:
            # an iterator (a generator) with steps_per_epoch: each epoch takes the next steps
            for _ in range(int(self.steps)):
                try:
                    yield next(self.iterable)
                except StopIteration:
                    return
            return
        for step, batch in enumerate(self.iterable):
            if self.steps is not None and step >= self.steps:
                return
            yield batch


def numbers_as_array(x):
    """Nested Python numbers (a list of rows) are one array, not a list of inputs."""
    if isinstance(x, (list, tuple)) and x and all(isinstance(v, (int, float)) for v in nest.flatten(x)):
        return np.asarray(x)
    return x


def batches(x, y=None, sample_weight=None, batch_size=None, shuffle=False, steps=None, api="fit"):
    """ArrayBatches for arrays, IterableBatches for a dataset or other iterable of batches."""
    x, y, sample_weight = numbers_as_array(x), numbers_as_array(y), numbers_as_array(sample_weight)
    children = list(x.values()) if isinstance(x, dict) else list(x) if isinstance(x, (list, tuple)) else []
    if isinstance(x, (np.ndarray, Tensor)) or (children and all(isinstance(c, (np.ndarray, Tensor)) for c in children)):
        return ArrayBatches(x, y, sample_weight, batch_size, shuffle, api)
    if y is not None:
        raise ValueError(f"[{api}] `y` must not be given when `x` is a dataset or another iterable of batches "
                         f"(got x of type {type(x).__name__}); put the targets in the batches: (x, y).")
    if x is None or not hasattr(x, "__iter__"):
        raise TypeError(f"[{api}] expected x to be an array, a tensor, a list/dict of arrays, or an iterable of "
                        f"(x, y) batches such as a tf.data.Dataset, got {type(x).__name__}.")
    return IterableBatches(x, steps)
