"""Reverse mode: `value_and_grad`, `grad`, `vjp` and `jacrev`, on a private GradientTape."""

import numpy as np

from ..core import dnp, nest
from ..core.duck import as_array, ones_for
from ..core.traced import Traced
from ..forward.inplace import enter_arguments, leave_arguments
from ..reverse.jacobians import tape_jacobian
from ..reverse.tape import GradientTape
from ..reverse.tensor import Tensor, wrap
from ..sparsity import Plans, check_rows, check_sparse_call
from .values import (plan_arguments, as_input, as_output, check_cotangent_kind, check_input_kinds, check_output_kinds, check_outputs,
                     check_scalar, checked_argnums, element_write_refusal, flatten, pack, sparse_argument, split_aux, unwrap,
                     unwrap_aux,
                     zero_tangent)

# -- reverse mode ------------------------------------------------------------------------------

_FLOAT_VALUES = (np.ndarray, np.float64, np.float32)

def _watched_inputs(tape, leaves, api):
    """Fresh tensors for `leaves`, watched by `tape` only (a fresh id per grad level). The
    caller's arrays become read-only (f cannot change what the tape saved through another
    name); `tape._locked` lists those that were writeable, for `unlock` once the tape is spent."""
    out = []
    watched = tape._watched
    locked = tape._locked = []
    for leaf in leaves:
        if leaf.__class__ is np.ndarray and leaf.dtype.kind == "f":
            if leaf.flags.writeable:
                locked.append(leaf)
                _LOCKS[id(leaf)] = 1
            elif id(leaf) in _LOCKS:  # locked by another live transform (a vjp's pullback)
                _LOCKS[id(leaf)] += 1  # writeable again once the last one is done
                locked.append(leaf)
            t = wrap(leaf)  # the common case: a float array, as as_input takes it
        else:
            leaf = as_input(leaf, api, "the differentiated argument")
            if isinstance(leaf, Tensor):
                t = dnp.identity(leaf)  # new id, connected to the outer tape by Identity
            else:
                t = wrap(leaf)
        watched.add(t._id)
        out.append(t)
    return out



def run_on_tape(f, args, nums, api, kwargs=None, persistent=True):
    """Run f under a private tape; return (tape, inputs, output). `kwargs` go to f as they
    are: keyword arguments are never differentiated (as in JAX). persistent=False: one
    backward pass only (`grad`), which then releases each record once used."""
    tape = GradientTape(persistent=persistent, watch_accessed_variables=False)
    tape._escape_api = api  # a value of f turned into a plain float or array raises (tensor.py)
    wrt = [args[i] for i in nums]
    flat = flatten(wrt)
    try:
        with tape:
            inputs = _watched_inputs(tape, flat, api)
            packed = pack(wrt, inputs)
            full = list(args)
            for slot, i in enumerate(nums):
                full[i] = packed[slot]
            keys = enter_arguments(inputs, flat)  # x += 1 on them: forward/inplace.py
            try:
                out = f(*full, **kwargs) if kwargs else f(*full)
            finally:
                leave_arguments(keys)
    except BaseException as e:
        unlock(tape)
        refusal = element_write_refusal(e, api) if isinstance(e, ValueError) else None
        if refusal is not None:
            raise refusal from e
        raise
    return tape, inputs, out


# id(array) -> number of live transforms reading it: the caller's arrays made read-only by
# _watched_inputs, writeable again when the last transform that reads them is done with them.
# (Each id is held alive by a lock list while counted, so it cannot be reused meanwhile; ints
# keep the dict out of the cyclic collector's sight, as test_no_cycles checks.)
_LOCKS = {}


def unlock(tape):
    """Give the caller back its arrays writeable, as they were (`_watched_inputs`)."""
    _unlock_arrays(getattr(tape, "_locked", ()))
    tape._locked = ()  # once only


class _Unlocker:
    """Unlocks `arrays` when freed: held by vjp's pullback, it goes with it (`del vjp_fn`)."""

    __slots__ = ("arrays",)

    def __init__(self, arrays):
        self.arrays = arrays

    def __del__(self):
        _unlock_arrays(self.arrays)


def _sparse_jacrev(f, argnums, has_aux, holomorphic, sparsity, sparse_output):
    """jacrev(f, sparsity=...): one batched backward sweep over the colors' cotangents."""
    check_sparse_call(sparsity, sparse_output, argnums, "jacrev")
    plans = Plans(f, "jacrev", sparsity, "jacrev")

    def jacobian(*args, **kwargs):
        position, x = sparse_argument(args, argnums, "jacrev")
        if holomorphic:
            check_input_kinds([x], "jacrev", True)
        tape, inputs, out = run_on_tape(f, args, (position,), "jacrev", kwargs)
        try:
            if has_aux:
                out, aux = split_aux(out, "jacrev")
            check_outputs(out, "jacrev")
            if nest.is_pytree_node(out):
                raise TypeError(f"[jacrev] sparsity= needs f to return one array, got a "
                                f"{type(out).__name__}; use sparsity=None for nested outputs.")
            check_output_kinds([out], "jacrev", holomorphic)
            shape, oshape = tuple(dnp.shape(x)), tuple(dnp.shape(out))
            n, m = int(np.prod(shape)), int(np.prod(oshape))
            plain_args, plain_kwargs = plan_arguments(plans.auto, args, kwargs, "jacrev")
            _, compression = plans.plan(plain_args, position, plain_kwargs, m)
            check_rows(compression, m, "jacrev")
            seeds = compression.seeds(dnp.result_dtype(out))
            if len(seeds) == 0:
                seeds = np.zeros((1, m), dtype=dnp.result_dtype(out))
            k = len(seeds)
            source = inputs[0]
            compressed = None
            if isinstance(out, Tensor):
                grads = tape._backward([out], [seeds.reshape((k,) + oshape)], {source._id}, consume=False, batch=k)
                if source._id in grads:
                    compressed = dnp.reshape(unwrap(grads[source._id]), (k, n))
            if compressed is None:  # no output depends on the input
                compressed = np.zeros((k, n), dtype=dnp.result_dtype(out))
            jac = compression.result(compressed, sparse_output, oshape + shape, "jacrev")
            return (jac, unwrap_aux(aux)) if has_aux else jac
        finally:
            unlock(tape)

    return jacobian


def _unlock_arrays(arrays):
    for leaf in arrays:
        count = _LOCKS.get(id(leaf))
        if count is None:
            continue
        if count == 1:
            del _LOCKS[id(leaf)]
            leaf.setflags(write=True)
        else:
            _LOCKS[id(leaf)] = count - 1


def _pullback(tape, inputs, targets, seeds):
    # a non-persistent tape (grad's) is consumed: its records go as the pass uses them, so
    # the backward pass reuses the forward pass's memory instead of growing past it
    grads = tape._backward(targets, seeds, {t._id for t in inputs}, consume=not tape._persistent)
    return [unwrap(grads[t._id]) if t._id in grads else zero_tangent(t) for t in inputs]


def value_and_grad(f, argnums=0, has_aux=False, holomorphic=False):
    """A function returning (f(*args), gradient of f w.r.t. args[argnums]) (reverse mode).

    The function returns `(value, gradient)`, or `((value, aux), gradient)` with
    `has_aux=True`. The gradient has the structure of `args[argnums]`, a tuple of them when
    `argnums` is a tuple.

    Args:
        f: a function of NumPy values (nested tuples, lists and dicts of them included)
            returning a scalar, or a pair (scalar, aux) with `has_aux=True`.
        argnums: the position of the argument to differentiate, or a tuple of positions.
        has_aux: f returns (scalar, aux); aux comes back with f's value, not differentiated,
            as f returned it (traced values inside it come back as plain values).
        holomorphic: f is complex-differentiable, with complex inputs and a complex output;
            the gradient is then f'(z). Without it, f must be real-valued, and the gradient
            of complex inputs is JAX's, dL/dx - i dL/dy (docs/numerics.md).

    Keyword arguments of the call go to f and are not differentiated.

    >>> value_and_grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
    (array(5.), array([2., 4.]))
    """
    positions = {}  # len(args) -> the checked argnums (one entry per arity used)

    def wrapper(*args, **kwargs):
        nums = positions.get(len(args))
        if nums is None:
            nums = checked_argnums(argnums, len(args), "grad")
            if argnums.__class__ is int or argnums.__class__ is tuple:  # (a list may change)
                positions[len(args)] = nums
        if holomorphic:
            check_input_kinds(flatten([args[i] for i in nums]), "grad", True)
        tape, inputs, out = run_on_tape(f, args, nums, "grad", kwargs, persistent=False)
        try:
            if has_aux:
                out, aux = split_aux(out, "grad")
            check_scalar(out, "grad", holomorphic)
            value = getattr(out, "_value", None)
            if value.__class__ in _FLOAT_VALUES and value.dtype.kind == "f":
                seed = None  # the tape's own seed: ones of the output's shape and dtype
            else:
                seed = ones_for(out, dnp.result_dtype(out))  # lazy ones for a dask value
            grads = _pullback(tape, inputs, [out], [seed]) if isinstance(out, Tensor) else \
                [zero_tangent(t) for t in inputs]
        finally:
            unlock(tape)  # the tape is spent: nothing reads the arguments any more
        wrt = [args[i] for i in nums]
        packed = pack(wrt, grads)
        result = packed[0] if isinstance(argnums, int) else tuple(packed)
        value = unwrap(out)
        return ((value, unwrap_aux(aux)), result) if has_aux else (value, result)

    return wrapper


def grad(f, argnums=0, has_aux=False, holomorphic=False):
    """A function returning the gradient of scalar f w.r.t. args[argnums] (reverse mode).

    `argnums`, `has_aux` and `holomorphic` are as in `value_and_grad`; with `has_aux=True`
    the function returns `(gradient, aux)`.

    >>> grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
    array([2., 4.])
    """
    vg = value_and_grad(f, argnums, has_aux, holomorphic)

    def gradient(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    return gradient


def vjp(f, *primals, has_aux=False):
    """(f(*primals), vjp_fn): f's value, and its vector-Jacobian product at `primals`.

    f runs once, recorded on a tape; `vjp_fn(cotangent)`, with a cotangent of the output's
    structure and shapes, returns a tuple with one cotangent per primal (`cotangent @ J`),
    and may be called many times. With `has_aux=True`, f returns `(output, aux)` and vjp
    returns `(output, vjp_fn, aux)`, as JAX's. NumPy arrays among `primals` stay read-only
    while vjp_fn may read them (grad, hessian, hvp and jacrev hand them back writeable).
    """
    tape, inputs, out = run_on_tape(f, primals, tuple(range(len(primals))), "vjp")
    try:
        if has_aux:
            out, aux = split_aux(out, "vjp")
        flat_out = nest.tree_flatten(out)
        check_outputs(out, "vjp", flat_out)
    except BaseException:
        unlock(tape)
        raise
    value = nest.tree_map(unwrap, out)

    def vjp_fn(cotangent):
        seeds = nest.tree_flatten(cotangent)
        if len(seeds) != len(flat_out):
            raise ValueError(f"[vjp] cotangent has {len(seeds)} leaves but the output has "
                             f"{len(flat_out)}; give one per output, in the same structure.")
        targets, used = [], []
        for o, s in zip(flat_out, seeds):
            if isinstance(o, Tensor):
                targets.append(o)
                check_cotangent_kind(s, o, "vjp")
                used.append(s if isinstance(s, Traced) else as_array(s, dtype=dnp.result_dtype(o)))
        grads = _pullback(tape, inputs, targets, used) if targets else [zero_tangent(t) for t in inputs]
        return tuple(nest.tree_unflatten(list(primals), grads))

    if tape._locked:  # the caller's arrays are read-only while vjp_fn may read them
        vjp_fn._unlock_when_freed = _Unlocker(tape._locked)  # (weakref.finalize costs 10x more)
    return (value, vjp_fn, unwrap_aux(aux)) if has_aux else (value, vjp_fn)


def jacrev(f, argnums=0, has_aux=False, holomorphic=False, sparsity=None, sparse_output=False):
    """The Jacobian by reverse mode: one vectorized backward sweep per chunk of output rows.

    holomorphic: f is complex-differentiable from complex inputs to complex outputs; the
    Jacobian is then f'(z). Without it, outputs must be real (JAX's rule).
    With `has_aux=True`, f returns `(output, aux)` and the function `(jacobian, aux)`.
    Keyword arguments of the call go to f and are not differentiated.

    sparsity: "auto", a boolean array or a scipy.sparse matrix (as jacfwd's): output rows that
    share no input column go in one cotangent, so a banded Jacobian costs a few VJPs, in one
    batched backward sweep. sparse_output=True returns a scipy.sparse CSR matrix."""
    if sparsity is not None or sparse_output:
        return _sparse_jacrev(f, argnums, has_aux, holomorphic, sparsity, sparse_output)

    def jacobian(*args, **kwargs):
        nums = checked_argnums(argnums, len(args), "jacrev")
        if holomorphic:
            check_input_kinds(flatten([args[i] for i in nums]), "jacrev", True)
        tape, inputs, out = run_on_tape(f, args, nums, "jacrev", kwargs)
        try:
            if has_aux:
                out, aux = split_aux(out, "jacrev")
            check_outputs(out, "jacrev")
            check_output_kinds(nest.tree_flatten(out), "jacrev", holomorphic)
            wrt = [args[i] for i in nums]
            results = []
            for o in nest.tree_flatten(out):
                oshape = tuple(dnp.shape(o))
                if isinstance(o, Tensor):
                    blocks = tape_jacobian(tape, o, list(inputs), True, True)
                else:  # an output that does not depend on the inputs
                    blocks = [np.zeros(oshape + tuple(dnp.shape(x))) for x in inputs]
                per_input = [as_output(unwrap(b)) for b in blocks]
                packed = nest.tree_unflatten(wrt, per_input)
                results.append(packed[0] if isinstance(argnums, int) else tuple(packed))
            jac = nest.tree_unflatten(out, results)
            return (jac, unwrap_aux(aux)) if has_aux else jac
        finally:
            unlock(tape)  # the jacobian is made: nothing reads the arguments any more

    return jacobian
