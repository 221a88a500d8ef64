"""Routing of a primitive call on traced values: dual numbers first, then tensors.

Plain arrays never reach this module (`Primitive.__call__` sends them to NumPy). For
tensors, the op runs on the unwrapped values and every recording tape whose watched set
meets the inputs appends one flat record; forward accumulators propagate tangents.
"""

import threading

import numpy as np

from . import registry
from .dtypes import is_differentiable_dtype
from .tensor import Tensor, wrap


class _State(threading.local):
    """Per-thread recording state: tapes and accumulators are thread-local, as in TF."""

    def __init__(self):
        self.tapes = []  # recording GradientTapes, outermost first
        self.accumulators = []  # active ForwardAccumulators, outermost first
        self.custom_capture = []  # variable collectors of running custom_gradient functions


STATE = _State()

_dual_bind = [None]  # set by dual.py: bind for dual numbers
_Dual = [()]  # the Dual class once dual.py is imported (a tuple for isinstance until then)


def bind(op, args, static):
    """Run `op` on traced arguments, recording or propagating derivatives."""
    dual_type = _Dual[0]
    if dual_type:
        for a in args:
            if isinstance(a, dual_type):
                return _dual_bind[0](op, args, static)
    return bind_tensors(op, args, static)


def _value_of(a, state):
    if isinstance(a, Tensor):
        if a.__class__ is not _EagerTensor:
            _note_variable_read(a, state)
        return a._value
    return a


def bind_tensors(op, args, static):
    state = STATE
    values = [_value_of(a, state) for a in args]
    for v in values:
        if isinstance(v, registry.Traced):  # a tensor holding a dual: re-dispatch (dual.py)
            ans = op(*values, **static)
            break
    else:
        try:
            ans = op.impl(*values, **static)
        except (ValueError, TypeError, IndexError) as e:
            raise _op_error(op, values, static, e) from e
    if type(ans) is tuple:  # multi-output ops (split, slogdet) return tuples of tensors
        raise TypeError(f"[{op.name}] returned a tuple; multi-output ops must be built from "
                        "single-output primitives.")
    out = wrap(ans)
    if state.tapes:
        _record(state.tapes, op, args, values, out, ans, static)
    if state.accumulators:
        for acc in list(state.accumulators):
            acc._propagate(op, args, values, out, static)
    return out


def _op_error(op, values, static, error):
    """NumPy's complaint, re-raised with the op's name and its inputs' shapes and dtypes."""
    from .errors import InvalidArgumentError
    shapes = " and ".join(f"{np.shape(v)} {_dtype(v)}" for v in values)
    extra = f" with {static}" if static else ""
    kind = InvalidArgumentError if isinstance(error, ValueError) else type(error)
    return kind(f"[{op.name}] cannot compute {op.name} on inputs of shapes/dtypes {shapes}{extra}: "
                f"{error}. Check the operands' shapes (reshape or index one of them) and dtypes "
                "(dualtape.cast) so that they match.")


def _record(tapes, op, args, values, out, ans, static):
    if not is_differentiable_dtype(_dtype(ans)):
        return
    saved = None
    # Every tensor input keeps its id, watched or not: when this tape's backward pass runs
    # under an outer tape, the rules then see an outer-watched input (a closed-over x in
    # d/dy of x * y) as that tensor, so the outer tape records the dependence on it.
    in_ids = tuple(a._id if isinstance(a, Tensor) else None for a in args)
    for tape in tapes:
        watched = tape._watched
        for tid in in_ids:
            if tid is not None and tid in watched:
                break
        else:
            continue
        if saved is None:
            # A plain ndarray argument belongs to the user, who may write into it later:
            # keep a private copy so the backward pass sees the value the op used.
            saved = tuple(v.copy() if type(v) is np.ndarray and v.flags.writeable else v
                          for v in values)
        watched.add(out._id)
        tape._entries.append((op, in_ids, saved, out._id, ans, static))


def _dtype(value):
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return np.asarray(value).dtype
    return dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)


def _note_variable_read(var, state):
    """Reading a trainable variable makes every auto-watching tape watch it (TF's rule)."""
    if not var.trainable:
        return
    for tape in state.tapes:
        if tape._watch_accessed and var._id not in tape._watched:
            tape._watch_variable(var)
    for collector in state.custom_capture:
        collector.append(var)


from .tensor import EagerTensor as _EagerTensor  # noqa: E402

registry._bind[0] = bind
