"""GradientTape.jacobian and batch_jacobian (simple loops for now)."""

import numpy as np

from . import nest
from .tape import UnconnectedGradients
from .tensor import Tensor, wrap


def tape_jacobian(tape, target, sources, unconnected, use_pfor):
    flat_sources = nest.flatten(sources)
    size = int(np.size(target._value))
    rows = [[] for _ in flat_sources]
    for k in range(size):
        seed = np.zeros(size, dtype=target.dtype._np)
        seed[k] = 1
        grads = tape._backward([target], [seed.reshape(np.shape(target._value))],
                               {s._id for s in flat_sources}, consume=False)
        for j, s in enumerate(flat_sources):
            rows[j].append(grads.get(s._id))
    tape._used = True
    results = []
    for s, row in zip(flat_sources, rows):
        if all(r is None for r in row):
            results.append(wrap(np.zeros(tuple(target.shape) + tuple(s.shape), dtype=s.dtype._np))
                           if unconnected is UnconnectedGradients.ZERO else None)
            continue
        from . import numpy_api as dnp
        parts = [dnp.zeros_like(s) if r is None else r for r in row]
        stacked = dnp.reshape(dnp.stack(parts), tuple(target.shape) + tuple(s.shape))
        results.append(stacked if isinstance(stacked, Tensor) else wrap(np.asarray(stacked)))
    return nest.pack_sequence_as(sources, results)


def tape_batch_jacobian(tape, target, source, unconnected, use_pfor):
    raise NotImplementedError
