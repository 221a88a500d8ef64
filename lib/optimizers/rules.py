"""The update rules, one per optimizer, shared by the Keras classes and the functional form.

A rule is a pair of pure functions on NumPy arrays:

- `slots(value, **hyper) -> dict`: the optimizer's per-variable state, zeros (or Adagrad's
  initial accumulator) in the variable's dtype;
- `step(g, slots, lr, iteration, **hyper) -> (delta, slots)`: the change to add to the
  variable, and the new state. `iteration` counts the steps taken before this one.

The arithmetic follows Keras 3's `update_step` operation by operation, in the variable's
dtype, so float32 results agree with Keras' to the rounding of each operation: every
hyperparameter reaches the variable's dtype as in Keras (`_cast` where Keras calls
ops.cast, through float32; `_c` where it is a Python operand, `1 - beta_1` computed first), and `lr` and `g` arrive cast to it (the learning rate from Keras' float32). Keras subtracts `x` where these
rules return `-x`; negation is exact, so `variable + delta` is Keras' `variable - x`.
"""

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .schedules import LearningRateSchedule


@dataclass(frozen=True, slots=True)
class Rule:
    """An optimizer's update rule: its state (`slots`) and one step (`step`)."""

    name: str
    slots: Callable
    step: Callable


def _c(x, dtype):
    """A Python number as a scalar of `dtype`, as a Python operand of a Keras op meets it."""
    return np.asarray(x, dtype)[()]


def _cast(x, dtype):
    """A Python float as Keras' `ops.cast(x, dtype)` makes it: via a float32 tensor (tf.cast).

    For float64 variables this differs from `_c`: ops.cast(0.9, "float64") is
    0.8999999761581421, while `0.9 * v` uses 0.9.
    """
    return np.asarray(np.float32(x), dtype)[()]


def _zeros(value):
    return np.zeros_like(value)


# SGD: m = momentum * m - lr * g; the variable moves by m (or, Nesterov, by the look-ahead
# momentum * m - lr * g with the new m). Without momentum there is no state.

def sgd_slots(value, *, momentum=0.0, nesterov=False):
    return {"momentum": _zeros(value)} if momentum != 0 else {}


def sgd_step(g, slots, lr, iteration, *, momentum=0.0, nesterov=False):
    d = g.dtype
    if momentum == 0:
        return -(g * lr), slots
    mom = _cast(momentum, d)
    m = slots["momentum"] * mom - g * lr
    delta = m * mom - g * lr if nesterov else m
    return delta, {"momentum": m}


SGD = Rule("SGD", sgd_slots, sgd_step)


# Adam: bias correction folded into the step size alpha = lr sqrt(1 - b2^t) / (1 - b1^t);
# epsilon is added to sqrt(v), outside the root (Keras 3). AMSGrad divides by max_t v_t.

def adam_slots(value, *, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False):
    slots = {"momentum": _zeros(value), "velocity": _zeros(value)}
    if amsgrad:
        slots["velocity_hat"] = _zeros(value)
    return slots


def adam_step(g, slots, lr, iteration, *, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False):
    d = g.dtype
    t = _c(iteration + 1, d)
    one = _c(1, d)
    beta_1_power = np.power(_cast(beta_1, d), t)
    beta_2_power = np.power(_cast(beta_2, d), t)
    alpha = lr * np.sqrt(one - beta_2_power) / (one - beta_1_power)
    m = slots["momentum"] + (g - slots["momentum"]) * _c(1 - beta_1, d)
    v = slots["velocity"] + (g * g - slots["velocity"]) * _c(1 - beta_2, d)
    new = {"momentum": m, "velocity": v}
    if amsgrad:
        v = new["velocity_hat"] = np.maximum(slots["velocity_hat"], v)
    return -((m * alpha) / (np.sqrt(v) + _c(epsilon, d))), new


ADAM = Rule("Adam", adam_slots, adam_step)


# RMSprop: v = rho v + (1 - rho) g^2; step lr g / sqrt(v + eps), epsilon inside the root
# (Keras 3). Centered subtracts the squared running mean of g; momentum accumulates steps.

def rmsprop_slots(value, *, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False):
    slots = {"velocity": _zeros(value)}
    if momentum > 0:
        slots["momentum"] = _zeros(value)
    if centered:
        slots["average_gradient"] = _zeros(value)
    return slots


def rmsprop_step(g, slots, lr, iteration, *, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False):
    d = g.dtype
    r, one_minus_r, eps = _c(rho, d), _c(1 - rho, d), _c(epsilon, d)
    v = r * slots["velocity"] + one_minus_r * (g * g)
    new = {"velocity": v}
    if centered:
        a = new["average_gradient"] = r * slots["average_gradient"] + one_minus_r * g
        denominator = v - a * a + eps
    else:
        denominator = v + eps
    increment = (lr * g) / np.sqrt(denominator)
    if momentum > 0:
        increment = new["momentum"] = _c(momentum, d) * slots["momentum"] + increment
    return -increment, new


RMSPROP = Rule("RMSprop", rmsprop_slots, rmsprop_step)


# Adagrad: accumulate g^2 from initial_accumulator_value; step lr g / sqrt(acc + eps).

def adagrad_slots(value, *, initial_accumulator_value=0.1, epsilon=1e-7):
    return {"accumulator": np.full_like(value, _cast(initial_accumulator_value, value.dtype))}


def adagrad_step(g, slots, lr, iteration, *, initial_accumulator_value=0.1, epsilon=1e-7):
    acc = slots["accumulator"] + g * g
    return -((lr * g) / np.sqrt(acc + _c(epsilon, g.dtype))), {"accumulator": acc}


ADAGRAD = Rule("Adagrad", adagrad_slots, adagrad_step)


# Nadam (Dozat): Adam with Nesterov momentum and the momentum schedule
# u_t = beta_1 (1 - 0.5 * 0.96^t). Keras keeps the product of the u_t in one optimizer variable,
# updated before each step; here each variable keeps it (and how many factors it holds), and
# folds in the factors of the steps it missed (a None gradient), so it is Keras' product.

def nadam_slots(value, *, beta_1=0.9, beta_2=0.999, epsilon=1e-7):
    return {"momentum": _zeros(value), "velocity": _zeros(value),
            "u_product": np.ones((), value.dtype), "u_steps": np.zeros((), np.int64)}


def _u_product(slots, iteration, beta_1, d):
    product = slots["u_product"]
    for k in range(int(slots["u_steps"]) + 1, iteration + 2):  # Keras: u * beta_1 * (1 - 0.5 * 0.96^k)
        product = product * _c(beta_1, d) * (_c(1.0, d) - _c(0.5, d) * np.power(_c(0.96, d), _c(k, d)))
    return product


def nadam_step(g, slots, lr, iteration, *, beta_1=0.9, beta_2=0.999, epsilon=1e-7):
    d = g.dtype
    one, half = _c(1.0, d), _c(0.5, d)
    decay, b1, b2 = _cast(0.96, d), _cast(beta_1, d), _cast(beta_2, d)
    u_t = b1 * (one - half * np.power(decay, _c(iteration + 1, d)))
    u_t_1 = b1 * (one - half * np.power(decay, _c(iteration + 2, d)))
    u_product_t = _u_product(slots, iteration, beta_1, d)
    u_product_t_1 = u_product_t * u_t_1
    beta_2_power = np.power(b2, _c(iteration + 1, d))
    m = slots["momentum"] + (g - slots["momentum"]) * (one - b1)
    v = slots["velocity"] + (g * g - slots["velocity"]) * (one - b2)
    m_hat = (u_t_1 * m) / (one - u_product_t_1) + ((one - u_t) * g) / (one - u_product_t)
    v_hat = v / (one - beta_2_power)
    new = {"momentum": m, "velocity": v, "u_product": np.asarray(u_product_t, d),
           "u_steps": np.asarray(iteration + 1, np.int64)}
    return -((m_hat * lr) / (np.sqrt(v_hat) + _c(epsilon, d))), new


NADAM = Rule("Nadam", nadam_slots, nadam_step)


# Adamax: Adam with the infinity norm, u = max(beta_2 u, |g|); step lr m / ((1 - beta_1^t)(u + eps)).

def adamax_slots(value, *, beta_1=0.9, beta_2=0.999, epsilon=1e-7):
    return {"momentum": _zeros(value), "norm": _zeros(value)}


def adamax_step(g, slots, lr, iteration, *, beta_1=0.9, beta_2=0.999, epsilon=1e-7):
    d = g.dtype
    beta_1_power = np.power(_cast(beta_1, d), _c(iteration + 1, d))
    m = slots["momentum"] + (g - slots["momentum"]) * _c(1 - beta_1, d)
    u = np.maximum(_c(beta_2, d) * slots["norm"], np.abs(g))
    return -((lr * m) / ((_c(1, d) - beta_1_power) * (u + _c(epsilon, d)))), {"momentum": m, "norm": u}


ADAMAX = Rule("Adamax", adamax_slots, adamax_step)


# Lion (Chen et al. 2023): step lr * sign(beta_1 m + (1 - beta_1) g), then m = beta_2 m + (1 - beta_2) g.

def lion_slots(value, *, beta_1=0.9, beta_2=0.99):
    return {"momentum": _zeros(value)}


def lion_step(g, slots, lr, iteration, *, beta_1=0.9, beta_2=0.99):
    d = g.dtype
    one, b1, b2 = _c(1.0, d), _cast(beta_1, d), _cast(beta_2, d)
    m = slots["momentum"]
    delta = -(lr * np.sign(m * b1 + g * (one - b1)))
    return delta, {"momentum": m * b2 + g * (one - b2)}


LION = Rule("Lion", lion_slots, lion_step)


def weight_decay(value, lr, decay):
    """What decoupled weight decay subtracts before the step: `value * wd * lr` (Keras)."""
    return value * _cast(decay, value.dtype) * lr


def learning_rate_at(learning_rate, iteration):
    """The learning rate of the step after `iteration` steps, in float32 as Keras keeps it.

    A float is held in a float32 variable; a schedule is called with the iteration count;
    any other callable is called with no argument (Keras 3).
    """
    if callable(learning_rate):
        value = learning_rate(iteration) if isinstance(learning_rate, LearningRateSchedule) else learning_rate()
    else:
        value = learning_rate
    if hasattr(value, "numpy"):
        value = value.numpy()
    return np.asarray(value, np.float32)[()]


def check_clipping(clipnorm, clipvalue, global_clipnorm, api):
    if sum(x is not None for x in (clipnorm, clipvalue, global_clipnorm)) > 1:
        raise ValueError(f"[{api}] Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. "
                         f"Received: clipnorm={clipnorm}, clipvalue={clipvalue}, "
                         f"global_clipnorm={global_clipnorm}. Keep one of them.")


def clip_gradients(grads, clipnorm=None, clipvalue=None, global_clipnorm=None):
    """Clip a list of gradient arrays (None entries stay None) as Keras' `_clip_gradients`.

    clipnorm scales each gradient to norm <= clipnorm; global_clipnorm scales all of them by
    one factor so the norm of their concatenation is <= global_clipnorm; clipvalue clips
    each element to [-clipvalue, clipvalue].
    """
    if clipnorm and clipnorm > 0:
        return [None if g is None else _clip_by_norm(g, clipnorm) for g in grads]
    if global_clipnorm and global_clipnorm > 0:
        present = [g for g in grads if g is not None]
        squared = np.sum(np.stack([np.sum(g * g) for g in present]))
        norm = np.sqrt(squared)
        with np.errstate(divide="ignore", invalid="ignore"):
            # + (norm - norm): a NaN scale for an infinite or NaN norm, as in Keras
            scale = _c(global_clipnorm, norm.dtype) * np.minimum(_c(1.0, norm.dtype) / norm,
                                                                 _c(1.0 / global_clipnorm, norm.dtype))
            scale = scale + (norm - norm)
        return [None if g is None else g * scale.astype(g.dtype) for g in grads]
    if clipvalue and clipvalue > 0:
        return [None if g is None else np.clip(g, _c(-clipvalue, g.dtype), _c(clipvalue, g.dtype))
                for g in grads]
    return list(grads)


def _clip_by_norm(g, clipnorm):
    # tf.clip_by_norm: g * c / max(||g||, c), with ||0|| kept at 0 without a sqrt
    l2sum = np.sum(g * g, keepdims=True)
    l2norm = np.where(l2sum > 0, np.sqrt(np.where(l2sum > 0, l2sum, 1)), l2sum)
    c = _c(clipnorm, g.dtype)
    return (g * c) / np.maximum(l2norm, c)
