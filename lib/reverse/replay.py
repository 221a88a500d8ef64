"""The backward pass of a tape: its records replayed in reverse, each op's VJP added into
the cotangents (GradientTape.gradient, jacobians, forward-over-reverse).

A gather along axis 0 of a source (tf.gather(variable, ids), embedding_lookup) may keep
its cotangent as slices (`slices`): GradientTape.gradient then gives TF's IndexedSlices
(indexed_slices.py) instead of a dense array of mostly zeros.
"""

import numpy as np

from ..core.traced import RULES_ON_TENSORS
from ..core.apply_rules import PER_EXAMPLE as _PER_EXAMPLE, real_for, unbroadcast_to, vjp_parts
from ..core.registry import GRADIENT_OVERRIDES, NOT_DIFFERENTIABLE as _NOT_DIFFERENTIABLE
from .indexed_slices import merge_slices
from .tensor import EagerTensor as _EagerTensor, alias

_ndarray = np.ndarray
_np_add = np.add


def replay(entries, watched, grads, keep, release, traced, batch=0, slices=None):
    """The backward pass (see `_replay`), with RULES_ON_TENSORS set while rules run traced."""
    if not traced:
        return _replay(entries, watched, grads, keep, release, traced, batch, slices)
    RULES_ON_TENSORS[0] += 1
    try:
        return _replay(entries, watched, grads, keep, release, traced, batch, slices)
    finally:
        RULES_ON_TENSORS[0] -= 1


def _replay(entries, watched, grads, keep, release, traced, batch=0, slices=None):
    """The backward pass: walk the records in reverse, adding each op's VJP into `grads`.

    grads: {tensor id: cotangent}, seeded with the targets'. keep: ids whose cotangents
    stay in `grads` (the sources); the others are dropped once used. release: forget each
    record once used. traced: run the rules on tensor aliases so that recording tapes and
    accumulators see the backward pass (higher order). batch: see `_backward`.
    slices: None, or {source id: [(cotangent, indices), ...]} to fill with the cotangents of
    axis-0 gathers of the sources in `keep` instead of adding them densely into `grads`.
    """
    owned = {}  # id -> a cotangent buffer this pass allocated, safe to add into in place
    direct = not traced and not batch and not GRADIENT_OVERRIDES  # rules on the values as they are
    for index in range(len(entries) - 1, -1, -1):
        op, in_ids, values, out_id, ans, static = entries[index]
        g = grads.get(out_id) if out_id in keep else grads.pop(out_id, None)
        if owned:
            owned.pop(out_id, None)  # handed to the rules now: never written again
        if release:
            entries[index] = None  # release what the rest of the pass no longer needs
        if slices and out_id in slices:  # a source made by an op: its rules need it dense
            g = grads[out_id] = merge_slices(g, slices.pop(out_id), ans)
        if g is None:
            continue
        if (slices is not None and op.name == "GatherV2" and static["axis"] == 0 and in_ids[0] in keep
                and op.custom_vjp is None and op.name not in GRADIENT_OVERRIDES):
            rows = g._value if g.__class__ is _EagerTensor else g  # (a tensor seed: nobody records)
            if rows.__class__ is _ndarray:
                slices.setdefault(in_ids[0], []).append((rows, values[1], values[0]))
                continue  # the indices take no gradient
        rules = op.vjp
        if (direct and rules.__class__ is tuple and op.custom_vjp is None and op.name != "StridedSlice"
                and op.name not in _PER_EXAMPLE):
            # vjp_parts' common path, inline: one rule call per watched input (every watched
            # input gets a gradient, also one watched after the op ran, as in TF)
            wanted = []
            parts = []
            for i, tid in enumerate(in_ids):
                if tid in watched and i < len(rules):
                    rule = rules[i]
                    if rule is not _NOT_DIFFERENTIABLE:
                        part = rule(g, ans, *values, **static) if static else rule(g, ans, *values)
                        if part is not None:
                            wanted.append(i)
                            parts.append(unbroadcast_to(part, values[i]) if op.elementwise else
                                         real_for(part, values[i]) if part.__class__ is not _ndarray
                                         or part.dtype.kind == "c" else part)
        else:
            wanted = [i for i, tid in enumerate(in_ids) if tid in watched]
            if traced:
                values = tuple([alias(v, tid) if tid is not None else v for v, tid in zip(values, in_ids)])
                ans = alias(ans, out_id)
            elif (op.name == "StridedSlice" and not batch and wanted and g.__class__ is _ndarray
                  and _slice_into(grads, owned, in_ids[0], values[0], g, static, op)):
                continue  # added into the source's cotangent buffer: no full-size zeros per slice
            parts = vjp_parts(op, g, ans, values, static, wanted, batch)
        for i, part in zip(wanted, parts):
            if part is None:
                continue
            tid = in_ids[i]
            prev = grads.get(tid)
            if prev is None:
                grads[tid] = part
            elif (prev is owned.get(tid) and part.__class__ is _ndarray and part.shape == prev.shape
                  and part.dtype == prev.dtype):
                _np_add(prev, part, out=prev)  # a buffer this pass made: add in place
            else:
                grads[tid] = total = prev + part
                if not traced and total.__class__ is _ndarray:
                    owned[tid] = total  # a fresh sum, only ever seen through grads[tid]
    return grads


def _slice_into(grads, owned, tid, x, g, static, op):
    """Add a basic slice's cotangent `g` into the cotangent of its source `x` in place (a
    buffer this pass owns), as `prev + unindex(g)` would, without the zeros it allocates.
    False when it does not apply (fancy indices, overrides, other dtypes): the rule runs."""
    index = static.get("index")
    if (x.__class__ is not _ndarray or op.custom_vjp is not None or op.name in GRADIENT_OVERRIDES
            or index.__class__ is not tuple or g.dtype != x.dtype):
        return False
    for item in index:
        if item.__class__ is _ndarray:
            return False  # fancy: np.add.at semantics, left to the rule
    prev = grads.get(tid)
    if prev is None:
        buffer = np.zeros(x.shape, dtype=g.dtype)
        buffer[index] = g  # exactly what the rule's unindex makes
    elif prev is owned.get(tid):
        prev[index] += g
        return True
    elif prev.__class__ is _ndarray and prev.shape == x.shape and prev.dtype == g.dtype:
        buffer = prev.copy()
        buffer[index] += g
    else:
        return False
    grads[tid] = owned[tid] = buffer
    return True
