"""`custom_gradient` and `stop_gradient`: user control over what flows backwards."""

import functools
import itertools

import numpy as np

from . import nest
from . import numpy_api as dnp
from .dispatch import STATE, _record
from .registry import Primitive, Traced
from .tensor import Tensor, convert_to_tensor, wrap

_custom_ids = itertools.count(1)


def stop_gradient(input, name=None):  # noqa: A002 - TF's argument name
    """The same value, seen by every tape as a constant: no gradient flows through it."""
    return dnp.stop_gradient(convert_to_tensor(input))


def custom_gradient(f=None):
    """Decorate `f(*x) -> (y, grad_fn)` so tapes use `grad_fn(dy)` as its gradient.

    >>> @dualtape.custom_gradient
    ... def clip_gradients(y):
    ...     def backward(dy):
    ...         return dualtape.clip_by_norm(dy, 0.5)
    ...     return y, backward

    `f` runs unrecorded. If it reads trainable variables, `grad_fn` must accept
    `variables=` and return `(input_grads, variable_grads)`, as in TF.
    """
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        return _call_custom(f, args, kwargs)

    return decorated


def _call_custom(f, args, kwargs):
    state = STATE
    saved_tapes, saved_accs = state.tapes[:], state.accumulators[:]
    accessed = []
    state.tapes.clear()
    state.accumulators.clear()
    state.custom_capture.append(accessed)
    try:
        result, grad_fn = f(*args, **kwargs)
    finally:
        state.custom_capture.pop()
        state.tapes[:] = saved_tapes
        state.accumulators[:] = saved_accs
    if isinstance(result, (list, tuple)):
        raise NotImplementedError(f"[custom_gradient] {f.__name__} returned {len(result)} outputs; "
                                  "only single-tensor outputs are supported. Stack them into one "
                                  "tensor, or write one custom_gradient function per output.")
    out = wrap(_value(result))  # a new identity: the output is never one of the inputs
    if not saved_tapes:
        return out
    arg_ids = {a._id for a in nest.flatten(list(args)) if isinstance(a, Tensor)}
    variables = list({v._id: v for v in accessed if v._id not in arg_ids}.values())
    read = variables + [a for a in nest.flatten(list(args)) if getattr(a, "_is_variable", False)]
    for tape in saved_tapes:  # f read them while recording was paused: watch them now
        if tape._watch_accessed:
            for v in read:
                if v.trainable:
                    tape._watch_variable(v)
    inputs = nest.flatten(list(args)) + variables
    op = Primitive(f"CustomGradient{next(_custom_ids)}:{f.__name__}", None, None, None,
                   False, True, {}, (), (), False)
    op.custom_vjp = _custom_vjp(f.__name__, grad_fn, len(inputs) - len(variables), variables)
    values = [t._value if isinstance(t, Tensor) else t for t in inputs]
    ids = [t._id if isinstance(t, Tensor) else None for t in inputs]
    _record(saved_tapes, op, ids, values, out, out._value, {})
    return out


def _value(x):
    if isinstance(x, Tensor):
        return x._value
    if isinstance(x, Traced):
        return x
    return convert_to_tensor(x)._value


def _custom_vjp(name, grad_fn, n_inputs, variables):
    def vjp(g, values):
        dy = g if isinstance(g, Tensor) else wrap(np.asarray(g))
        if variables:
            input_grads, variable_grads = grad_fn(dy, variables=variables)
            grads = _as_list(input_grads) + _as_list(variable_grads)
        else:
            grads = _as_list(grad_fn(dy))
        if len(grads) != len(values):
            raise ValueError(f"[custom_gradient] the gradient function of {name} returned "
                             f"{len(grads)} gradients for {len(values)} inputs"
                             f"{' and variables' if variables else ''}; return one per input.")
        return grads

    return vjp


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]
