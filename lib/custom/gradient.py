"""`custom_gradient` and `stop_gradient`: user control over what flows backwards.

`custom_gradient` follows TensorFlow's eager semantics: the decorated function runs
recorded like any other code, and its outputs are re-bound (`custom_bind.rebind`) so that
tapes use its gradient function. Forward mode uses the same gradient function: the
tangents are its transpose applied to the input tangents (the double-VJP trick of TF's
ForwardAccumulator), so `jvp`, `jacfwd`, `hessian` and `ForwardAccumulator` agree with it.
"""

import functools
import inspect

import numpy as np

from ..core import nest
from ..sparsity.custom import dense_custom, holds_patterns
from ..core import dnp
from ..core.traced import Traced
from .bind import as_duals, dual_level, per_direction, rebind, split_level, transpose
from ..reverse.dispatch import STATE
from ..forward.dual import Dual
from ..reverse.tensor import Tensor, convert_to_tensor, wrap


def stop_gradient(input, name=None):  # noqa: A002 - TF's argument name
    """The same value, seen by every tape and every mode as a constant: no gradient flows
    through it. The one definition: `dualtape.stop_gradient` (surface/tf_ops.py) re-exports it.

    Tensors and dual numbers pass to `dnp.stop_gradient` as they are; anything else is
    converted with TF's rules first (Python floats become float32 tensors).
    """
    out = dnp.stop_gradient(input if isinstance(input, Traced) else convert_to_tensor(input))
    return out if isinstance(out, Traced) else wrap(np.asarray(out))


def custom_gradient(f=None):
    """Decorate `f(*x) -> (y, grad_fn)` so that derivatives of `y` use `grad_fn`.

    >>> @dualtape.custom_gradient
    ... def clip_gradients(y):
    ...     def backward(dy):
    ...         return dualtape.clip_by_norm(dy, 0.5)
    ...     return y, backward

    As in TF: `y` may be a tensor or a nested structure of tensors, and `grad_fn(*dys)`
    gets one upstream gradient per flattened output and returns one gradient per
    flattened input. If `f` reads trainable variables, `grad_fn` must accept `variables=`
    and return `(input_grads, variable_grads)`. Forward mode (`jvp`, `jacfwd`, `hessian`,
    `ForwardAccumulator`) transposes `grad_fn`, so it must be linear in the upstreams and
    written with dualtape ops on them.
    """
    if f is None:
        return custom_gradient
    return _Decorated(f)


class _Decorated:
    """A custom_gradient function. On a method, `self` is bound before the call, as TF's
    decorator does: it is no input, and `grad_fn` returns no gradient for it."""

    def __init__(self, f):
        functools.update_wrapper(self, f)
        self._f = f
        self.__dualtape_opaque__ = "a custom_gradient function"

    def __call__(self, *args, **kwargs):
        return _call_custom(self._f, args, kwargs)

    def __get__(self, instance, owner=None):
        return self if instance is None else _Decorated(self._f.__get__(instance, owner))


def _call_custom(f, args, kwargs):
    name = getattr(f, "__name__", "f")
    if holds_patterns(args, kwargs):  # sparsity detection: the gradient function may give anything
        return dense_custom(args, kwargs, lambda a, k: _run(f, a, k)[0])
    leaves = nest.flatten(list(args))
    level = dual_level(leaves)
    if level is not None and any(type(v) is Dual for v in nest.flatten(kwargs)):
        raise TypeError(f"[custom_gradient] {name} got a value being differentiated as a keyword "
                        "argument; keyword arguments are not differentiated (as in TF). Pass it "
                        "positionally.")
    if level is not None:  # jvp / jacfwd: run f on this level's primals, transpose grad_fn
        tag, batch = level
        primals, tangents = split_level(leaves, tag)
        result, grad_fn, variables = _run(f, nest.pack_sequence_as(list(args), primals), kwargs)
        vjp_fn = _vjp_fn(name, grad_fn, len(leaves), variables, tensors=False)
        outputs = nest.flatten(result)

        def jvp_fn(ts):
            return transpose(lambda us: vjp_fn(us)[:len(leaves)], outputs, ts)

        return as_duals(result, per_direction(jvp_fn, tangents, batch), tag, batch)
    result, grad_fn, variables = _run(f, args, kwargs)
    if not (STATE.tapes or STATE.accumulators):
        return nest.map_structure(lambda y: wrap(_value(y)), result)
    vjp_fn = _vjp_fn(name, grad_fn, len(leaves), variables, tensors=True)
    return rebind(name, leaves + variables, result, vjp_fn)


def _run(f, args, kwargs):
    """f(*args) -> (result, grad_fn, the trainable variables it read that are not arguments)."""
    accessed = []
    STATE.custom_capture.append(accessed)
    try:
        out = f(*args, **kwargs)
    finally:
        STATE.custom_capture.pop()
    name = getattr(f, "__name__", "f")
    if not (isinstance(out, (tuple, list)) and len(out) == 2 and callable(out[1])):
        raise TypeError(f"[custom_gradient] {name} must return a pair (outputs, grad_fn), got "
                        f"{type(out).__name__}. Return the result and the gradient function.")
    result, grad_fn = out
    arg_ids = {a._id for a in nest.flatten([list(args), kwargs]) if isinstance(a, Tensor)}
    variables = list({v._id: v for v in accessed if v._id not in arg_ids}.values())
    if variables and not _accepts_variables(grad_fn):
        raise TypeError(f"[custom_gradient] {name} reads the variables "
                        f"{[v.name for v in variables]}, so its gradient function must accept a "
                        "keyword argument `variables` and return (input_grads, variable_grads).")
    return result, grad_fn, variables


def _accepts_variables(grad_fn):
    try:
        params = inspect.signature(grad_fn).parameters
    except (TypeError, ValueError):
        return True
    return "variables" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _vjp_fn(name, grad_fn, n_inputs, variables, tensors):
    """upstreams (one per output leaf) -> one gradient per input, then one per variable."""
    def vjp(upstreams):
        dys = [u if u is None or not tensors or isinstance(u, Tensor) else wrap(u)
               for u in upstreams]
        if variables:
            grads = grad_fn(*dys, variables=variables)
            if not (isinstance(grads, (tuple, list)) and len(grads) == 2):
                raise ValueError(f"[custom_gradient] the gradient function of {name} reads variables "
                                 "and must return a pair (input_grads, variable_grads).")
            input_grads, variable_grads = grads
            variable_grads = _as_list(variable_grads)
            if len(variable_grads) != len(variables):
                raise ValueError(f"[custom_gradient] the gradient function of {name} returned "
                                 f"{len(variable_grads)} variable gradients for {len(variables)} "
                                 "variables; return one per variable, in the order of `variables`.")
        else:
            input_grads, variable_grads = grad_fn(*dys), []
        input_grads = nest.flatten(input_grads) if isinstance(input_grads, (tuple, list)) else [input_grads]
        if len(input_grads) != n_inputs:  # TF's wording, then which function and the fix
            raise ValueError(f"[custom_gradient] custom_gradient function expected to return "
                             f"{n_inputs} gradients, but returned {len(input_grads)} instead "
                             f"(the gradient function of {name}). Return one per (flattened) "
                             "input, None for an input with no gradient.")
        return input_grads + list(variable_grads)

    return vjp


def _value(x):
    if isinstance(x, Tensor):
        return x._value
    return convert_to_tensor(x)._value


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def grad_pass_through(f):
    """`f` whose gradient is the identity, as tf.grad_pass_through: the value is f(x), the
    upstream gradient passes to each input unchanged (f(x) must be shaped like x), and
    variables f reads get none. Forward modes transpose the identity: the tangent too."""
    def pass_through(*args, **kwargs):
        def grad(*upstreams, variables=None):
            if variables is not None:
                return list(upstreams), [None] * len(variables)
            return list(upstreams)
        return f(*args, **kwargs), grad

    pass_through.__name__ = getattr(f, "__name__", "grad_pass_through")
    return custom_gradient(pass_through)
