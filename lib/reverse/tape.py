"""Reverse mode: `GradientTape`, a flat list of records replayed backwards.

Recording order is already a topological order, so the backward pass is one loop over
the records in reverse: no recursion, no graph sort. A record is
`(op, input_ids, input_values, output_id, output_value, static)`; ids are the tensors'
own ids, so a tape never holds the Python tensor objects themselves.

When another tape (or a forward accumulator) is recording while `gradient` runs, the
rules run on tensor aliases carrying the recorded ids, so that outer tape records the
backward pass: that is how nested tapes give higher-order derivatives.
"""

import enum
import warnings

import numpy as np

from ..core import nest
from ..core import dnp
from .dispatch import STATE, new_tag
from .jacobians import tape_batch_jacobian, tape_jacobian
from ..core.dtypes import is_complex_value, is_differentiable_dtype
from ..core.errors import RefusalError
from ..core.duck import as_array, ones_for
from ..core.registry import Traced
from .indexed_slices import IndexedSlices, merge_slices, slices_result
from .replay import replay
from .tensor import EagerTensor as _EagerTensor
from .tensor import Tensor, wrap

_ndarray = np.ndarray
_FLOAT_VALUES = frozenset((np.ndarray, np.float64, np.float32))  # have .shape and .dtype
accumulator_replay = [None]  # set by accumulator.py: (entries, watched, grads, keep) -> grads or None


class UnconnectedGradients(enum.Enum):
    """What `gradient` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


class GradientTape:
    """Record operations on watched tensors to compute gradients in reverse mode.

    >>> x = dualtape.Variable(3.0)
    >>> with dualtape.GradientTape() as tape:
    ...     y = x ** 2
    >>> tape.gradient(y, x).numpy()
    6.0
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        self._entries = []
        self._watched = set()
        self._variables = []  # watched variables, in the order they were first watched
        self._recording = False
        self._used = False
        self._dual_level = 0  # set when first entered: orders it among jvp levels (dual.py)

    # -- recording ------------------------------------------------------------------------
    def __enter__(self):
        if not self._recording:  # a level per entry: nest as entered now (not stop_recording's)
            self._dual_level = new_tag()
        self._push()
        return self

    def __exit__(self, exc_type, exc, traceback):
        if self._recording:
            self._pop()
        cause = getattr(exc, "__cause__", None)
        if exc_type is ValueError and isinstance(cause, RefusalError) and str(cause).startswith("[GradientTape]"):
            # b[0] = y: NumPy replaced float(y)'s refusal by its ValueError: give ours back
            raise cause.with_traceback(traceback) from None
        return False

    def _push(self):
        if self._recording:
            raise ValueError("Tape is still recording, This can happen if you try to re-enter "
                             "an already-active tape.")
        if not self._dual_level:
            self._dual_level = new_tag()
        STATE.tapes.append(self)
        self._recording = True

    def _pop(self):
        STATE.tapes.remove(self)
        self._recording = False

    def watch(self, tensor):
        """Ensure `tensor` (or every tensor in a nested structure) is traced by this tape."""
        if tensor.__class__ is _EagerTensor:  # the common case: one float array tensor
            value = tensor._value
            if value.__class__ is _ndarray and value.dtype.kind == "f":
                self._watched.add(tensor._id)
                return
        for t in flat_leaves(tensor):
            if not isinstance(t, Tensor):
                raise ValueError(f"[GradientTape.watch] can only watch tensors and variables, "
                                 f"got {type(t).__name__}: {t!r}. Convert it with dualtape.constant.")
            value = t._value
            if value.__class__ is _ndarray and value.dtype.kind == "f":
                if t.__class__ is _EagerTensor:  # the common case: a float array tensor
                    self._watched.add(t._id)
                    continue
            dtype = t.dtype._np
            if not is_differentiable_dtype(dtype):
                warnings.warn(f"The dtype of the watched tensor must be floating (e.g. tf.float32), "
                              f"got {t.dtype!r}", stacklevel=2)
                continue
            if getattr(t, "_is_variable", False):
                self._watch_variable(t)
            else:
                self._watched.add(t._id)

    def _watch_variable(self, var):
        if not is_differentiable_dtype(var.dtype._np):
            warnings.warn(f"The dtype of the watched variable must be floating (e.g. tf.float32), "
                          f"got {var.dtype!r}", stacklevel=4)
            return
        if var._id not in self._watched:
            self._watched.add(var._id)
            self._variables.append(var)

    def watched_variables(self):
        """The variables this tape watches, in the order they were created (as TF)."""
        return tuple(sorted(self._variables, key=_creation_order))

    def stop_recording(self):
        """A context manager during which this tape records nothing."""
        return _StopRecording(self)

    def reset(self):
        """Forget everything recorded and watched, as if the tape had just been entered."""
        self._entries = []
        self._watched = set()
        self._variables = []
        self._used = False

    # -- gradients ------------------------------------------------------------------------
    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """d(sum of target) / d(source) for each source, in the structure of `sources`.

        target: a tensor or a nested structure of tensors (their gradients add up).
        output_gradients: the cotangents of the targets (default: ones), same structure.
        unconnected_gradients: NONE (return None) or ZERO for unreachable sources.
        """
        unconnected = unconnected_mode(unconnected_gradients)
        self._check_usable("gradient")
        flat_sources = flat_leaves(sources)
        for s in flat_sources:
            if not isinstance(s, Tensor):
                raise ValueError(f"[GradientTape.gradient] sources must be tensors or variables, "
                                 f"got {type(s).__name__}: {s!r}.")
        flat_targets = [target] if isinstance(target, Tensor) else nest.flatten(target)
        seeds = (nest.flatten(output_gradients) if output_gradients is not None
                 else [None] * len(flat_targets))
        if len(seeds) != len(flat_targets):
            raise ValueError(f"[GradientTape.gradient] output_gradients has {len(seeds)} tensors "
                             f"but target has {len(flat_targets)}; give one per target.")
        # TF's convention for complex values is the conjugate of the rules' (JAX's): seeds go
        # in conjugated and complex gradients come out conjugated (docs/numerics.md)
        seeds = [dnp.conjugate(seed) if seed is not None and is_complex_value(seed) else seed
                 for seed in seeds]
        slices = {}  # axis-0 gathers of the sources: TF's IndexedSlices (indexed_slices.py)
        grads = self._backward(flat_targets, seeds, {s._id for s in flat_sources}, slices=slices)
        results = [_as_result(grads.get(s._id), s, unconnected) if s._id not in slices else
                   slices_result(slices[s._id], s) if s._id not in grads else
                   _as_result(merge_slices(grads[s._id], slices[s._id], s._value), s, unconnected)
                   for s in flat_sources]
        results = [tf_convention(g) for g in results]
        if _is_flat(sources):  # a plain list or tuple of tensors: no walk over the structure
            return sources.__class__(results)
        return nest.pack_sequence_as(sources, results)

    def _check_usable(self, api):
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one "
                               "set of gradients (or jacobians)")
        if self._recording:
            warnings.warn(f"Calling GradientTape.{api} on a persistent tape inside its context is "
                          "significantly less efficient than calling it outside the context (it "
                          "causes the gradient ops to be recorded on the tape, leading to increased "
                          "CPU and memory usage). Only call GradientTape.gradient inside the context "
                          "if you actually want to trace the gradient in order to compute higher "
                          "order derivatives.", stacklevel=3)

    def _backward(self, targets, seeds, keep, consume=True, batch=0, slices=None):
        """Replay the records backwards from `targets`; return {tensor id: cotangent}.

        batch: 0, or k when each seed carries a leading axis of k cotangents (shape
        (k,) + target.shape): one sweep then computes k vector-Jacobian products.
        slices: a dict that gets the axis-0 gathers' cotangents of the sources (replay.py),
        when nobody records this pass; None: every cotangent dense.
        """
        grads = {}
        for t, seed in zip(targets, seeds):
            if not isinstance(t, Tensor):
                continue
            value = t._value
            if value.__class__ in _FLOAT_VALUES and value.dtype.kind == "f" and seed is None and not batch:
                if t._id in self._watched or t._id in keep:  # the common case: a float array, ones
                    g = np.ones(value.shape, value.dtype)
                    grads[t._id] = g if t._id not in grads else grads[t._id] + g
                continue
            if not is_differentiable_dtype(t.dtype._np):
                warnings.warn(f"The dtype of the target tensor must be floating (e.g. tf.float32) "
                              f"when calling GradientTape.gradient, got {t.dtype!r}", stacklevel=3)
                continue
            if t._id not in self._watched and t._id not in keep:
                continue  # a source that is itself the target gets its seed, as in TF
            g = seed if batch else _seed(t, seed)
            grads[t._id] = g if t._id not in grads else grads[t._id] + g
        entries = self._entries
        self._used = True
        if consume and not self._persistent:
            self._entries = []
        if not grads:
            return grads
        traced = bool(STATE.tapes or STATE.accumulators)  # someone records the backward pass
        if traced and not STATE.tapes and not batch and accumulator_replay[0] is not None:
            # only forward accumulators watch: they may replay on dual numbers (accumulator.py)
            done = accumulator_replay[0](entries, self._watched, grads, keep)
            if done is not None:
                return done
        return replay(entries, self._watched, grads, keep, consume and not self._persistent,
                      traced, batch, None if traced or batch else slices)

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """d target[i...] / d source[j...], shaped `target.shape + source.shape`, per source."""
        unconnected = unconnected_mode(unconnected_gradients)
        self._check_usable("jacobian")
        zero = unconnected is UnconnectedGradients.ZERO
        return nest.map_structure(tf_convention, tape_jacobian(self, target, sources, zero,
                                                               experimental_use_pfor))

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per-example jacobians: target (batch, outs...), source (batch, ins...)."""
        unconnected = unconnected_mode(unconnected_gradients)
        self._check_usable("batch_jacobian")
        zero = unconnected is UnconnectedGradients.ZERO
        return tf_convention(tape_batch_jacobian(self, target, source, zero, experimental_use_pfor))


def tf_convention(gradient):
    """A gradient of the rules' convention (JAX's) in TF's: conjugated when complex.

    For a real loss L of z = x + iy, TF's gradient is dL/dx + i dL/dy, JAX's its conjugate
    (docs/numerics.md, "Complex numbers"); real gradients are the same in both."""
    if gradient is None:
        return gradient
    if gradient.__class__ is _EagerTensor:  # the common case: an array's dtype says it
        value = gradient._value
        if value.__class__ is _ndarray and value.dtype.kind != "c":
            return gradient
    if isinstance(gradient, IndexedSlices):  # (a gather's rows: conjugate the rows, keep the type)
        if not is_complex_value(gradient.values):
            return gradient
        return IndexedSlices(dnp.conjugate(gradient.values), gradient.indices, gradient.dense_shape)
    if not is_complex_value(gradient):
        return gradient
    return dnp.conjugate(gradient)  # dnp: a tape recording this pass sees the conjugation


def _is_flat(structure):
    """True for a plain list or tuple of tensors (not a namedtuple, nothing nested)."""
    if structure.__class__ is not list and structure.__class__ is not tuple:
        return False
    for leaf in structure:
        if not isinstance(leaf, Tensor):
            return False
    return True


def flat_leaves(structure):
    """nest.flatten, without its walk for a plain list or tuple of tensors (the common call)."""
    return list(structure) if _is_flat(structure) else nest.flatten(structure)


def _creation_order(variable):
    return variable._id  # ids count up from one counter, so a later variable has a larger id


class _StopRecording:
    __slots__ = ("_tape",)

    def __init__(self, tape):
        self._tape = tape

    def __enter__(self):
        if not self._tape._recording:
            raise ValueError("Tape is not recording.")
        self._tape._pop()

    def __exit__(self, *exc):
        self._tape._push()
        return False


def unconnected_mode(value):
    if isinstance(value, UnconnectedGradients):
        return value
    try:
        return UnconnectedGradients(value)
    except ValueError:
        raise ValueError(f"Unknown value for unconnected_gradients: {value!r}. "
                         "Use dualtape.UnconnectedGradients.NONE or .ZERO.") from None


def _seed(target, seed):
    value = target._value
    if seed is None:
        return ones_for(value, target.dtype._np)  # lazy ones for a dask value
    # A traced seed (a tensor, or a dual number: the cotangent of a vjp inside jvp) stays
    # traced, so the levels outside see the backward pass depend on it.
    traced = isinstance(seed, Traced)
    if is_complex_value(seed) and target.dtype._np.kind != "c":
        raise TypeError(f"[GradientTape.gradient] output_gradients of dtype "
                        f"{dnp.result_dtype(seed)} for a target of dtype {target.dtype.name}: a "
                        "real target's cotangent is real (its imaginary part would be dropped). "
                        "Pass a real output_gradients, or make the target complex.")
    seed_value = seed if traced else as_array(seed, dtype=target.dtype._np)  # dask stays lazy
    if tuple(dnp.shape(seed_value)) != tuple(np.shape(value)):
        raise ValueError(f"[GradientTape.gradient] output_gradients of shape "
                         f"{tuple(dnp.shape(seed_value))} does not match the target's shape "
                         f"{tuple(np.shape(value))}. Give one cotangent per target, shaped like it.")
    return seed_value


def _as_result(g, source, unconnected):
    if g is None:
        if unconnected is UnconnectedGradients.ZERO:
            return wrap(np.zeros(source.shape, dtype=source.dtype._np))
        return None
    value = source._value
    if g.__class__ is _ndarray and value.__class__ is _ndarray and g.dtype == value.dtype:
        return wrap(g)  # the common case: a float array of the source's dtype
    dtype = source.dtype._np
    if dnp.result_dtype(g) != dtype and dtype.kind in "fc":
        g = dnp.cast(g, dtype)  # NumPy's promotion inside the graph never leaks out: a
        #                         gradient has its source's dtype (float32 stays float32)
    if isinstance(g, Tensor):
        return g
    return wrap(g if isinstance(g, Traced) else as_array(g))
