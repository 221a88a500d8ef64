"""The functional API: `jvp`, `grad`, `vjp`, `jacfwd`, `jacrev`, `hessian`, `hvp`, `linearize`.

Functions take and return plain NumPy arrays (float64 stays float64; Python floats become
float64 arrays, NumPy's rule rather than TF's float32) and nested tuples, lists and dicts
of them. `jvp` runs `f` on dual numbers with a fresh tag; `grad` and `vjp` run it on
tensors under a private GradientTape. They nest in any order: inside another transform,
inputs and outputs are that transform's dual numbers or tensors, and every level keeps
its own perturbations (see dual.py).
"""

import math

import numpy as np

from . import nest
from . import numpy_api as dnp
from .dispatch import STATE
from .batching import stack
from .dtypes import refuse_complex
from .dual import Dual, new_tag
from .registry import Traced
from .second_order import gradient_tangents
from .tape import GradientTape
from .tensor import Tensor, wrap


# -- inputs and outputs -----------------------------------------------------------------------

def _as_input(x, api, what):
    """A differentiable input: traced values pass through, the rest become float arrays."""
    if x.__class__ is _ndarray and x.dtype.kind == "f":  # the common case, as is
        return x
    if isinstance(x, Traced):
        dtype = dnp.result_dtype(x)
    else:
        x = np.asarray(x)
        dtype = x.dtype
    refuse_complex(dtype, api, what)
    if dtype.kind not in "fc":
        raise TypeError(f"[{api}] {what} has dtype {dtype}, but only floating inputs can be "
                        f"differentiated. Cast it first, e.g. np.asarray(x, dtype=float).")
    return x


def _as_output(x):
    return x if isinstance(x, Traced) else np.asarray(x)


def _zeros(x):
    return np.zeros(tuple(dnp.shape(x)), dtype=dnp.result_dtype(x))


def _check_tangent(t, p, api, batch=None):
    if (batch is None and t.__class__ is _ndarray and p.__class__ is _ndarray
            and t.dtype == p.dtype and t.shape == p.shape):
        return t  # what np.asarray(t, dtype=p.dtype) gives, already checked
    refuse_complex(dnp.result_dtype(t), api, "a tangent")
    if not isinstance(t, Traced):
        t = np.asarray(t, dtype=dnp.result_dtype(p))
    expected = tuple(dnp.shape(p)) if batch is None else (batch,) + tuple(dnp.shape(p))
    if tuple(dnp.shape(t)) != expected:
        raise ValueError(f"[{api}] tangent of shape {tuple(dnp.shape(t))} does not match its "
                         f"primal's shape {tuple(dnp.shape(p))}. Give one tangent per primal, "
                         "with the same structure and shapes.")
    return t


_ndarray = np.ndarray
_NESTED = (list, tuple, dict)


def _flatten(structure):
    """nest.flatten, without its walk for a flat tuple or list of leaves (the common call)."""
    if structure.__class__ is tuple or structure.__class__ is list:
        for leaf in structure:
            if isinstance(leaf, _NESTED):
                return nest.flatten(structure)
        return list(structure)
    return nest.flatten(structure)


def _pack(structure, flat):
    """nest.pack_sequence_as, without its walk for a flat tuple or list of leaves."""
    if structure.__class__ is tuple or structure.__class__ is list:
        for leaf in structure:
            if isinstance(leaf, _NESTED):
                return nest.pack_sequence_as(structure, flat)
        return structure.__class__(flat)
    return nest.pack_sequence_as(structure, flat)


def _argnums(argnums, nargs, api):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not -nargs <= i < nargs:
            raise ValueError(f"[{api}] argnums={argnums!r} but the function got {nargs} "
                             "positional arguments.")
    return tuple(i % nargs for i in nums)


# -- forward mode ------------------------------------------------------------------------------

def _forward(f, primals, tangents, api, batch=None):
    """Run f on duals of a fresh tag: (out, out tangents) with zeros for unconnected outputs."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(f"[{api}] primals and tangents must be tuples (one entry per argument "
                        f"of f), got {type(primals).__name__} and {type(tangents).__name__}.")
    if len(primals) != len(tangents):
        raise ValueError(f"[{api}] got {len(primals)} primals but {len(tangents)} tangents.")
    tag = new_tag()
    flat_p = [_as_input(p, api, "a primal") for p in nest.flatten(primals)]
    flat_t = nest.flatten(tangents)
    if len(flat_p) != len(flat_t):
        raise ValueError(f"[{api}] primals and tangents have different structures.")
    duals = [Dual(p, _check_tangent(t, p, api, batch), tag, batch) for p, t in zip(flat_p, flat_t)]
    out = f(*nest.pack_sequence_as(tuple(primals), duals))
    outs, out_tangents = [], []
    for leaf in nest.flatten(out):
        while isinstance(leaf, Tensor) and not _seen_outside(leaf):
            leaf = leaf._value  # a GradientTape's result inside jvp: a tensor holding duals
        if type(leaf) is Dual and leaf.tag == tag:
            outs.append(_as_output(leaf.primal))
            out_tangents.append(leaf.tangent)
        else:
            outs.append(_as_output(leaf))
            zero = _zeros(leaf)
            out_tangents.append(zero if batch is None else np.broadcast_to(zero, (batch,) + zero.shape))
    return (nest.pack_sequence_as(out, outs), nest.pack_sequence_as(out, out_tangents))


def jvp(f, primals, tangents):
    """(f(*primals), J_f(primals) @ tangents) in one forward pass.

    >>> jvp(np.sin, (0.5,), (1.0,))   # (sin 0.5, cos 0.5)
    """
    return _forward(f, primals, tangents, "jvp")


def linearize(f, *primals):
    """(f(*primals), f_jvp) where f_jvp(*tangents) is the JVP at `primals`."""
    out = _forward(f, primals, tuple(nest.map_structure(_zeros, list(primals))), "linearize")[0]

    def f_jvp(*tangents):
        return _forward(f, primals, tangents, "linearize")[1]

    return out, f_jvp


def jacfwd(f, argnums=0, chunk_size=None):
    """The Jacobian by forward mode: chunks of `chunk_size` directions per pass (all at once
    by default). Shaped `out.shape + in.shape`; nested outputs and inputs give nested results
    (output structure outside, input structure inside).
    """
    def jacobian(*args):
        nums = _argnums(argnums, len(args), "jacfwd")
        wrt = [args[i] for i in nums]
        flat_in = [_as_input(x, "jacfwd", "the differentiated argument") for x in nest.flatten(wrt)]
        sizes = [int(np.prod(dnp.shape(x))) for x in flat_in]
        n = sum(sizes)
        chunk = n if chunk_size is None else max(1, min(int(chunk_size), n))
        offsets = np.cumsum([0] + sizes)

        def run(start, stop):
            k = stop - start
            tangents = []
            for x, size, off in zip(flat_in, sizes, offsets):
                basis = np.zeros((k, size), dtype=dnp.result_dtype(x))
                rows = np.arange(k)
                cols = np.arange(start, stop) - off
                keep = (cols >= 0) & (cols < size)
                basis[rows[keep], cols[keep]] = 1
                tangents.append(basis.reshape((k,) + tuple(dnp.shape(x))))
            packed_p = nest.pack_sequence_as(wrt, flat_in)
            packed_t = nest.pack_sequence_as(wrt, tangents)

            def g(*selected):
                full = list(args)
                for slot, i in enumerate(nums):
                    full[i] = selected[slot]
                return f(*full)

            return _forward(g, tuple(packed_p), tuple(packed_t), "jacfwd", batch=k)

        out, first = run(0, min(chunk, n)) if n else (None, None)
        if n == 0:
            out = f(*args)
            first = nest.map_structure(lambda o: np.zeros((0,) + tuple(dnp.shape(o))), out)
        pieces = [nest.flatten(first)]
        for start in range(chunk, n, chunk):
            pieces.append(nest.flatten(run(start, min(start + chunk, n))[1]))
        flat_out = nest.flatten(out)
        results = []
        for j, o in enumerate(flat_out):
            full = _concat([p[j] for p in pieces])  # (n, *o.shape)
            oshape = tuple(dnp.shape(o))
            per_input = []
            for x, size, off in zip(flat_in, sizes, offsets):
                block = _rows(full, off, size, n)
                block = dnp.reshape(block, (size, int(np.prod(oshape))))
                block = dnp.transpose(block)
                per_input.append(_as_output(dnp.reshape(block, oshape + tuple(dnp.shape(x)))))
            packed = nest.pack_sequence_as(wrt, per_input)
            results.append(packed[0] if isinstance(argnums, int) else tuple(packed))
        return nest.pack_sequence_as(out, results)

    return jacobian


def _concat(parts):
    if len(parts) == 1:
        return parts[0]
    if all(not isinstance(p, Traced) for p in parts):
        return np.concatenate(parts)
    concatenate = getattr(dnp, "concatenate", None)
    if concatenate is None:
        raise NotImplementedError("[jacfwd] chunking traced values needs dnp.concatenate; "
                                  "use chunk_size=None.")
    return concatenate(parts)


def _rows(full, off, size, n):
    if off == 0 and size == n:
        return full
    if not isinstance(full, Traced):
        return full[off:off + size]
    return dnp.getitem(full, slice(off, off + size))


# -- reverse mode ------------------------------------------------------------------------------

def _watched_inputs(tape, leaves, api):
    """Fresh tensors for `leaves`, watched by `tape` only (a fresh id per grad level)."""
    out = []
    for leaf in leaves:
        leaf = _as_input(leaf, api, "the differentiated argument")
        if isinstance(leaf, Tensor):
            t = dnp.identity(leaf)  # new id, connected to the outer tape by Identity
        else:
            t = wrap(leaf)
        tape._watched.add(t._id)
        out.append(t)
    return out


def _seen_outside(t):
    """True when an enclosing tape or accumulator traces tensor `t` (it must stay wrapped)."""
    if not STATE.tapes and not STATE.accumulators:
        return False
    return any(t._id in tape._watched for tape in STATE.tapes) or any(
        acc._tracks(t) for acc in STATE.accumulators)


def _unwrap(x):
    """A gradient or output as the caller sees it: arrays at top level, traced inside."""
    if isinstance(x, Tensor) and not _seen_outside(x):
        x = x._value  # this level's wrapper; what an outer level traces lies inside it
    return _as_output(x)


def _record(f, args, nums, api):
    """Run f under a private persistent tape; return (tape, inputs, output)."""
    tape = GradientTape(persistent=True, watch_accessed_variables=False)
    tape._dual_level = new_tag()  # duals of older levels are constants to this tape
    tape._escape_api = api  # a value of f turned into a plain float or array raises (tensor.py)
    wrt = [args[i] for i in nums]
    flat = _flatten(wrt)
    with tape:
        inputs = _watched_inputs(tape, flat, api)
        packed = _pack(wrt, inputs)
        full = list(args)
        for slot, i in enumerate(nums):
            full[i] = packed[slot]
        out = f(*full)
    return tape, inputs, out


def _pullback(tape, inputs, targets, seeds):
    grads = tape._backward(targets, seeds, {t._id for t in inputs}, consume=False)
    return [_unwrap(grads[t._id]) if t._id in grads else _zeros(t) for t in inputs]


def value_and_grad(f, argnums=0, has_aux=False):
    """A function returning (f(*args), gradient of f w.r.t. args[argnums]).

    f must return a scalar (or (scalar, aux) with has_aux=True).
    """
    def wrapper(*args):
        nums = _argnums(argnums, len(args), "grad")
        tape, inputs, out = _record(f, args, nums, "grad")
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError("[grad] has_aux=True needs f to return a pair (output, aux).")
            out, aux = out
        _check_scalar(out, "grad")
        seed = np.ones(tuple(dnp.shape(out)), dtype=dnp.result_dtype(out))
        grads = _pullback(tape, inputs, [out], [seed]) if isinstance(out, Tensor) else \
            [_zeros(t) for t in inputs]
        wrt = [args[i] for i in nums]
        packed = _pack(wrt, grads)
        result = packed[0] if isinstance(argnums, int) else tuple(packed)
        value = _unwrap(out)
        return ((value, nest.map_structure(_unwrap, aux)), result) if has_aux else (value, result)

    return wrapper


def grad(f, argnums=0, has_aux=False):
    """A function returning the gradient of scalar f w.r.t. args[argnums] (reverse mode).

    >>> grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
    array([2., 4.])
    """
    vg = value_and_grad(f, argnums, has_aux)

    def gradient(*args):
        value, g = vg(*args)
        if has_aux:
            return g, value[1]
        return g

    return gradient


def vjp(f, *primals):
    """(f(*primals), vjp_fn) where vjp_fn(cotangent) gives one cotangent per primal."""
    tape, inputs, out = _record(f, primals, tuple(range(len(primals))), "vjp")
    flat_out = nest.flatten(out)
    value = nest.map_structure(_unwrap, out)

    def vjp_fn(cotangent):
        seeds = nest.flatten(cotangent)
        if len(seeds) != len(flat_out):
            raise ValueError(f"[vjp] cotangent has {len(seeds)} leaves but the output has "
                             f"{len(flat_out)}; give one per output, in the same structure.")
        targets, used = [], []
        for o, s in zip(flat_out, seeds):
            if isinstance(o, Tensor):
                targets.append(o)
                refuse_complex(dnp.result_dtype(s), "vjp", "a cotangent")
                used.append(s if isinstance(s, Traced) else np.asarray(s, dtype=dnp.result_dtype(o)))
        grads = _pullback(tape, inputs, targets, used) if targets else [_zeros(t) for t in inputs]
        return tuple(nest.pack_sequence_as(list(primals), grads))

    return value, vjp_fn


def jacrev(f, argnums=0):
    """The Jacobian by reverse mode: one vectorized backward sweep per chunk of output rows."""
    from .jacobians import tape_jacobian
    from .tape import UnconnectedGradients

    def jacobian(*args):
        nums = _argnums(argnums, len(args), "jacrev")
        tape, inputs, out = _record(f, args, nums, "jacrev")
        wrt = [args[i] for i in nums]
        results = []
        for o in nest.flatten(out):
            oshape = tuple(dnp.shape(o))
            if isinstance(o, Tensor):
                blocks = tape_jacobian(tape, o, list(inputs), UnconnectedGradients.ZERO, True)
            else:  # an output that does not depend on the inputs
                blocks = [np.zeros(oshape + tuple(dnp.shape(x))) for x in inputs]
            per_input = [_as_output(_unwrap(b)) for b in blocks]
            packed = nest.pack_sequence_as(wrt, per_input)
            results.append(packed[0] if isinstance(argnums, int) else tuple(packed))
        return nest.pack_sequence_as(out, results)

    return jacobian


# -- second order ------------------------------------------------------------------------------
#
# Both record f once with plain arrays and run forward-over-reverse on that tape (see
# second_order.py); a Hessian's chunks share the recording. Inside another transform, they
# are jvp of grad, which nests like every other transform.

def hessian(f, argnums=0, chunk_size=None):
    """The Hessian as jacfwd of the reverse-mode gradient (forward-over-reverse, chunked).

    >>> hessian(lambda x: dnp.sum(x ** 3))(np.array([1.0, 2.0]))
    array([[ 6.,  0.],
           [ 0., 12.]])
    """
    nested = jacfwd(grad(f, argnums), argnums, chunk_size=chunk_size)

    def hess(*args):
        if not isinstance(argnums, int) or not _top_level(args):
            return nested(*args)
        nums = _argnums(argnums, len(args), "hessian")
        if nest.is_nested(args[nums[0]]):
            return nested(*args)
        tape, inputs, out = _record(f, args, nums, "hessian")
        _check_scalar(out, "hessian")
        x = inputs[0]
        shape = tuple(dnp.shape(x))
        n = int(np.prod(shape))
        chunk = n if chunk_size is None else max(1, min(int(chunk_size), n))
        dtype = dnp.result_dtype(x)
        rows = []
        for start in range(0, n, chunk):
            k = min(chunk, n - start)
            basis = np.zeros((k, n), dtype=dtype)
            basis[np.arange(k), np.arange(start, start + k)] = 1
            dgrad = gradient_tangents(tape, inputs, out, [basis.reshape((k,) + shape)], k)
            if dgrad is None:
                return nested(*args)
            row = dgrad[0] if dgrad[0].flags.writeable else np.array(dgrad[0])  # not a broadcast view
            rows.append(row.reshape(k, n))
        full = rows[0] if len(rows) == 1 else np.concatenate(rows)  # row j: d grad / d x_j
        return full.T.reshape(shape + shape)  # H[i, j] = d grad_i / d x_j (a view for vectors)

    return hess


def hvp(f, primals, tangents):
    """The Hessian-vector product H(primals) @ tangents by forward-over-reverse.

    One forward pass of dual numbers through one backward pass: about the cost of two or
    three gradients. Returns one array per primal (a single array for one primal).
    """
    argnums = 0 if len(primals) == 1 else tuple(range(len(primals)))
    if not (isinstance(primals, (tuple, list)) and isinstance(tangents, (tuple, list))
            and _top_level(primals) and _top_level(tangents)):
        return _forward(grad(f, argnums), tuple(primals), tuple(tangents), "hvp")[1]
    if len(primals) != len(tangents):
        raise ValueError(f"[hvp] got {len(primals)} primals but {len(tangents)} tangents.")
    flat_p = [_as_input(p, "hvp", "a primal") for p in _flatten(primals)]
    flat_t = _flatten(tangents)
    if len(flat_p) != len(flat_t):
        raise ValueError("[hvp] primals and tangents have different structures.")
    flat_t = [_check_tangent(t, p, "hvp") for p, t in zip(flat_p, flat_t)]
    primals = _pack(tuple(primals), flat_p)
    tape, inputs, out = _record(f, primals, tuple(range(len(primals))), "hvp")
    _check_scalar(out, "hvp")
    dgrads = gradient_tangents(tape, inputs, out, flat_t, None)
    if dgrads is None:
        return _forward(grad(f, argnums), tuple(primals), tuple(tangents), "hvp")[1]
    packed = _pack(list(primals), dgrads)
    return packed[0] if argnums == 0 else tuple(packed)


def _top_level(values):
    """True outside every transform and tape, with no traced value among `values`."""
    if STATE.tapes or STATE.accumulators:
        return False
    for v in _flatten(list(values)):
        if isinstance(v, Traced):
            return False
    return True


def _check_scalar(out, api):
    if math.prod(dnp.shape(out)) != 1:
        raise TypeError(f"[{api}] f must return a scalar, got shape {tuple(dnp.shape(out))}. "
                        "Use jacrev / jacfwd for vector outputs, or vjp.")
