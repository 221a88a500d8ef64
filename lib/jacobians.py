"""GradientTape.jacobian and batch_jacobian, vectorized over the rows of the jacobian.

One backward sweep carries a batch of cotangents (rows of the identity, in chunks that
bound memory) instead of one sweep per output element: elementwise and batch-aware ops
run once on the whole batch, other ops loop inside their record only.
"""

import numpy as np

from . import nest
from . import numpy_api as dnp
from .tape import UnconnectedGradients
from .tensor import Tensor, wrap

CHUNK_ELEMENTS = 2**24  # cotangent elements per sweep: bounds the memory of one chunk


def _rows(tape, target, seeds_shape, flat_sources, use_pfor):
    """d(<seed_k, target>)/d source for every identity seed row k; lists of (k, *source)."""
    n = int(np.prod(seeds_shape[:1])) if seeds_shape else 1
    dtype = target.dtype._np
    keep = {s._id for s in flat_sources}
    per_row = max(int(np.size(target._value)), max(int(np.prod(s.shape)) for s in flat_sources), 1)
    chunk = n if use_pfor else 1
    chunk = max(1, min(chunk, CHUNK_ELEMENTS // per_row))
    pieces = [[] for _ in flat_sources]
    for start in range(0, n, chunk):
        k = min(chunk, n - start)
        seed = _identity_rows(start, k, seeds_shape, dtype)
        if use_pfor:
            grads = tape._backward([target], [seed], keep, consume=False, batch=k)
            found = [grads.get(s._id) for s in flat_sources]
        else:
            grads = tape._backward([target], [seed[0]], keep, consume=False)
            found = [None if grads.get(s._id) is None else dnp.expand_dims(grads[s._id], 0)
                     for s in flat_sources]
        for j, g in enumerate(found):
            pieces[j].append(g)
    return pieces


def _identity_rows(start, k, seeds_shape, dtype):
    """Rows start..start+k of the identity, each shaped like the target (seeds_shape[1:])."""
    n = seeds_shape[0]
    rows = np.zeros((k, n), dtype=dtype)
    rows[np.arange(k), start + np.arange(k)] = 1
    inner = seeds_shape[1:]
    return rows.reshape((k,) + tuple(inner)) if inner else rows.reshape((k,))


def _assemble(pieces, source, unconnected, lead_shape):
    if all(p is None for p in pieces):
        if unconnected is UnconnectedGradients.ZERO:
            return wrap(np.zeros(tuple(lead_shape) + tuple(source.shape), dtype=source.dtype._np))
        return None
    sample = next(p for p in pieces if p is not None)
    filled = [p if p is not None else np.zeros(np.shape(sample), dtype=source.dtype._np) for p in pieces]
    stacked = filled[0] if len(filled) == 1 else dnp.concatenate(filled, axis=0)
    return stacked


def _as_tensor(x):
    return x if isinstance(x, Tensor) or x is None else wrap(np.asarray(x))


def tape_jacobian(tape, target, sources, unconnected, use_pfor):
    """target.shape + source.shape jacobian for every source (see GradientTape.jacobian)."""
    flat_sources = nest.flatten(sources)
    target_shape = tuple(target.shape)
    n = int(np.prod(target_shape)) if target_shape else 1
    pieces = _rows(tape, target, (n,) + target_shape, flat_sources, use_pfor)
    tape._used = True
    results = []
    for s, p in zip(flat_sources, pieces):
        stacked = _assemble(p, s, unconnected, target_shape)
        if stacked is not None and not (isinstance(stacked, Tensor) and stacked.shape == target_shape + tuple(s.shape)):
            stacked = dnp.reshape(stacked, target_shape + tuple(s.shape))
        results.append(_as_tensor(stacked))
    return nest.pack_sequence_as(sources, results)


def tape_batch_jacobian(tape, target, source, unconnected, use_pfor):
    """(batch, *outs, *ins) per-example jacobians (see GradientTape.batch_jacobian)."""
    target_shape, source_shape = tuple(target.shape), tuple(source.shape)
    if not target_shape or not source_shape or target_shape[0] != source_shape[0]:
        raise ValueError(f"Need first dimension of target shape ({', '.join(map(str, target_shape))}) "
                         f"and source shape ({', '.join(map(str, source_shape))}) to match.")
    batch, outs = target_shape[0], target_shape[1:]
    n_out = int(np.prod(outs)) if outs else 1
    # seed row j: ones at output element j of every example, so the batch shares one sweep
    eye = np.eye(n_out, dtype=target.dtype._np).reshape((n_out, 1) + (outs or ()))
    seeds_dtype_shape = (n_out, batch) + outs
    keep = {source._id}
    if use_pfor:
        seed = np.broadcast_to(eye, seeds_dtype_shape).copy()
        g = tape._backward([target], [seed], keep, consume=False, batch=n_out).get(source._id)
    else:
        rows = []
        for j in range(n_out):
            seed = np.broadcast_to(eye[j], (batch,) + outs).copy()
            rows.append(tape._backward([target], [seed], keep, consume=False).get(source._id))
        g = None if rows[0] is None else dnp.stack(rows)
    tape._used = True
    if g is None:
        if unconnected is UnconnectedGradients.ZERO:
            return wrap(np.zeros((batch,) + outs + source_shape[1:], dtype=source.dtype._np))
        return None
    # (n_out, batch, *ins) -> (batch, n_out, *ins) -> (batch, *outs, *ins)
    g = dnp.swapaxes(g, 0, 1)
    return _as_tensor(dnp.reshape(g, (batch,) + outs + source_shape[1:]))
