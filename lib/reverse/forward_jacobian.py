"""tape.batch_jacobian (and tape.jacobian of one source) by one forward sweep over the
records, for chains of per-example ops.

The reverse sweep (jacobians.py) pushes n_out one-hot cotangent rows of shape
(batch, *outs) through every record: for an MLP that is two GEMMs over (n_out * batch)
rows, plus full-size elementwise passes. When the records between the source and the
target are only

  - elementwise ops whose input from the source has the output's shape: each is a
    per-example diagonal, whose entries are its VJP rule applied to a cotangent of ones
    (the same rule the reverse sweep runs, so the same derivative), and
  - `x @ w` with x the (batch, F) value from the source and w a 2-D constant,

the per-example jacobian of every value is `scale[b, f] * basis[f, j]` (the source's is
ones times the identity) until a matmul meets a non-trivial scale. That matmul's result
is one GEMM, `(basis[f, j] * w[f, g])^T @ scale^T`: the first layer's product and its
elementwise passes over (batch, n_in, F) values never happen. From there on the jacobians
are dense (n_in, F, batch) arrays, direction first and batch last (batch_jacobian returns
them as a (batch, F, n_in) view): each later matmul is a GEMM `w^T @ (F, batch)` per
direction, not one per example, and each diagonal scale `slope[b, f]` (transposed once)
is one pass over whole contiguous (F, batch) planes.

`batch_jacobian` returns None here whenever anything else is met (another op on the
path, a gradient override or custom gradient, a recording tape, other dtypes): the
reverse sweep then runs as before. Only ops that never mix examples are accepted, so
the result is the exact per-example jacobian, which is what the reverse sweep gives for
them too.

`jacobian` is the same sweep with the whole value as one example (no batch axis), where
a matmul may take the source's value on either side: for tanh(W @ x + b) the jacobian is
then W's columns times one diagonal, with no GEMM at all.
"""

import numpy as np

from ..core.apply_rules import vjp_parts
from ..core.registry import GRADIENT_OVERRIDES
from .dispatch import STATE

_ndarray = np.ndarray
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_SCALARS = (int, float, bool)


class _Factored:
    """The per-example jacobians `scale[b, f] * basis[f, j]` (scale None: ones). start: when
    the basis is the identity's columns start.. (the source's), else None."""

    __slots__ = ("scale", "basis", "start")

    def __init__(self, scale, basis, start=None):
        self.scale = scale
        self.basis = basis
        self.start = start


def batch_jacobian(tape, target, source, max_elements):
    """(batch, *outs, *ins) per-example jacobians by a forward sweep, or None when the
    records between source and target are not all ops this sweep knows (see above)."""
    if STATE.tapes or STATE.accumulators:
        return None  # someone records this pass: the reverse sweep's rules run on tensors
    x, y = source._value, target._value
    if (x.__class__ is not _ndarray or y.__class__ is not _ndarray or x.dtype not in _FLOATS
            or y.dtype != x.dtype or source._id not in tape._watched):
        return None
    batch = x.shape[0]
    n_in, n_out = x.size // max(batch, 1), y.size // max(batch, 1)
    if not batch or not n_in or not n_out or n_in > n_out:
        return None  # (n_in > n_out: the reverse sweep's rows are fewer)
    jac = _sweeps(tape, target, source, batch, n_in, max_elements)
    return None if jac is None else jac.reshape(y.shape + x.shape[1:])


def jacobian(tape, target, source, max_elements):
    """The target.shape + source.shape jacobian by a forward sweep (tape.jacobian of one
    source), or None when it does not apply: the records are the same per-example ops as
    for batch_jacobian, with no batch axis (the whole value is one example) and matmuls
    with the source's value on either side, `x @ w` or `w @ x`."""
    if STATE.tapes or STATE.accumulators:
        return None
    x, y = source._value, getattr(target, "_value", None)
    if (x.__class__ is not _ndarray or y.__class__ is not _ndarray or x.dtype not in _FLOATS
            or y.dtype != x.dtype or source._id not in tape._watched):
        return None
    if not x.size or not y.size or x.size > y.size:
        return None
    jac = _sweeps(tape, target, source, None, x.size, max_elements)
    return None if jac is None else jac.reshape(y.shape + x.shape)


def _sweeps(tape, target, source, batch, n_in, max_elements):
    """The (batch or 1, F_out, n_in) jacobians (a view of batch-last ones), in sweeps of
    directions bounded by max_elements; None when the records are not all steps this
    module knows."""
    dtype = source._value.dtype
    steps = _plan(tape._entries, source._id, target._id, batch, dtype)
    if steps is None:
        return None
    rows = batch or 1
    widest = n_in
    for step in steps:
        if step[4] > widest:
            widest = step[4]
    chunk = max(1, max_elements // (rows * widest))
    if chunk >= n_in:  # (the common case: one sweep)
        return _sweep(steps, source._id, target._id, rows, _Factored(None, _constant(np.eye, n_in, dtype), 0)).transpose(2, 1, 0)
    pieces = [_sweep(steps, source._id, target._id, rows,
                     _Factored(None, _identity_columns(n_in, start, min(chunk, n_in - start), dtype), start))
              for start in range(0, n_in, chunk)]
    return np.concatenate(pieces, axis=0).transpose(2, 1, 0)


def _plan(entries, source_id, target_id, batch, dtype):
    """The sweep's steps, one per record on a path from the source to the target, in
    recording order: (out_id, in_ids, the diagonals of an elementwise op (None: the
    identity) or (w, the side of x, whether there is no batch axis) for a matmul, whether another step reads the
    one input too, the output's features per example). None when the target is not
    reached, records were released, or a record is not a per-example op this sweep
    computes exactly. batch None: no batch axis (tape.jacobian)."""
    if source_id == target_id:
        return []
    needed = {target_id}
    on_path = []
    for entry in reversed(entries):
        if entry is None:
            return None
        if entry[3] in needed:
            needed.update(entry[1])
            on_path.append(entry)
    reached = {source_id}
    read = set()  # ids read by a step
    reread = set()  # ids read by two steps, or twice by one
    path = []
    for entry in reversed(on_path):
        in_ids = entry[1]
        if len(in_ids) == 1:  # (the common unary and binary ops: no list to build)
            if in_ids[0] not in reached:
                continue
            inputs = _FIRST
        elif len(in_ids) == 2:
            if in_ids[0] in reached:
                inputs = _BOTH if in_ids[1] in reached else _FIRST
            elif in_ids[1] in reached:
                inputs = _SECOND
            else:
                continue
        else:
            inputs = [i for i, tid in enumerate(in_ids) if tid in reached]
            if not inputs:
                continue
        op, _, values, out_id, ans, _ = entry
        if not _supported(op, inputs, values, ans, batch, dtype):
            return None
        reached.add(out_id)
        for i in inputs:
            tid = in_ids[i]
            if tid in read:
                reread.add(tid)
            read.add(tid)
        path.append((entry, inputs))
    if target_id not in reached:
        return None
    steps = []  # (the diagonals only now: no rule runs for a path that falls back)
    rows = batch or 1
    for (op, in_ids, values, out_id, ans, static), inputs in path:
        if op.elementwise:
            step = [_slope(op, i, values, ans, static, rows) for i in inputs]
            for slope in step:
                if slope is False:
                    return None  # no gradient flows: unconnected paths are the reverse sweep's business
        else:
            side = inputs[0]
            step = (values[1 - side], side, batch is None)
        if len(inputs) == 1:
            tid = in_ids[inputs[0]]
            steps.append((out_id, [tid], step, tid in reread, ans.size // rows))
        else:
            steps.append((out_id, [in_ids[i] for i in inputs], step, True, ans.size // rows))
    return steps


# which inputs come from the source, for the common records (read, never changed)
_FIRST, _SECOND, _BOTH = [0], [1], [0, 1]


def _supported(op, inputs, values, ans, batch, dtype):
    """True for a record the sweep computes exactly: an elementwise op (a diagonal per input
    from the source) or `x @ w` of the source's (batch, F) x and a constant 2-D w, on plain
    arrays of the source's dtype, with no override nor custom gradient. False for anything
    else (the reverse sweep runs instead): an elementwise input broadcast against the others
    (its jacobian is no diagonal), w @ x (it mixes the examples), ..."""
    if (op.custom_vjp is not None or op.opaque or op.name in GRADIENT_OVERRIDES
            or ans.__class__ is not _ndarray or ans.dtype != dtype or not ans.ndim
            or batch is not None and ans.shape[0] != batch):
        return False
    for v in values:
        if v.__class__ is not _ndarray and v.__class__ not in _SCALARS:
            return False  # (dask arrays, dual numbers, complex scalars, NumPy scalars)
    if op.elementwise:
        for i in inputs:
            if values[i].shape != ans.shape:
                return False
        return True
    if op.name != "MatMul" or len(inputs) != 1 or batch is not None and inputs != [0]:
        return False
    x, w = values[inputs[0]], values[1 - inputs[0]]
    if batch is not None:
        return x.ndim == 2 and w.__class__ is _ndarray and w.ndim == 2 and w.dtype == dtype
    # (x a vector, a column on the right or a row on the left: with more columns or rows the
    # jacobian is block-diagonal, which dense directions would fill with zeros at full cost)
    return ((x.ndim == 1 or x.ndim == 2 and x.shape[inputs[0]] == 1) and w.__class__ is _ndarray
            and w.ndim == 2 and w.dtype == dtype)


def _slope(op, i, values, ans, static, rows):
    """The diagonal of an elementwise op's jacobian in its input i, as (batch, features):
    the VJP rule applied to ones, so the derivative the reverse sweep would use. None for
    the identity (a rule that hands the cotangent on, as Add's); False when no gradient
    flows or the rule gives something else than an array like `ans`."""
    ones = _constant(np.ones, ans.shape, ans.dtype)
    part = vjp_parts(op, ones, ans, values, static, [i])[0]
    if part is ones:
        return None
    if part.__class__ is not _ndarray or part.shape != ans.shape or part.dtype != ans.dtype:
        return False
    return part.reshape(rows, -1)


def _sweep(steps, source_id, target_id, batch, seed):
    """The target's (k, F_out, batch) jacobians from the source's, `seed` (k directions)."""
    reps = {source_id: seed}
    for out_id, in_ids, step, reused, _ in steps:
        if step.__class__ is not list:
            reps[out_id] = _matmul(reps[in_ids[0]], step, batch)
        elif len(in_ids) == 1:
            reps[out_id] = _scaled(reps[in_ids[0]], step[0], reused)
        else:
            reps[out_id] = _elementwise([reps[tid] for tid in in_ids], step, batch)
    return _dense(reps[target_id], batch)


def _scaled(rep, slope, reused):
    """The jacobians of an op with one input from the source, `rep`, times its diagonal.
    reused: False when `rep` is read by no other step (a dense one, this sweep's own array,
    is then scaled in place)."""
    if rep.__class__ is _Factored:
        if slope is None:
            return rep  # (its arrays are never written into)
        return _Factored(slope if rep.scale is None else rep.scale * slope, rep.basis, rep.start)
    if reused:
        return rep.copy() if slope is None else rep * _rows(slope)
    return rep if slope is None else np.multiply(rep, _rows(slope), out=rep)


def _elementwise(reps, slopes, batch):
    """The jacobians of an op with several inputs from the source: each input's times its
    diagonal, summed over the inputs (a new array: the inputs' are read again)."""
    basis = reps[0].basis if reps[0].__class__ is _Factored else None
    if basis is not None and all(rep.__class__ is _Factored and rep.basis is basis for rep in reps):
        # one basis (the branches of a residual connection): add the scales
        ones = _constant(np.ones, (batch, basis.shape[0]), basis.dtype)
        total = None
        for rep, slope in zip(reps, slopes):
            scale = _times(rep.scale, slope)
            scale = ones if scale is None else scale
            total = scale if total is None else total + scale
        return _Factored(total, basis, reps[0].start)
    total = None
    for rep, slope in zip(reps, slopes):
        dense = _dense(rep, batch)
        part = dense if slope is None else dense * _rows(slope)
        total = part if total is None else total + part
    return total


def _rows(slope):
    """A (batch, F) diagonal as (F, batch), contiguous, to scale (k, F, batch) jacobians
    with: one pass over whole planes (a strided one costs more than this copy of it)."""
    return np.ascontiguousarray(slope.T)


def _times(scale, slope):
    """scale * slope, where None stands for ones."""
    if slope is None:
        return scale
    return slope if scale is None else scale * slope


def _matmul(rep, step, batch):
    """The jacobians of `x @ w` (or, with no batch axis, `w @ x`) from x's."""
    w, side, whole = step
    if whole:
        return _matmul_whole(rep, w, side)
    f, g = w.shape
    if rep.__class__ is not _Factored:  # (k, F, batch) -> (k, G, batch): a GEMM per direction
        return np.matmul(w.T, rep)
    k = rep.basis.shape[1]
    if rep.scale is None:  # the same for every example
        if rep.start is not None:  # w^T times identity columns: those columns of w^T (a view:
            return _Factored(None, w.T[:, rep.start:rep.start + k])  # einsum's loop runs along w)
        return _Factored(None, w.T @ rep.basis)
    # sum_f basis[f, j] w[f, g] scale[b, f]: one GEMM with the products basis[f, j] w[f, g]
    # (einsum's loop for them is ~2x faster than broadcasting's 32-element ones), or, when
    # the batch is the smaller side, the GEMMs of w^T and the dense basis[f, j] scale[b, f]
    if g <= batch:
        products = np.einsum("fj,fg->fjg", rep.basis, w)
        return (products.reshape(f, k * g).T @ rep.scale.T).reshape(k, g, batch)
    return np.matmul(w.T, _dense(rep, batch))


def _matmul_whole(rep, w, side):
    """`_matmul` with no batch axis (tape.jacobian), x a vector (a column on the right, a
    row on the left): the jacobians of w @ x are w @ x's, those of x @ w are w^T @ x's."""
    m = w if side == 1 else w.T
    if rep.__class__ is _Factored and rep.scale is None:
        k = rep.basis.shape[1]
        if rep.start is not None:  # the source's identity columns: those columns of m
            return _Factored(None, np.ascontiguousarray(m[:, rep.start:rep.start + k]))
        return _Factored(None, m @ rep.basis)
    return (_dense(rep, 1)[:, :, 0] @ m.T)[:, :, None]


def _dense(rep, batch):
    """The (k, F, batch) jacobians a representation stands for (from a factored one, a view
    of (F, k, batch) values: the basis rows are read in order)."""
    if rep.__class__ is not _Factored:
        return rep
    if rep.scale is None:
        return np.broadcast_to(rep.basis[:, :, None], rep.basis.shape + (batch,)).copy().transpose(1, 0, 2)
    return (rep.basis[:, :, None] * _rows(rep.scale)[:, None, :]).transpose(1, 0, 2)


def _identity_columns(n, start, k, dtype):
    """Columns start..start+k of the n x n identity: the source's directions in one sweep."""
    if start == 0 and k == n:
        return _constant(np.eye, n, dtype)
    return np.eye(n, k, -start, dtype=dtype)


def _constant(make, shape, dtype):
    """make(shape, dtype) (np.ones, np.eye), read-only, and kept for the next calls when
    small: the rules never write into a cotangent, nor this sweep into a basis."""
    key = (make, shape, dtype)
    value = _CONSTANTS.get(key)
    if value is None:
        value = make(shape, dtype=dtype)
        value.flags.writeable = False
        if value.size <= CACHED_ELEMENTS:
            if len(_CONSTANTS) >= 16:
                _CONSTANTS.pop(next(iter(_CONSTANTS)))
            _CONSTANTS[key] = value
    return value


CACHED_ELEMENTS = 2**18  # the largest ones or identity kept between calls (1 MiB of float32)
_CONSTANTS = {}  # (np.ones or np.eye, shape, dtype) -> a read-only array, the 16 latest
