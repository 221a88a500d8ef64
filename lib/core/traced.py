"""`Traced`: the base of every value a primitive must route instead of computing directly.

`Tensor` (reverse mode) and `Dual` (forward mode) derive from it; `dnp`'s shape helpers and
the registry's binder test for it. It lives alone so that `dnp`, below the registry, can.
"""


import math


class Traced:
    """Base of every value a primitive must route instead of computing directly."""

    __slots__ = ()


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
        return _dnp().transpose(self)

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError(f"len() of unsized object: {self._unsized}")
        return shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __getitem__(self, index):
        return _dnp().getitem(self, index)


_DNP = []


def _dnp():
    """dnp (which imports this module: found at the first use)."""
    if not _DNP:
        from . import dnp
        _DNP.append(dnp)
    return _DNP[0]


# id(traced argument) -> True for one made from an array, False for one made from a Python number:
# the arguments of the running functional transforms (forward/inplace.py registers them). `x += 1`
# updates the traced array in place under NumPy's semantics, but rebinds a number.
ARGUMENTS = {}

# >0 while rules run on traced values (a traced backward pass, a JVP rule on tensors): their
# operators then follow NumPy's promotion (a complex cotangent times a real input), not TF's
# refusal of mixed dtypes, which is for the user's own code (forward/inplace.numpy_semantics)
RULES_ON_TENSORS = [0]


def number_argument(value):
    """True for a traced argument that a running functional transform made from a Python number:
    `x += 1` rebinds it, as Python does a number (dualtape.transforms reads `c += v` so too)."""
    return ARGUMENTS.get(id(value)) is False
