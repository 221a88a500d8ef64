"""`ArrayLike`: what the traced values that hold an array share (dual numbers, vmap's batched
values, sparsity's patterns). Beside traced.py, which dnp imports: this one imports dnp."""

import math

from . import dnp
from .traced import Traced


class ArrayLike(Traced):
    """What the traced values that hold an array (dual numbers, vmap's batched values, sparsity's
    patterns) share: `ndim` and `size` read from their `shape`, `.T`, and the sequence protocol
    (`len`, iteration, indexing through dnp). `_unsized` says what a scalar one is in len()'s error."""

    __slots__ = ()
    _unsized = "a scalar traced value has no length"

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(math.prod(self.shape))

    @property
    def T(self):
        return dnp.transpose(self)

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError(f"len() of unsized object: {self._unsized}")
        return shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __getitem__(self, index):
        return dnp.getitem(self, index)
