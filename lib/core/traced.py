"""`Traced`: the base of every value a primitive must route instead of computing directly.

`Tensor` (reverse mode) and `Dual` (forward mode) derive from it; `dnp`'s shape helpers and
the registry's binder test for it. It lives alone so that `dnp`, below the registry, can.
"""


class Traced:
    """Base of every value a primitive must route instead of computing directly."""

    __slots__ = ()
