"""Forward mode: `jvp`, `linearize` and `jacfwd`, on dual numbers of a fresh tag."""

import numpy as np

from ..core import dnp, nest
from ..core.traced import Traced
from ..forward.dual import API_OF_TAG, Dual
from ..forward.inplace import enter_arguments, leave_arguments
from ..reverse.dispatch import new_tag
from ..reverse.tensor import Tensor
from ..sparsity import Plans, check_rows, check_sparse_call
from .values import (plan_arguments, as_input, as_output, check_input_kinds, check_output_kinds, check_outputs, check_tangent, checked_argnums, element_write_refusal,
                     seen_outside, split_aux, unwrap_aux, zero_tangent)

# -- forward mode ------------------------------------------------------------------------------

def run_forward(f, primals, tangents, api, batch=None, has_aux=False, originals=None):
    """Run f on duals of a fresh tag: (out, out tangents) with zeros for unconnected outputs;
    with `has_aux`, f returns (out, aux) and aux comes third, this level's duals as values."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(f"[{api}] primals and tangents must be tuples (one entry per argument "
                        f"of f), got {type(primals).__name__} and {type(tangents).__name__}.")
    if len(primals) != len(tangents):
        raise ValueError(f"[{api}] got {len(primals)} primals but {len(tangents)} tangents.")
    tag = new_tag()
    given = nest.tree_flatten(primals)
    flat_p = [as_input(p, api, "a primal") for p in given]
    flat_t = nest.tree_flatten(tangents)
    if len(flat_p) != len(flat_t):
        raise ValueError(f"[{api}] primals and tangents have different structures.")
    duals = [Dual(p, check_tangent(t, p, api, batch), tag, batch) for p, t in zip(flat_p, flat_t)]
    keys = enter_arguments(duals, originals or given)  # x += 1 on them: forward/inplace.py
    API_OF_TAG[tag] = api  # the name a dual number's refusals give (dual.py)
    try:
        out = f(*nest.tree_unflatten(tuple(primals), duals))
    except ValueError as e:
        refusal = element_write_refusal(e, api)
        if refusal is not None:
            raise refusal from e
        raise
    finally:
        leave_arguments(keys)
        del API_OF_TAG[tag]
    if has_aux:
        out, aux = split_aux(out, api)
        aux = unwrap_aux(nest.tree_map(lambda leaf: leaf.primal if type(leaf) is Dual and leaf.tag == tag else leaf, aux))
    leaves = nest.tree_flatten(out)
    check_outputs(out, api, leaves)
    outs, out_tangents = [], []
    for leaf in leaves:
        while isinstance(leaf, Tensor) and not seen_outside(leaf):
            leaf = leaf._value  # a GradientTape's result inside jvp: a tensor holding duals
        if type(leaf) is Dual and leaf.tag == tag:
            outs.append(as_output(leaf.primal))
            tangent = leaf.tangent  # an array, as every output (a 0-d one for a number)
            out_tangents.append(tangent if tangent.__class__ is np.ndarray else as_output(tangent))
        else:
            outs.append(as_output(leaf))
            zero = zero_tangent(leaf)
            out_tangents.append(zero if batch is None else np.broadcast_to(zero, (batch,) + zero.shape))
    result = (nest.tree_unflatten(out, outs), nest.tree_unflatten(out, out_tangents))
    return result + (aux,) if has_aux else result


def jvp(f, primals, tangents, has_aux=False):
    """(f(*primals), J_f(primals) @ tangents) in one forward pass, on dual numbers.

    `primals` and `tangents` are tuples with one entry per argument of f, each tangent of
    its primal's structure and shape (nested tuples, lists, dicts, dataclasses and
    registered classes included). With `has_aux=True`, f returns `(output, aux)` and jvp
    returns `(output, tangent, aux)`, as JAX's.

    >>> jvp(np.sin, (0.5,), (1.0,))   # (sin 0.5, cos 0.5)
    """
    return run_forward(f, primals, tangents, "jvp", has_aux=has_aux)


def linearize(f, *primals):
    """(f(*primals), f_jvp) where f_jvp(*tangents) is the JVP at `primals`.

    `f_jvp` takes one tangent per primal and returns `J_f(primals) @ tangents` (the tangent
    part of `jvp` at the same point); call it for as many tangents as needed.
    """
    out = run_forward(f, primals, tuple(nest.tree_map(zero_tangent, list(primals))), "linearize")[0]

    def f_jvp(*tangents):
        return run_forward(f, primals, tangents, "linearize")[1]

    return out, f_jvp


def jacfwd(f, argnums=0, chunk_size=None, has_aux=False, holomorphic=False, sparsity=None, sparse_output=False):
    """The Jacobian by forward mode: chunks of `chunk_size` directions per pass (all at once
    by default). Shaped `out.shape + in.shape`; nested outputs and inputs give nested results
    (output structure outside, input structure inside). With `has_aux=True`, f returns
    `(output, aux)` and the function `(jacobian, aux)`. Keyword arguments of the call go to f
    and are not differentiated. holomorphic: f is complex-differentiable from complex inputs to
    complex outputs, and the Jacobian is f'(z); without it, inputs must be real (JAX's rule).

    sparsity: "auto" (detected by running f once per shape), a boolean array (outputs x inputs,
    or out.shape + in.shape) or a scipy.sparse matrix: columns that share no output row go in
    one direction, so a banded Jacobian costs a few JVPs. sparse_output=True returns a
    scipy.sparse CSR matrix (outputs x inputs, flattened in C order). See docs/jacobians.md.
    """
    if sparsity is not None or sparse_output:
        return _sparse_jacfwd(f, argnums, has_aux, holomorphic, sparsity, sparse_output)

    def jacobian(*args, **kwargs):
        nums = checked_argnums(argnums, len(args), "jacfwd")
        wrt = [args[i] for i in nums]
        flat_in = [as_input(x, "jacfwd", "the differentiated argument") for x in nest.tree_flatten(wrt)]
        check_input_kinds(flat_in, "jacfwd", holomorphic)
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
            packed_p = nest.tree_unflatten(wrt, flat_in)
            packed_t = nest.tree_unflatten(wrt, tangents)

            def g(*selected):
                full = list(args)
                for slot, i in enumerate(nums):
                    full[i] = selected[slot]
                return f(*full, **kwargs)

            return run_forward(g, tuple(packed_p), tuple(packed_t), "jacfwd", batch=k, has_aux=has_aux,
                            originals=nest.tree_flatten(wrt))

        out, first, *aux = run(0, min(chunk, n)) if n else (None, None)
        if n == 0:
            out = f(*args, **kwargs)
            if has_aux:
                out, aux = split_aux(out, "jacfwd")
                aux = [unwrap_aux(aux)]
            check_outputs(out, "jacfwd")
            first = nest.tree_map(lambda o: np.zeros((0,) + tuple(dnp.shape(o))), out)
        pieces = [nest.tree_flatten(first)]
        for start in range(chunk, n, chunk):
            pieces.append(nest.tree_flatten(run(start, min(start + chunk, n))[1]))
        flat_out = nest.tree_flatten(out)
        if holomorphic:
            check_output_kinds(flat_out, "jacfwd", True)
        results = []
        for j, o in enumerate(flat_out):
            full = _concat([p[j] for p in pieces])  # (n, *o.shape)
            oshape = tuple(dnp.shape(o))
            per_input = []
            for x, size, off in zip(flat_in, sizes, offsets):
                block = _rows(full, off, size, n)
                block = dnp.reshape(block, (size, int(np.prod(oshape))))
                block = dnp.transpose(block)
                per_input.append(as_output(dnp.reshape(block, oshape + tuple(dnp.shape(x)))))
            packed = nest.tree_unflatten(wrt, per_input)
            results.append(packed[0] if isinstance(argnums, int) else tuple(packed))
        jac = nest.tree_unflatten(out, results)
        return (jac, aux[0]) if has_aux else jac

    return jacobian


def _sparse_jacfwd(f, argnums, has_aux, holomorphic, sparsity, sparse_output):
    """jacfwd(f, sparsity=...): one batched forward pass over the colors' directions."""
    check_sparse_call(sparsity, sparse_output, argnums, "jacfwd")
    plans = Plans(f, "jacfwd", sparsity, "jacfwd")

    def jacobian(*args, **kwargs):
        nums = checked_argnums(argnums, len(args), "jacfwd")
        x = as_input(args[nums[0]], "jacfwd", "the differentiated argument")
        check_input_kinds([x], "jacfwd", holomorphic)
        shape = tuple(dnp.shape(x))
        n = int(np.prod(shape))
        plain_args, plain_kwargs = plan_arguments(plans.auto, args, kwargs, "jacfwd")
        _, compression = plans.plan(plain_args, nums[0], plain_kwargs)
        seeds = compression.seeds(dnp.result_dtype(x))
        if len(seeds) == 0:
            seeds = np.zeros((1, n), dtype=dnp.result_dtype(x))
        k = len(seeds)

        def g(value):
            full = list(args)
            full[nums[0]] = value
            return f(*full, **kwargs)

        out, tangent, *aux = run_forward(g, (x,), (seeds.reshape((k,) + shape),), "jacfwd", batch=k,
                                         has_aux=has_aux, originals=[args[nums[0]]])
        oshape = tuple(dnp.shape(out))
        m = int(np.prod(oshape))
        check_rows(compression, m, "jacfwd")
        compressed = dnp.reshape(tangent, (k, m))
        jac = compression.result(compressed, sparse_output, oshape + shape, "jacfwd")
        return (jac, aux[0]) if has_aux else jac

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
