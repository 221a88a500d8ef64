"""Second order and the mode-choosing jacobian: `hessian`, `hvp` (forward-over-reverse on one
recording) and `jacobian` (jacfwd or jacrev, whichever needs fewer passes)."""

import numpy as np

from ..core import dnp, nest
from ..forward.second_order import gradient_tangents
from ..sparsity import Plans, check_sparse_call
from .forward_mode import jacfwd, run_forward
from .reverse_mode import grad, jacrev, run_on_tape, unlock
from .values import (plan_arguments, as_input, as_output, at_top_level, check_input_kinds, check_scalar, check_tangent, checked_argnums, sparse_argument, flatten, pack,
                     split_aux, unwrap_aux)

# -- second order ------------------------------------------------------------------------------
#
# Both record f once with plain arrays and run forward-over-reverse on that tape (see
# second_order.py); a Hessian's chunks share the recording. Inside another transform, they
# are jvp of grad, which nests like every other transform.

def hessian(f, argnums=0, chunk_size=None, has_aux=False, holomorphic=False, sparsity=None, sparse_output=False):
    """The Hessian as jacfwd of the reverse-mode gradient (forward-over-reverse, chunked).

    With `has_aux=True`, f returns `(scalar, aux)` and the function `(hessian, aux)`, aux
    as f returned it (JAX's `hessian(f, has_aux=True)`). Keyword arguments of the call go
    to f and are not differentiated.

    sparsity: "auto" (detected by running f once per shape), a boolean (n, n) array or a
    scipy.sparse matrix: the Hessian's pattern, from which a star coloring groups the columns
    so that a few Hessian-vector products give every entry (a banded Hessian costs about
    bandwidth + 1 of them, whatever n). sparse_output=True returns a scipy.sparse CSR matrix
    (n, n), the input flattened in C order. See docs/jacobians.md.

    >>> hessian(lambda x: dnp.sum(x ** 3))(np.array([1.0, 2.0]))
    array([[ 6.,  0.],
           [ 0., 12.]])
    >>> hessian(lambda x: dnp.sum(x[1:] * x[:-1]), sparsity="auto")(np.zeros(3))
    array([[0., 1., 0.],
           [1., 0., 1.],
           [0., 1., 0.]])
    """
    if sparsity is not None or sparse_output:
        return _sparse_hessian(f, argnums, has_aux, sparsity, sparse_output)
    nested = jacfwd(grad(f, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                    chunk_size=chunk_size, has_aux=has_aux, holomorphic=holomorphic)

    def hess(*args, **kwargs):
        if not holomorphic:  # JAX's hessian is jacfwd(jacrev(f)): real inputs only
            nums = checked_argnums(argnums, len(args), "hessian")
            check_input_kinds(flatten([args[i] for i in nums]), "hessian", False)
        if holomorphic or not isinstance(argnums, int) or not at_top_level(args):
            return nested(*args, **kwargs)
        nums = checked_argnums(argnums, len(args), "hessian")
        if nest.is_pytree_node(args[nums[0]]):
            return nested(*args, **kwargs)
        tape, inputs, out = run_on_tape(f, args, nums, "hessian", kwargs)
        try:
            if has_aux:
                out, aux = split_aux(out, "hessian")
            check_scalar(out, "hessian")
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
                    return nested(*args, **kwargs)
                row = dgrad[0] if dgrad[0].flags.writeable else np.array(dgrad[0])  # not a broadcast view
                rows.append(row.reshape(k, n))
            full = rows[0] if len(rows) == 1 else np.concatenate(rows)  # row j: d grad / d x_j
            full = full.T.reshape(shape + shape)  # H[i, j] = d grad_i / d x_j (a view for vectors)
            return (full, unwrap_aux(aux)) if has_aux else full
        finally:
            unlock(tape)  # computed: nothing reads the arguments any more

    return hess


def _sparse_hessian(f, argnums, has_aux, sparsity, sparse_output):
    """hessian(f, sparsity=...): k compressed Hessian-vector products on one recording of f."""
    check_sparse_call(sparsity, sparse_output, argnums, "hessian")
    plans = Plans(f, "hessian", sparsity, "hessian")

    def hess(*args, **kwargs):
        position, x = sparse_argument(args, argnums, "hessian")
        check_input_kinds(flatten([x]), "hessian", False)
        shape = tuple(dnp.shape(x))
        n = int(np.prod(shape))
        top = at_top_level(args)
        plain_args, plain_kwargs = plan_arguments(plans.auto, args, kwargs, "hessian")
        _, compression = plans.plan(plain_args, position, plain_kwargs)
        dtype = dnp.result_dtype(x)
        dtype = dtype if dtype.kind == "f" else np.dtype(np.float64)
        seeds = compression.seeds(dtype)
        if len(seeds) == 0:  # no second derivative anywhere: one zero direction keeps f's checks
            seeds = np.zeros((1, n), dtype=dtype)
        k = len(seeds)
        seeds = seeds.reshape((k,) + shape)
        compressed = aux = None
        if top:
            tape, inputs, out = run_on_tape(f, args, (position,), "hessian", kwargs)
            try:
                if has_aux:
                    out, aux = split_aux(out, "hessian")
                check_scalar(out, "hessian")
                dgrad = gradient_tangents(tape, inputs, out, [seeds], k)
                if dgrad is not None:
                    compressed = np.asarray(dgrad[0]).reshape(k, n)
            finally:
                unlock(tape)
        if compressed is None:  # inside another transform: jvp of grad, batched over the seeds
            gradient = grad(f, argnums, has_aux=has_aux)
            full = list(args)

            def g(value):
                full[position] = value
                return gradient(*full, **kwargs)
            result = run_forward(g, (x,), (seeds,), "hessian", batch=k, has_aux=has_aux)
            aux = result[2] if has_aux else None
            compressed = dnp.reshape(result[1], (k, n))
        full_hessian = compression.result(compressed, sparse_output, shape + shape, "hessian")
        return (full_hessian, unwrap_aux(aux)) if has_aux else full_hessian

    return hess


def hvp(f, primals, tangents):
    """The Hessian-vector product H(primals) @ tangents by forward-over-reverse.

    One forward pass of dual numbers through one backward pass: about the cost of two or
    three gradients. Returns one array per primal (a single array for one primal).
    """
    argnums = 0 if len(primals) == 1 else tuple(range(len(primals)))
    if not (isinstance(primals, (tuple, list)) and isinstance(tangents, (tuple, list))
            and at_top_level(primals) and at_top_level(tangents)):
        return run_forward(grad(f, argnums), tuple(primals), tuple(tangents), "hvp")[1]
    if len(primals) != len(tangents):
        raise ValueError(f"[hvp] got {len(primals)} primals but {len(tangents)} tangents.")
    originals = primals  # (Python numbers among them are rebound by x += 1, as in Python)
    flat_p = [as_input(p, "hvp", "a primal") for p in flatten(primals)]
    flat_t = flatten(tangents)
    if len(flat_p) != len(flat_t):
        raise ValueError("[hvp] primals and tangents have different structures.")
    flat_t = [check_tangent(t, p, "hvp") for p, t in zip(flat_p, flat_t)]
    primals = pack(tuple(primals), flat_p)
    tape, inputs, out = run_on_tape(f, tuple(originals), tuple(range(len(primals))), "hvp")
    try:
        check_scalar(out, "hvp")
        dgrads = gradient_tangents(tape, inputs, out, flat_t, None)
        if dgrads is None:
            return run_forward(grad(f, argnums), tuple(primals), tuple(tangents), "hvp")[1]
        packed = pack(list(primals), [as_output(g) for g in dgrads])  # arrays, 0-d for numbers
        return packed[0] if argnums == 0 else tuple(packed)
    finally:
        unlock(tape)  # computed: nothing reads the arguments any more


# -- functional jacobian ----------------------------------------------------------------------

def _size(x):
    return int(np.prod(dnp.shape(x), dtype=np.int64))


def jacobian(f, argnums=0):
    """The jacobian of `f` w.r.t. args[argnums], by forward mode (`jacfwd`) when the
    differentiated inputs have fewer elements than the outputs, else by reverse mode
    (`jacrev`): each pass then yields the larger side. Shapes as jacfwd / jacrev:
    `out.shape + in.shape`, nested like the outputs outside and the inputs inside.

    Choosing needs the output size, so `f` runs once more than the chosen mode needs.

    >>> import dualtape as tf
    >>> tf.jacobian(lambda x: tf.dnp.sin(x) * 2.0)(np.zeros(3))
    array([[2., 0., 0.],
           [0., 2., 0.],
           [0., 0., 2.]])
    """
    def jacobian_of_f(*args, **kwargs):
        nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
        n_in = sum(_size(leaf) for i in nums for leaf in nest.tree_flatten(args[i]))
        n_out = sum(_size(leaf) for leaf in nest.tree_flatten(f(*args, **kwargs)))
        mode = jacfwd if n_in < n_out else jacrev
        return mode(f, argnums)(*args, **kwargs)

    return jacobian_of_f
