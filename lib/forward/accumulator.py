"""`ForwardAccumulator`: forward mode on tensors, as `tf.autodiff.ForwardAccumulator`.

The accumulator maps watched tensor ids to tangents. Every op on tensors that runs while
it is active (`dispatch.bind`) calls `_propagate`, which applies the op's JVP
rules to the op's own input tensors, so whatever records tensors sees the JVP too:

- a GradientTape outside the accumulator records the tangent computation
  (reverse-over-forward);
- an accumulator outside a tape sees the tape's backward pass, because `gradient` runs
  the VJP rules on tensors while an accumulator is active: `acc.jvp(tape.gradient(y, x))`
  is a Hessian-vector product (forward-over-reverse). When that accumulator is all that
  watches (no tape records, no accumulator around it), the pass replays the records on
  dual numbers instead (`_replay_on_duals`): the same rules, without a tensor per op;
- an accumulator never observes its own JVP computations (nor do the accumulators
  inside it), while the accumulators outside it do: nesting gives higher orders.
"""

import numpy as np

from ..core import nest
from ..core.apply_rules import jvp_output
from ..core.registry import GRADIENT_OVERRIDES, Traced
from ..reverse import tape as _tape
from ..reverse.dispatch import STATE, new_tag
from ..core.dtypes import any_complex, is_differentiable_dtype, refuse_complex_op
from ..reverse.tape import UnconnectedGradients, flat_leaves, unconnected_mode, replay
from ..reverse.tensor import EagerTensor as _EagerTensor
from ..reverse.tensor import Tensor, wrap
from .dual import Dual

_PLAIN = (np.ndarray, np.float64, np.float32)


def _only_newer_tapes(level):
    """True when every recording tape was entered after the accumulator of `level`."""
    tapes = STATE.tapes
    if not tapes:
        return True
    for tape in tapes:
        if tape._dual_level < level:
            return False
    return True


class ForwardAccumulator:
    """Compute Jacobian-vector products of tensors computed inside the context.

    >>> x = dualtape.constant([1.0, 2.0])
    >>> with dualtape.autodiff.ForwardAccumulator(x, dualtape.constant([1.0, 0.0])) as acc:
    ...     y = dualtape.reduce_sum(x * x)
    >>> acc.jvp(y).numpy()
    2.0
    """

    def __init__(self, primals, tangents):
        flat_primals = flat_leaves(primals)
        flat_tangents = flat_leaves(tangents)
        if len(flat_primals) != len(flat_tangents):
            raise ValueError(f"[ForwardAccumulator] got {len(flat_primals)} primals but "
                             f"{len(flat_tangents)} tangents; give one tangent per primal, in "
                             "the same nested structure.")
        self._tangents = {}  # tensor id -> tangent (a Tensor, or an ndarray constant)
        self._paused = 0  # > 0 while this accumulator's own JVP rules run
        self._active = False
        self._dual_level = 0
        for p, t in zip(flat_primals, flat_tangents):
            self._watch(p, t)

    def _watch(self, primal, tangent):
        if primal.__class__ is _EagerTensor and tangent.__class__ is _EagerTensor:
            value, t = primal._value, tangent._value
            if (value.__class__ is np.ndarray and t.__class__ is np.ndarray and value.dtype.kind == "f"
                    and t.dtype.kind == "f" and value.shape == t.shape and primal._id not in self._tangents):
                self._tangents[primal._id] = tangent  # the common case, as the checks below take it
                return
        if not isinstance(primal, Tensor):
            raise TypeError(f"[ForwardAccumulator] primals must be tensors or variables, got "
                            f"{type(primal).__name__}: {primal!r}. Convert it with "
                            "dualtape.constant.")
        dtype = primal.dtype._np
        if not is_differentiable_dtype(dtype):
            raise ValueError(f"[ForwardAccumulator] primal of dtype {primal.dtype.name} cannot be "
                             "watched: only floating tensors have tangents. Cast it to a float.")
        tangent_dtype = np.asarray(tangent).dtype if not isinstance(tangent, Tensor) else tangent.dtype._np
        if (tangent_dtype.kind == "c") != (dtype.kind == "c"):
            raise TypeError(f"[ForwardAccumulator] a tangent of dtype {tangent_dtype} for a primal "
                            f"of dtype {dtype}: a complex primal needs a complex tangent, a real "
                            "one a real tangent. Cast the tangent to the primal's dtype.")
        if not isinstance(tangent, Tensor):
            tangent = np.asarray(tangent, dtype=dtype)
            tangent.flags.writeable = False
        if tuple(np.shape(tangent)) != tuple(primal.shape):
            raise ValueError(f"[ForwardAccumulator] tangent shape {tuple(np.shape(tangent))} does "
                             f"not match the primal shape {tuple(primal.shape)}. Give one tangent "
                             "per primal element.")
        if primal._id in self._tangents:  # TF: ValueError (the tangents were summed)
            raise ValueError(f"[ForwardAccumulator] the primal {primal!r} is watched twice; an "
                             "accumulator watches each tensor once, with one tangent. Pass it once "
                             "(with the sum of the tangents if that is what you meant).")
        self._tangents[primal._id] = tangent

    # -- context ------------------------------------------------------------------------
    def __enter__(self):
        if self._active:
            raise ValueError("[ForwardAccumulator] is already active; an accumulator can only "
                             "be entered once at a time.")
        # orders it among jvp levels and tapes (dual.py), as entered now: a level per entry
        self._dual_level = new_tag()
        STATE.accumulators.append(self)
        self._active = True
        return self

    def __exit__(self, *exc):
        if self._active:
            STATE.accumulators.remove(self)
            self._active = False
        return False

    def _tracks(self, tensor):
        return not self._paused and tensor._id in self._tangents

    def _propagate(self, op, args, values, out, static):
        """Tangent of `out` from the tangents of `args` (called by dispatch for each op)."""
        if self._paused:
            return
        tangents = self._tangents
        in_tangents = []
        found = False
        plain = True  # every tangent found is a plain array
        for a in args:
            t = tangents.get(a._id) if a.__class__ is _EagerTensor or isinstance(a, Tensor) else None
            if t is not None:
                found = True
                if t.__class__ is not np.ndarray:
                    plain = False
            in_tangents.append(t)
        if not found:
            return
        ans = out._value
        kind = ans.dtype.kind if ans.__class__ in _PLAIN else out.dtype._np.kind
        if kind != "f" and kind != "c":
            return
        if not op.complex and (kind == "c" or any_complex(values)):
            refuse_complex_op(op, values, ans, "a ForwardAccumulator watches an input")
        stack = STATE.accumulators
        if stack[0] is self and not isinstance(ans, Traced) and _only_newer_tapes(self._dual_level):
            # Nothing outside this accumulator records (no outer accumulator, no tape entered
            # before it: as in TF, a tape entered inside an accumulator does not record its
            # JVP computation): the rules run on the plain values, without the dispatch.
            for v in values:
                if v.__class__ is not np.ndarray and isinstance(v, Traced):
                    break  # a dual number inside a tensor: the general path
            else:
                if plain:  # the common case: nothing to unwrap
                    tangent = jvp_output(op, in_tangents, ans, values, static)
                    if tangent is not None:
                        tangents[out._id] = tangent
                    return
                for i, t in enumerate(in_tangents):
                    if isinstance(t, Traced):
                        t = t._value if isinstance(t, Tensor) else t  # no one records it
                        if isinstance(t, Traced):
                            break  # a dual number: its level must see the ops
                        in_tangents[i] = t
                else:
                    tangent = jvp_output(op, in_tangents, ans, values, static)
                    if tangent is not None:
                        tangents[out._id] = tangent
                    return
        # The rules run on the op's own input tensors so tapes (and outer accumulators)
        # see the tangent computation; this accumulator and the ones inside it do not.
        inner = stack[stack.index(self):] if self in stack else [self]
        for acc in inner:
            acc._paused += 1
        try:
            tangent = jvp_output(op, in_tangents, out, args, static)
        finally:
            for acc in inner:
                acc._paused -= 1
        if tangent is not None:
            tangents[out._id] = tangent

    # -- results ------------------------------------------------------------------------
    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """The tangent of each tensor in `primals` (a nested structure), or None / zeros."""
        unconnected = unconnected_mode(unconnected_gradients)
        cls = primals.__class__
        if cls is list or cls is tuple:  # a flat list of tensors: no walk over the structure
            tangents = self._tangents
            out = []
            for primal in primals:
                if primal.__class__ is not _EagerTensor:
                    break
                tangent = tangents.get(primal._id)
                if tangent.__class__ is _EagerTensor:
                    out.append(tangent)
                elif (tangent.__class__ is np.ndarray and tangent.base is None
                      and primal._value.__class__ is np.ndarray and tangent.dtype == primal._value.dtype):
                    # an array this accumulator made (no view of anyone's): the tensor can
                    # hold it, read-only, instead of a copy; later calls return that tensor
                    tangents[primal._id] = tangent = wrap(tangent)
                    out.append(tangent)
                else:
                    break
            else:
                return cls(out)

        def one(primal):
            if not isinstance(primal, Tensor):
                raise ValueError(f"[ForwardAccumulator.jvp] expects tensors, got "
                                 f"{type(primal).__name__}: {primal!r}.")
            tangent = self._tangents.get(primal._id)
            if tangent is None:
                if unconnected is UnconnectedGradients.ZERO:
                    return wrap(np.zeros(tuple(primal.shape), dtype=primal.dtype._np))
                return None
            if isinstance(tangent, Tensor):
                return tangent
            return wrap(np.array(tangent, dtype=primal.dtype._np))

        return nest.map_structure(one, primals)

    def __repr__(self):
        return f"<ForwardAccumulator tracking {len(self._tangents)} tensors>"


# -- a backward pass only accumulators watch ---------------------------------------------------

def _replay_on_duals(entries, watched, grads, keep):
    """GradientTape's backward pass when the one active accumulator is all that watches it
    (no tape records, as in `acc.jvp(tape.gradient(y, x))`): the records are replayed with
    each value the accumulator tracks as a dual number (value, tangent), as `dualtape.hvp`
    replays its tape, instead of running the rules on tensors that it would see op by op.
    The same JVP rules give the same tangents, minus a tensor, an id and a tangent kept
    per op of the backward pass. Each dual gradient comes back as a new tensor whose
    tangent the accumulator holds. None when it does not apply (the general path runs):
    nested accumulators, traced or duck values, custom gradients and RegisterGradient
    overrides (their functions see the tensors).
    """
    stack = STATE.accumulators
    if len(stack) != 1 or stack[0]._paused:
        return None
    acc = stack[0]
    tangents = acc._tangents
    for g in grads.values():
        if g.__class__ not in _PLAIN_VALUES:
            return None
    tag = new_tag()
    duals = []
    for op, in_ids, values, out_id, ans, static in entries:
        if op.custom_vjp is not None or (GRADIENT_OVERRIDES and op.name in GRADIENT_OVERRIDES):
            return None
        if ans.__class__ not in _PLAIN_VALUES:
            return None
        dans = tangents.get(out_id)
        if dans is not None:
            dans = _plain_tangent(dans)
            if dans is None:
                return None
            ans = Dual(ans, dans, tag)
        wrapped = None
        for i, tid in enumerate(in_ids):
            v = values[i]
            if v.__class__ not in _PLAIN_VALUES:
                return None
            if tid is None:
                continue
            d = tangents.get(tid)
            if d is None:
                continue
            d = _plain_tangent(d)
            if d is None:
                return None
            if wrapped is None:
                wrapped = list(values)
            wrapped[i] = Dual(v, d, tag)
        duals.append((op, in_ids, values if wrapped is None else wrapped, out_id, ans, static))
    grads = replay(duals, watched, grads, keep, True, False)
    for tid, g in grads.items():
        if g.__class__ is Dual:
            t = wrap(g.primal)
            tangents[t._id] = g.tangent
            grads[tid] = t
    return grads


def _plain_tangent(tangent):
    """A tracked tangent as a plain array, or None when it is traced (a dual inside)."""
    if tangent.__class__ is np.ndarray:
        return tangent
    if isinstance(tangent, Tensor):
        tangent = tangent._value
    return tangent if tangent.__class__ in _PLAIN_VALUES else None


_PLAIN_VALUES = frozenset((np.ndarray, np.float64, np.float32, np.float16, np.complex128,
                           np.complex64, np.int64, np.int32, np.bool_, float, int, bool, complex))
_tape.accumulator_replay[0] = _replay_on_duals
