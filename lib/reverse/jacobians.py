"""GradientTape.jacobian and batch_jacobian, vectorized over the rows of the jacobian (the
functional `jacobian(f)`, which picks forward or reverse mode, is `functional.hessians`).

One backward sweep carries a batch of cotangents (rows of the identity, in chunks that
bound memory) instead of one sweep per output element. Every op whose VJP rules accept a
leading batch axis (`Primitive.batch_vjp`: elementwise ops and the common reductions,
shape, indexing, linalg and nn ops) runs once on the whole chunk; any other op loops over
the rows inside its own record only (`apply_rules._looped_vjp_parts`), so results never
depend on which ops are batch-aware, only the speed does.
"""

import numpy as np

from ..core import nest
from ..core import dnp
from ..core.registry import Traced
from . import forward_jacobian
from .tensor import Tensor, wrap

CHUNK_ELEMENTS = 2**24  # cotangent elements per sweep: bounds the memory of one chunk
# Preferred size of the largest cotangent of one sweep: arrays that stay in cache (and that
# malloc recycles instead of mapping fresh zeroed pages) make a sweep of 16 rows of a
# 128 x 64 layer ~2x faster than one of 32. At least MIN_ROWS rows go in a sweep anyway,
# so large intermediates do not degrade into one sweep per row.
CACHE_BYTES = 2**19
MIN_ROWS = 16


# -- tape.jacobian ----------------------------------------------------------------------------

def _identity_rows(start, k, n, inner, dtype):
    """Rows start..start+k of the n x n identity, each shaped `inner` (the target's shape).

    Read-only and kept for the next call when small (CACHE_BYTES * 8): repeated jacobians
    then skip the allocation and its page faults (the rules never write into a cotangent).
    """
    key = (start, k, n, tuple(inner), np.dtype(dtype))
    rows = _IDENTITY_CACHE.get(key)
    if rows is not None:
        return rows
    rows = np.zeros((k, n), dtype=dtype)
    rows[np.arange(k), start + np.arange(k)] = 1
    rows = rows.reshape((k,) + tuple(inner))
    if rows.nbytes <= 8 * CACHE_BYTES:
        rows.flags.writeable = False
        if len(_IDENTITY_CACHE) >= 4:
            _IDENTITY_CACHE.pop(next(iter(_IDENTITY_CACHE)))
        _IDENTITY_CACHE[key] = rows
    return rows


_IDENTITY_CACHE = {}  # (start, k, n, inner, dtype) -> read-only rows, the 4 latest


def _chunk_rows(tape, n, per_row, itemsize, use_pfor):
    """How many cotangent rows one sweep carries: all of them when the largest recorded
    value times the rows fits CACHE_BYTES, else fewer (never under MIN_ROWS), and never
    more than CHUNK_ELEMENTS allow."""
    if not use_pfor:
        return 1
    limit = max(1, min(n, CHUNK_ELEMENTS // max(per_row, 1)))
    if limit <= MIN_ROWS:
        return limit
    largest = max([per_row] + [getattr(entry[4], "size", 1) for entry in tape._entries if entry])
    return min(limit, max(MIN_ROWS, CACHE_BYTES // max(largest * itemsize, 1)))


def _sweep(tape, target, seed, keep, use_pfor):
    """{source id: cotangents with a leading axis of len(seed)}: one batched sweep, or, when
    use_pfor is False, the plain sweep of the one row `_chunk_rows` put in `seed`."""
    if use_pfor:
        return tape._backward([target], [seed], keep, consume=False, batch=len(seed))
    grads = tape._backward([target], [seed[0]], keep, consume=False)
    return {i: dnp.expand_dims(g, 0) for i, g in grads.items() if i in keep}


def _fill(pieces, counts, source):
    """Concatenate per-chunk cotangents (k, *source.shape); zeros where a chunk found none."""
    if all(p is None for p in pieces):
        return None
    dtype = source.dtype._np
    shape = tuple(source.shape)
    filled = [np.zeros((k,) + shape, dtype=dtype) if p is None else
              p if tuple(dnp.shape(p)) == (k,) + shape else dnp.broadcast_to(p, (k,) + shape)
              for p, k in zip(pieces, counts)]
    return filled[0] if len(filled) == 1 else dnp.concatenate(filled, axis=0)


def _as_tensor(x, source):
    """The jacobian `x` as a tensor of the source's dtype where both are real floats: NumPy's
    promotion inside the recorded ops (a float64 constant times a float32 source) never leaks
    out, as for tape.gradient (float32 stays float32)."""
    if x is None:
        return x
    dtype = source.dtype._np
    if dtype.kind == "f" and dnp.result_dtype(x).kind == "f" and dnp.result_dtype(x) != dtype:
        x = dnp.cast(x, dtype)
    if isinstance(x, Tensor):
        return x
    return wrap(x if isinstance(x, Traced) else np.asarray(x))  # a dual inside jvp stays one


def _check_loop_allowed(tape, api, use_pfor):
    if not use_pfor and not tape._persistent:
        raise RuntimeError("GradientTape must be created with persistent=True to compute the "
                           f"{api} with experimental_use_pfor=False.")  # TF 2.21's error


def tape_jacobian(tape, target, sources, zero_unconnected, use_pfor):
    """target.shape + source.shape jacobian for every source (see GradientTape.jacobian)."""
    _check_loop_allowed(tape, "jacobian", use_pfor)
    flat_sources = nest.flatten(sources)
    tape._used = True
    if not isinstance(target, Tensor):
        target = wrap(np.asarray(target))  # a constant: connected to nothing
    if use_pfor and isinstance(sources, Tensor):
        jac = forward_jacobian.jacobian(tape, target, sources, CHUNK_ELEMENTS)
        if jac is not None:
            return wrap(jac)
    target_shape = tuple(target.shape)
    n = int(np.prod(target_shape, dtype=np.int64))
    keep = {s._id for s in flat_sources}
    per_row = max([n] + [int(np.prod(s.shape, dtype=np.int64)) for s in flat_sources])
    chunk = _chunk_rows(tape, n, per_row, target.dtype._np.itemsize, use_pfor)
    pieces = [[] for _ in flat_sources]
    counts = []
    for start in range(0, n, chunk):
        k = min(chunk, n - start)
        seed = _identity_rows(start, k, n, target_shape, target.dtype._np)
        grads = _sweep(tape, target, seed, keep, use_pfor)
        counts.append(k)
        for j, s in enumerate(flat_sources):
            pieces[j].append(grads.get(s._id))
    results = []
    for s, p in zip(flat_sources, pieces):
        stacked = _fill(p, counts, s) if n else None
        shape = target_shape + tuple(s.shape)
        if stacked is None:
            zero = zero_unconnected or n == 0 and p == []
            results.append(wrap(np.zeros(shape, dtype=s.dtype._np)) if zero else None)
            continue
        results.append(_as_tensor(dnp.reshape(stacked, shape), s))
    return nest.pack_sequence_as(sources, results)


# -- tape.batch_jacobian ----------------------------------------------------------------------

def _check_batch_shapes(target, source):
    """TF's checks: rank >= 2 for both, and equal first dimensions (nothing more)."""
    target_shape, source_shape = _shape(target), _shape(source)
    for shape in (target_shape, source_shape):
        if len(shape) < 2:
            raise ValueError(f"Shape {shape} must have rank at least 2")
    if target_shape[0] != source_shape[0]:
        raise ValueError(f"Need first dimension of target shape ({target_shape}) and source "
                         f"shape ({source_shape}) to match.")  # TF's text: "((7, 6))"


def _shape(tensor):
    """tensor.shape as a tuple (which prints as a TensorShape does), an array's own."""
    value = tensor._value
    return value.shape if value.__class__ is np.ndarray else tuple(tensor.shape)


def tape_batch_jacobian(tape, target, source, zero_unconnected, use_pfor):
    """(batch, *outs, *ins) per-example jacobians (see GradientTape.batch_jacobian).

    Seed row j puts a one at output element j of EVERY example, so one sweep yields row j
    of all the per-example jacobians at once: n_out rows in all, not batch * n_out. This
    is only right when example b's output does not depend on example c's input (TF does
    not check that either).
    """
    _check_loop_allowed(tape, "batch_jacobian", use_pfor)
    if not isinstance(target, Tensor):
        target = wrap(np.asarray(target))
    _check_batch_shapes(target, source)
    tape._used = True
    if use_pfor:
        jac = forward_jacobian.batch_jacobian(tape, target, source, CHUNK_ELEMENTS)
        if jac is not None:
            return wrap(jac)
    target_shape, source_shape = tuple(target.shape), tuple(source.shape)
    batch, outs, ins = target_shape[0], target_shape[1:], source_shape[1:]
    n_out = int(np.prod(outs, dtype=np.int64))
    keep = {source._id}
    per_row = max(int(np.prod(target_shape, dtype=np.int64)), int(np.prod(source_shape, dtype=np.int64)))
    chunk = _chunk_rows(tape, n_out, per_row, target.dtype._np.itemsize, use_pfor)
    pieces, counts = [], []
    for start in range(0, n_out, chunk):
        k = min(chunk, n_out - start)
        rows = _identity_rows(start, k, n_out, (1,) + outs, target.dtype._np)
        seed = np.broadcast_to(rows, (k, batch) + outs).copy()  # (k, batch, *outs)
        pieces.append(_sweep(tape, target, seed, keep, use_pfor).get(source._id))
        counts.append(k)
    g = _fill(pieces, counts, source) if n_out else None
    if g is None:
        if zero_unconnected or n_out == 0:
            return wrap(np.zeros((batch,) + outs + ins, dtype=source.dtype._np))
        return None
    # (n_out, batch, *ins) -> (batch, n_out, *ins) -> (batch, *outs, *ins)
    return _as_tensor(dnp.reshape(dnp.swapaxes(g, 0, 1), (batch,) + outs + ins), source)
