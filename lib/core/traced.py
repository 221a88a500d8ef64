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

# >0 while rules run on traced values (a traced backward pass, a JVP rule on tensors): their
# operators then follow NumPy's promotion (a complex cotangent times a real input), not TF's
# refusal of mixed dtypes, which is for the user's own code (forward/inplace.numpy_semantics)
RULES_ON_TENSORS = [0]


def number_argument(value):
    """True for a traced argument that a running functional transform made from a Python number:
    `x += 1` rebinds it, as Python does a number (dualtape.transforms reads `c += v` so too)."""
    return ARGUMENTS.get(id(value)) is False
