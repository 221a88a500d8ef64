"""A registry op on `Batched` values: the op's batching rule runs it once for the whole batch.

`forward/dual.py`'s `bind` routes every op whose arguments hold traced values of several
kinds by level: when a `Batched` value's level is the newest, `bind_level` unwraps the
values of that level (batch axis first), leaves the others as they are (constants of this
level, the same for every example), and calls the op's batching rule, which calls ops again
on the unwrapped values: older levels (an outer tape, dual number or vmap) see those ops.
"""

from ..core import registry
from ..forward import dual
from .batched import Batched
from .loops import loop, static_batch
from .rules import rule_for


def bind_level(op, args, static, level):
    """Run `op` on the examples of vmap `level` among `args`; the result is batched there."""
    values = []
    batched = []
    size = None
    for a in args:
        if a.__class__ is Batched and a.level == level:
            values.append(a._value)
            batched.append(True)
            size = a.batch_size
        else:
            values.append(a)
            batched.append(False)
    if static:
        found = static_batch(static, level)
        if found is not None:  # a batched index or shape: one call per example
            return Batched(loop(op, values, batched, static, found, level), level, found)
    out = rule_for(op)(op, values, batched, static, size)
    return Batched(out, level, size)


dual.batched_class[0] = Batched
registry.batched_class[0] = Batched  # (its first traced argument a Batched: dispatch.bind would hand it to dual.bind)
dual.batch_bind[0] = bind_level
