"""Symbolic zeros of the backward sweep: which adjoints are statically zero.

An adjoint no statement has written yet, or one a statement reset by overwriting its value
(`x1 = x0` makes the adjoint of the old `x1` zero), is a symbolic zero: the backward sweep
emits nothing for a statement whose incoming adjoint is one, so `0 * inf` never turns a
gradient into NaN (as JAX's symbolic zeros). Straight-line code tracks them as it goes
(`Reverse.nonzero`); a loop's backward sweep needs the set at the start of every iteration,
the least fixed point of `entry | body(set)` over the body, computed here on the IR.

`nonzero_after(items, nonzero, active)` is the set of names whose adjoints may be nonzero
before `items`, given those that may be nonzero after them (names of values, not adjoints).
It may say "nonzero" where the generated code leaves a zero (a zero is then materialized),
never the reverse: `Reverse` checks that after generating a loop's body.
"""

from ..ir import syntax
from ..ir.analysis import Segment, diff_args
from ..forward.analysis import jvp_args
from ..frontend.normalize import For, If, Op, Primal, SetItem, While, is_name


def nonzero_after(items, nonzero, active):
    """Names whose adjoints may be nonzero before `items` (walked backward), from `nonzero`."""
    out = set(nonzero)
    for item in reversed(items):
        if isinstance(item, Segment):
            for st in reversed(item.stmts):
                _statement(st, out, active)
        elif isinstance(item, If):
            out = nonzero_after(item.body, out, active) | nonzero_after(item.orelse, out, active)
        elif isinstance(item, (For, While)):
            out = loop_entry(item, out, active)
        elif isinstance(item, SetItem):
            if item.target in active and item.target in out and is_name(item.value) and item.value.id in active:
                out.add(item.value.id)
    return out


def loop_entry(item, nonzero, active):
    """Names whose adjoints may be nonzero at the start of any backward iteration of a loop
    (and after the loop, which may run no iteration): the least fixed point from `nonzero`."""
    current = set(nonzero)
    while True:
        grown = current | nonzero_after(item.body, current, active)
        if grown == current:
            return current
        current = grown


def _statement(st, out, active):
    if not (isinstance(st, Op) and st.target in active):
        out.difference_update(st.writes)  # an inactive value overwritten: its old adjoint is zero
        return
    if st.target not in out:
        return  # a symbolic zero: the statement has no adjoint code
    out.discard(st.target)
    if st.kind == "prim":
        names = [name for _, name in diff_args(st)]
    else:  # copy, getitem, pack, listop, calls (their helper's adjoints, odeint's): every named argument
        names = [a.id for a in st.args if is_name(a)]
        names += [a.id for a in st.keywords.values() if is_name(a)]
    out.update(name for name in names if name in active)


# -- forward mode: tangents ----------------------------------------------------------------------
# The tangent code keeps every tangent variable where it is made (zeros included); what it must
# not do is compute with a tangent known to be zero: `d_x1 = dx1 * (expm1(x1) + 1)` is NaN where
# expm1 overflows, though dx1 is a zero that `x1 = x0` later replaces. `Forward` reads tangents
# only of the names in its current `nonzero` set (the others count as zero, as inactive names do)
# and updates it statement by statement with `tangent_step`; a loop starts each pass from the
# fixed point `tangent_loop_entry`.

def tangent_sources(st):
    """The names an Op's tangent is made from."""
    if st.kind == "prim":
        return [name for _, name in jvp_args(st)]
    return [a.id for a in st.args if is_name(a)] + [a.id for a in st.keywords.values() if is_name(a)]


def tangent_step(st, nonzero, active):
    """Update `nonzero` (names whose tangents may be nonzero) past one simple statement."""
    if isinstance(st, Op):
        if st.target in active and any(name in nonzero for name in tangent_sources(st)):
            nonzero.add(st.target)
        else:
            nonzero.discard(st.target)
    elif isinstance(st, Primal):
        if st.pure:
            nonzero.difference_update(st.writes)  # a value of no derivative: a zero tangent
    elif isinstance(st, SetItem):
        if st.target in active and is_name(st.value) and st.value.id in nonzero:
            nonzero.add(st.target)
    else:  # the tangent stack (Push, Pop): a popped tangent is whatever was pushed
        nonzero.update(st.writes & active)


def tangent_after(items, nonzero, active):
    out = set(nonzero)
    for item in items:
        if isinstance(item, If):
            out = tangent_after(item.body, out, active) | tangent_after(item.orelse, out, active)
        elif isinstance(item, (For, While)):
            out = tangent_loop_entry(item, out, active)
        else:
            tangent_step(item, out, active)
    return out


def loop_targets(item, active):
    """Names a loop over an inactive sequence binds each pass (zero tangents)."""
    target = getattr(item, "target_node", None)
    return syntax.store_names(target) & active if target is not None else set()


def tangent_loop_entry(item, nonzero, active):
    """Names whose tangents may be nonzero at the head of a loop (and after it): the least fixed
    point from `nonzero`."""
    current = set(nonzero)
    while True:
        grown = current | tangent_after(item.body, current - loop_targets(item, active), active)
        if grown == current:
            return current
        current = grown
