"""Learning-rate schedules (as `tf.keras.optimizers.schedules`): step -> learning rate.

Each schedule computes in the dtype of its initial learning rate (float32 for a Python
float, as Keras' `convert_to_tensor`) following Keras 3's formula operation by operation,
and returns a NumPy scalar. An optimizer calls it with its iteration count before each step.

>>> lr = ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5)
>>> [float(lr(step)) for step in (0, 2, 4)]
[0.10000000149011612, 0.05000000074505806, 0.02500000037252903]
"""

import math as _math

import numpy as _np


def _tensor(x):
    """A number as Keras' convert_to_tensor makes it: Python floats float32, ints int32."""
    if hasattr(x, "numpy"):
        x = x.numpy()
    if isinstance(x, float):
        return _np.float32(x)
    if isinstance(x, int) and not isinstance(x, bool):
        return _np.int32(x)
    return _np.asarray(x)[()]


def _cast(x, dtype):
    if hasattr(x, "numpy"):
        x = x.numpy()
    return _np.asarray(x, dtype)[()]


class LearningRateSchedule:
    """Base class: subclasses define `__call__(step)` (and `get_config` to be rebuilt)."""

    def __call__(self, step):
        raise NotImplementedError(f"[LearningRateSchedule] '{type(self).__name__}' must override "
                                  "`__call__(self, step)`.")

    def get_config(self):
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class ExponentialDecay(LearningRateSchedule):
    """`initial_learning_rate * decay_rate ** (step / decay_steps)`, floored if `staircase`."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name="ExponentialDecay"):
        if decay_steps <= 0:
            raise ValueError(f"[ExponentialDecay] Argument `decay_steps` must be > 0. "
                             f"Received: decay_steps={decay_steps}")
        self.initial_learning_rate, self.decay_steps, self.decay_rate = initial_learning_rate, decay_steps, decay_rate
        self.staircase, self.name = staircase, name

    def __call__(self, step):
        initial, dtype, p = _decay_progress(self, step)
        return initial * _np.power(_cast(self.decay_rate, dtype), p)


class PiecewiseConstantDecay(LearningRateSchedule):
    """`values[0]` for step <= boundaries[0], `values[i]` on (boundaries[i-1], boundaries[i]], ..."""

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        if len(boundaries) != len(values) - 1:
            raise ValueError("[PiecewiseConstantDecay] The length of boundaries should be 1 less than the "
                             f"length of values. Received: boundaries={boundaries}, values={values}")
        self.boundaries, self.values, self.name = list(boundaries), list(values), name

    def __call__(self, step):
        step = _tensor(step)
        values = [_tensor(v) for v in self.values]
        index = int(_np.searchsorted(_np.asarray(self.boundaries), step, side="left"))
        return _cast(values[index], values[0].dtype)


class PolynomialDecay(LearningRateSchedule):
    """From `initial_learning_rate` to `end_learning_rate` along `(1 - step/decay_steps) ** power`.

    With `cycle`, decay_steps grows to the first multiple of itself above the step.
    """

    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0,
                 cycle=False, name="PolynomialDecay"):
        self.initial_learning_rate, self.decay_steps = initial_learning_rate, decay_steps
        self.end_learning_rate, self.power, self.cycle, self.name = end_learning_rate, power, cycle, name

    def __call__(self, step):
        initial = _tensor(self.initial_learning_rate)
        dtype = initial.dtype
        end, power = _cast(self.end_learning_rate, dtype), _cast(self.power, dtype)
        step, decay_steps = _cast(step, dtype), _cast(self.decay_steps, dtype)
        if self.cycle:
            multiplier = _cast(1.0, dtype) if step == 0 else _np.ceil(step / _cast(self.decay_steps, dtype))
            decay_steps = decay_steps * multiplier
        else:
            step = _np.minimum(step, decay_steps)
        p = step / decay_steps
        return (initial - end) * _np.power(_cast(1, dtype) - p, power) + end


class InverseTimeDecay(LearningRateSchedule):
    """`initial_learning_rate / (1 + decay_rate * step / decay_steps)`, floored if `staircase`."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name="InverseTimeDecay"):
        self.initial_learning_rate, self.decay_steps, self.decay_rate = initial_learning_rate, decay_steps, decay_rate
        self.staircase, self.name = staircase, name

    def __call__(self, step):
        initial, dtype, p = _decay_progress(self, step)
        return initial / (_cast(1, dtype) + _cast(self.decay_rate, dtype) * p)


class CosineDecay(LearningRateSchedule):
    """Half a cosine from the rate to `alpha` times it over `decay_steps`, after an optional
    linear warmup from `initial_learning_rate` to `warmup_target` over `warmup_steps`."""

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay",
                 warmup_target=None, warmup_steps=0):
        if decay_steps <= 0:
            raise ValueError(f"[CosineDecay] Argument `decay_steps` must be > 0. Received: decay_steps={decay_steps}")
        self.initial_learning_rate, self.decay_steps, self.alpha = initial_learning_rate, decay_steps, alpha
        self.name, self.warmup_target, self.warmup_steps = name, warmup_target, warmup_steps

    def _decay(self, step, decay_steps, decay_from, dtype):
        completed = step / decay_steps
        cosine = _cast(0.5, dtype) * (_cast(1.0, dtype) + _np.cos(_cast(_math.pi, dtype) * completed))
        decayed = _cast(1 - self.alpha, dtype) * cosine + _cast(self.alpha, dtype)
        return decay_from * decayed

    def __call__(self, step):
        initial = _tensor(self.initial_learning_rate)
        dtype = initial.dtype
        decay_steps, step = _cast(self.decay_steps, dtype), _cast(step, dtype)
        if self.warmup_target is None:
            return self._decay(_np.minimum(step, decay_steps), decay_steps, initial, dtype)
        target, warmup = _cast(self.warmup_target, dtype), _cast(self.warmup_steps, dtype)
        step = _np.minimum(step, decay_steps + warmup)
        if step < warmup:
            return (target - initial) * (step / warmup) + initial
        return self._decay(step - warmup, decay_steps, target, dtype)


def serialize(schedule):
    return {"class_name": type(schedule).__name__, "config": schedule.get_config()}


def deserialize(config):
    return globals()[config["class_name"]].from_config(config["config"])


def _decay_progress(schedule, step):
    """(initial rate, its dtype, step / decay_steps floored if `staircase`): shared by the
    exponential and inverse-time decays, which differ only in what they do with it."""
    initial = _tensor(schedule.initial_learning_rate)
    dtype = initial.dtype
    p = _cast(step, dtype) / _cast(schedule.decay_steps, dtype)
    return initial, dtype, _np.floor(p) if schedule.staircase else p
