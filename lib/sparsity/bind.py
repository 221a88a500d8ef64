"""A registry op on `Pattern` values: the op runs on the values, its pattern rule gives the result's
dependencies (rules.py).

`forward/dual.py`'s `bind` routes an op here when `Pattern`s are the newest values among its
arguments. Sparsity detection always runs outermost (on plain values), so a tape, dual number
or vmap inside f is newer: those levels unwrap their values and call the op again, which
reaches this binder with the `Pattern`s underneath.
"""

import numpy as np

from ..forward import dual
from .pattern import Pattern
from .rules import dense_rule, rule_for


def bind_patterns(op, args, static):
    """Run `op` on the values of `args`; the result is a Pattern of its dependencies."""
    trace = None
    primals = []
    for a in args:
        if a.__class__ is Pattern:
            trace = a._trace
            primals.append(a._value)
        else:
            primals.append(a)
    found = []
    plain_static = {key: _plain(value, found) for key, value in static.items()} if static else static
    if trace is None:
        trace = found[0]._trace
    ans = op.impl(*primals, **plain_static) if plain_static else op.impl(*primals)
    if ans.__class__ is tuple:
        raise TypeError(f"[{op.name}] returned a tuple; multi-output ops must be built from "
                        "single-output primitives.")
    expected = np.shape(ans) + (trace.n,)
    if found:  # an index or shape computed from the inputs: which elements are read depends on their values
        deps = dense_rule(op, args, plain_static, ans, trace)
    else:
        deps = rule_for(op)(op, args, plain_static, ans, trace)
        if deps is not None and deps.shape != expected:  # a rule that did not foresee this call: be safe
            deps = dense_rule(op, args, plain_static, ans, trace)
    return Pattern(ans, deps, trace)


def _plain(value, found):
    """`value` (a static argument) with each Pattern inside replaced by its value, noted in `found`."""
    if value.__class__ is Pattern:
        found.append(value)
        return value._value
    if value.__class__ in (tuple, list):
        return value.__class__(_plain(v, found) for v in value)
    if value.__class__ is slice:
        return slice(_plain(value.start, found), _plain(value.stop, found), _plain(value.step, found))
    return value


dual.pattern_class[0] = Pattern
dual.pattern_bind[0] = bind_patterns
