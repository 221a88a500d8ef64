"""`Traced`: the base of every value a primitive must route instead of computing directly.

`Tensor` (reverse mode) and `Dual` (forward mode) derive from it; `dnp`'s shape helpers and
the registry's binder test for it. It lives alone so that `dnp`, below the registry, can.
"""


class Traced:
    """Base of every value a primitive must route instead of computing directly."""

    __slots__ = ()


# id(traced argument) -> True for one made from an array, False for one made from a Python number:
# the arguments of the running functional transforms (forward/inplace.py registers them). `x += 1`
# updates the traced array in place under NumPy's semantics, but rebinds a number.
ARGUMENTS = {}


def number_argument(value):
    """True for a traced argument that a running functional transform made from a Python number:
    `x += 1` rebinds it, as Python does a number (dualtape.transforms reads `c += v` so too)."""
    return ARGUMENTS.get(id(value)) is False
