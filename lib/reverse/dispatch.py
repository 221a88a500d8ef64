"""Routing of a primitive call on traced values: dual numbers first, then tensors.

Plain arrays never reach this module (`Primitive.__call__` sends them to NumPy). For
tensors, the op runs on the unwrapped values and every recording tape whose watched set
meets the inputs appends one flat record; forward accumulators propagate tangents.
"""

import itertools
import threading

import numpy as np

from ..core import registry
from ..core.dtypes import any_complex, refuse_complex_op
from ..core.errors import InvalidArgumentError
from . import tensor
from .tensor import Tensor


class _State(threading.local):
    """Per-thread recording state: tapes and accumulators are thread-local, as in TF."""

    def __init__(self):
        self.tapes = []  # recording GradientTapes, outermost first
        self.accumulators = []  # active ForwardAccumulators, outermost first
        self.custom_capture = []  # variable collectors of running custom_gradient functions


STATE = _State()

_next_tag = itertools.count(1).__next__


def new_tag():
    """A fresh level (forward mode's dual tags, a tape's level under them): larger than every
    tag handed out before it. Here, below both engines, since tapes and duals compare them."""
    return _next_tag()
tensor.dispatch_state[0] = STATE  # Tensor's checks for values leaving a functional transform

dual_bind = [None]  # set by dual.py: bind for dual numbers
defer_older = [None]  # set by dual.py: keeps tensors older than a nested dual wrapped
dual_class = [()]  # the Dual class once dual.py is imported (a tuple for isinstance until then)
note_view = [lambda ans, values, args, out: None]  # forward/inplace.py notes results that view an argument


def bind(op, args, static, tensors_first=False):
    """Run `op` on traced arguments, recording or propagating derivatives.

    tensors_first: set by dual.py when a tensor belongs to a newer level than the dual
    numbers among `args` (a functional `grad` inside `jvp`): the tape records the op and
    the dual level sees it through the re-dispatch on the values.

    This is the per-op hot path of the tape: one pass over the arguments, the NumPy call,
    a new tensor, and one record per tape that watches an input.
    """
    state = STATE
    values = []
    ids = []
    nested = False
    for a in args:
        if a.__class__ is _EagerTensor:  # the common case first: no isinstance calls
            ids.append(a._id)
            a = a._value
            if a.__class__ is not _ndarray and isinstance(a, _Traced):
                nested = True  # a tensor holding a dual number (forward over reverse)
        elif isinstance(a, Tensor):
            _note_variable_read(a, state)
            ids.append(a._id)
            a = a._value
            if a.__class__ is not _ndarray and isinstance(a, _Traced):
                nested = True
        else:
            if a.__class__ is not _ndarray and isinstance(a, _Traced):  # a dual number or vmap value
                if not tensors_first:
                    return dual_bind[0](op, args, static)  # routes by level (forward/dual.py)
                nested = True
            ids.append(None)
        values.append(a)
    if nested:  # re-dispatch on the values so the dual level sees the op too
        args = defer_older[0](args, values, ids)
        if args is None:
            return op(*values, **static)  # no tensor of this level is left to record
        ans = op(*values, **static)
    else:
        try:
            ans = op.impl(*values, **static) if static else op.impl(*values)
        except (ValueError, TypeError, IndexError) as e:
            raise _op_error(op, values, static, e) from e
    if ans.__class__ is _ndarray:
        ans.setflags(write=False)  # (half the cost of assigning flags.writeable)
    elif ans.__class__ is tuple:
        raise TypeError(f"[{op.name}] returned a tuple; multi-output ops must be built from "
                        "single-output primitives.")
    out = _new_tensor(_EagerTensor)
    out._value = ans
    out._id = next_id()
    tapes = state.tapes
    if tapes:
        if (ans.__class__ is _ndarray and (ans.base is not None or ans is values[0])
                and getattr(tapes[-1], "_escape_api", None) is not None):
            note_view[0](ans, values, args, out)  # NumPy's views, for in-place ops (forward/inplace.py)
        record_op(tapes, op, ids, values, out, ans, static)
    accumulators = state.accumulators
    if accumulators:
        for acc in list(accumulators):
            acc._propagate(op, args, values, out, static)
    return out



def _op_error(op, values, static, error):
    """NumPy's complaint, re-raised with the op's name and its inputs' shapes and dtypes."""
    shapes = " and ".join(f"{np.shape(v)} {_dtype(v)}" for v in values)
    extra = f" with {static}" if static else ""
    kind = InvalidArgumentError if isinstance(error, ValueError) else type(error)
    return kind(f"[{op.name}] cannot compute {op.name} on inputs of shapes/dtypes {shapes}{extra}: "
                f"{error}. Check the operands' shapes (reshape or index one of them) and dtypes "
                "(dualtape.cast) so that they match.")


def record_op(tapes, op, in_ids, values, out, ans, static):
    """Append one record to every tape that watches an input of this op.

    in_ids: the id of each argument that is a tensor, None for the others.
    """
    try:
        kind = ans.dtype.kind
    except AttributeError:
        kind = _dtype(ans).kind
    if kind != "f" and kind != "c":
        if not op.complex and any_complex(values) and _watches_any(tapes, in_ids):
            refuse_complex_op(op, values, ans, "a GradientTape watches an input")  # z < w, argmax
        return  # integer, bool and string results carry no gradient (as in TF)
    if op.vjp is _NOT_DIFFERENTIABLE and op.name not in GRADIENT_OVERRIDES:
        if not op.complex and any_complex(values) and _watches_any(tapes, in_ids):
            refuse_complex_op(op, values, ans, "a GradientTape watches an input")  # round(z)
        return  # stop_gradient, round, ...: nothing can flow back, so nothing is watched
    saved = None
    out_id = out._id
    for tape in tapes:
        watched = tape._watched
        for tid in in_ids:
            if tid in watched:  # None never is
                break
        else:
            continue
        if saved is None:
            if not op.complex and (kind == "c" or _complex_among(values)):
                refuse_complex_op(op, values, ans, "a GradientTape watches an input")
            saved = _private(values, in_ids) if None in in_ids else values  # (all tensors: read-only)
        watched.add(out_id)
        tape._entries.append((op, in_ids, saved, out_id, ans, static))


def _complex_among(values):
    """any_complex(values), with the common float arrays checked here."""
    for v in values:
        if v.__class__ is _ndarray:
            if v.dtype.kind == "c":
                return True
        elif v.__class__ is not float and any_complex((v,)):
            return True
    return False


def _private(values, in_ids):
    """The values to record: a plain ndarray argument belongs to the user, who may write
    into it later, so a writeable one is copied (the backward pass then sees the value
    used); a tensor's value is read-only already."""
    for v, tid in zip(values, in_ids):
        if tid is None and v.__class__ is _ndarray and v.flags.writeable:
            return [w.copy() if w.__class__ is _ndarray and w.flags.writeable else w for w in values]
    return values


def _watches_any(tapes, in_ids):
    """True when a tape watches one of the tensors `in_ids`."""
    for tape in tapes:
        for tid in in_ids:
            if tid in tape._watched:
                return True
    return False


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
from .tensor import next_id  # noqa: E402

_Traced = registry.Traced
_NOT_DIFFERENTIABLE = registry.NOT_DIFFERENTIABLE
GRADIENT_OVERRIDES = registry.GRADIENT_OVERRIDES
_ndarray = np.ndarray
_new_tensor = object.__new__

registry.tensor_bind[0] = bind
