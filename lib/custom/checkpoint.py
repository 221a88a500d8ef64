"""Checkpointing (rematerialization): trade time for memory in reverse mode.

`recompute_grad(f)` (TensorFlow's name) and `checkpoint(f)` / `remat(f)` (JAX's names) wrap a
block of code so that no tape records anything inside it: the block runs once with every
tape paused, its outputs are re-bound (`custom.bind.rebind`) to one tape record, and the
backward pass runs `f` again on the same inputs under a fresh tape to get the block's VJP.
The tape then holds one record per call of the block instead of one per op inside it, at
the price of a second forward pass of the block during `gradient`.

Forward mode (`jvp`, `jacfwd`, `ForwardAccumulator` with no tape) sees `f`'s own code: a
checkpoint is transparent there. Nested checkpoints and higher order work because the
recomputation runs while enclosing tapes record (they see it, and its backward pass, as
ordinary code), as for `custom_gradient`.
"""

import functools

from ..core import nest
from ..reverse.dispatch import STATE
from ..reverse.tape import GradientTape, UnconnectedGradients
from ..reverse.tensor import Tensor, wrap
from ..core import dnp
from .bind import dual_level, is_float, rebind


def recompute_grad(f):
    """Decorate `f` so that its forward values are recomputed in the backward pass.

    >>> block = dualtape.recompute_grad(lambda x: dualtape.tanh(x) ** 2)
    >>> x = dualtape.constant(0.5, dtype=dualtape.float64)
    >>> with dualtape.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = block(x)
    >>> len(tape._entries)        # one record for the whole block
    1
    >>> round(float(tape.gradient(y, x)), 6)
    0.726862

    As in TF: positional arguments are differentiated (keyword arguments are passed through
    unchanged), `f` may return a tensor or a nested structure of tensors, and trainable
    variables read inside `f` get their gradients too (TF passes them to the gradient
    function as `variables=`; here the recomputation finds them by itself). `f` must be
    deterministic: the backward pass assumes the second run computes the same values.
    """
    name = getattr(f, "__name__", "f")

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        return _call(f, name, args, kwargs)

    wrapped.__dualtape_opaque__ = "a recompute_grad function"
    return wrapped


def checkpoint(fun, *, prevent_cse=True, static_argnums=(), policy=None):
    """JAX's `jax.checkpoint`: `fun` whose internal values are recomputed in the backward pass.

    >>> f = dualtape.checkpoint(lambda x: np.sum(np.sin(x) ** 2))
    >>> g = dualtape.grad(f)(np.array([0.1, 0.2]))

    `prevent_cse` is accepted and ignored: dualtape never merges common subexpressions, so
    nothing can undo the recomputation. `policy` is accepted and ignored: nothing inside
    `fun` is saved (JAX's `nothing_saveable`), whatever the policy says. `static_argnums`
    names positional arguments that are not differentiated (passed through as they are).
    """
    del prevent_cse, policy
    static = {static_argnums} if isinstance(static_argnums, int) else set(static_argnums)
    name = getattr(fun, "__name__", "fun")

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        if not static:
            return _call(fun, name, args, kwargs)
        fixed = {i % len(args): a for i, a in enumerate(args) if i in static or i - len(args) in static}
        free = [a for i, a in enumerate(args) if i not in fixed]

        def inner(*free_args, **kw):
            it = iter(free_args)
            return fun(*[fixed[i] if i in fixed else next(it) for i in range(len(args))], **kw)

        return _call(inner, name, free, kwargs, owner=fun)

    wrapped.__dualtape_opaque__ = "a checkpoint function"
    return wrapped


remat = checkpoint


def _call(f, name, args, kwargs, owner=None):
    leaves = nest.flatten(list(args))
    if not STATE.tapes or dual_level(leaves) is not None:
        return f(*args, **kwargs)  # no tape to save memory on (plain, forward mode): f's own code
    tapes = list(STATE.tapes)
    accessed = []
    STATE.custom_capture.append(accessed)
    for tape in reversed(tapes):
        tape._pop()
    try:
        result = f(*args, **kwargs)
    finally:
        for tape in tapes:
            tape._push()
        STATE.custom_capture.pop()
    arg_ids = {a._id for a in leaves if isinstance(a, Tensor)}
    closed = [v for v in _closure_tensors(owner or f) if v._id not in arg_ids]
    variables = list({v._id: v for v in accessed + closed if v._id not in arg_ids}.values())
    read = {v._id for v in accessed}
    for tape in tapes:  # reading a variable inside the block watches it, as it would outside
        for v in variables:
            if tape._watch_accessed and v._id not in tape._watched and v._id in read:
                tape._watch_variable(v)
    inputs = leaves + variables

    def vjp_fn(upstreams):
        return _recompute_vjp(f, args, kwargs, leaves, variables, upstreams)

    return rebind(f"Recompute:{name}", inputs, result, vjp_fn)


def _recompute_vjp(f, args, kwargs, leaves, variables, upstreams):
    """Run f again on its inputs under a fresh tape and pull `upstreams` back through it."""
    tape = GradientTape(persistent=False, watch_accessed_variables=False)
    with tape:
        fresh = [dnp.identity(x) if isinstance(x, Tensor) else x for x in leaves]  # new ids
        for x in fresh:
            if isinstance(x, Tensor):
                tape.watch(x)
        for v in variables:
            tape.watch(v)
        result = f(*nest.pack_sequence_as(list(args), fresh), **kwargs)
    outputs = nest.flatten(result)
    targets, seeds = [], []
    for out, u in zip(outputs, upstreams):
        if u is not None and isinstance(out, Tensor):
            targets.append(out)
            seeds.append(u if isinstance(u, Tensor) else wrap(u))
    sources = [x if isinstance(x, Tensor) else None for x in fresh] + list(variables)
    real = [s for s in sources if s is not None]
    if not targets or not real:
        return [None] * len(sources)
    grads = iter(tape.gradient(targets, real, output_gradients=seeds,
                               unconnected_gradients=UnconnectedGradients.NONE))
    return [None if s is None else next(grads) for s in sources]



def _closure_tensors(f):
    """Tensors `f` closes over directly (its closure cells): differentiated like arguments, as by
    JAX's checkpoint. Values reached otherwise (globals, a closure of a function f calls) are
    not: pass them as arguments."""
    out = []
    for cell in getattr(f, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        out += [v for v in nest.flatten(value) if isinstance(v, Tensor) and is_float(v._value)] if isinstance(
            value, (Tensor, list, tuple, dict)) else []
    return out
