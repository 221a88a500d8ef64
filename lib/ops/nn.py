"""Neural-network primitives: softmax, log_softmax, sigmoid cross-entropy.

These are primitives, not compositions, for stability and short adjoints: each is computed
from shifted or log-space values, so inputs of +-1000 give finite values and gradients,
and each rule reuses `ans` (softmax' = s * (g - <g, s>), log_softmax' = g - exp(ans) * sum g).
"""

import numpy as np

from ..core import dnp
from ..core.registry import defop
from ..core.rulekit import negative_axis
from .reductions import canonical_axis

__all__ = ["softmax", "log_softmax", "sigmoid_cross_entropy_with_logits"]


def _sample(shape, huge=False, **static):
    def sample(rng):
        x = rng.standard_normal(shape)
        return (x + rng.choice([-1000.0, 1000.0], shape) if huge else x,), dict(static)
    sample.__name__ = "sample_" + "x".join(map(str, shape)) + ("_huge" if huge else "") + "".join(
        f"_{k}{v}" for k, v in static.items()).replace(" ", "")
    return sample


SOFTMAX_SAMPLES = (
    _sample((3, 4)),                           # axis=-1 by default
    _sample((2, 3, 4), axis=0),
    _sample((2, 3, 4), axis=(0, 2)),
    _sample((5,), axis=-1),
    _sample((3, 4), axis=None),
    _sample((3, 4), huge=True, axis=1),        # +-1000: finite, one-hot-like
)


def _log_softmax(x, *, axis=-1):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _softmax(x, *, axis=-1):
    return np.exp(_log_softmax(x, axis=axis))


def softmax_vjp(g, ans, x, *, axis=-1):
    # a negative axis still names x's axes when g carries leading batch axes (jacobians)
    return ans * (g - dnp.sum(g * ans, axis=negative_axis(axis, np.ndim(ans)), keepdims=True))


def softmax_jvp(dx, ans, x, *, axis=-1):
    return ans * (dx - dnp.sum(dx * ans, axis=axis, keepdims=True))


SOFTMAX = defop("Softmax", _softmax, vjp=softmax_vjp, jvp=softmax_jvp, batch_vjp=True,
                samples=SOFTMAX_SAMPLES)


def log_softmax_vjp(g, ans, x, *, axis=-1):
    # exp(ans) = softmax <= 1; a negative axis also holds for a batch of cotangents
    return g - dnp.exp(ans) * dnp.sum(g, axis=negative_axis(axis, np.ndim(ans)), keepdims=True)


def log_softmax_jvp(dx, ans, x, *, axis=-1):
    return dx - dnp.sum(dnp.exp(ans) * dx, axis=axis, keepdims=True)


LOG_SOFTMAX = defop("LogSoftmax", _log_softmax, vjp=log_softmax_vjp, jvp=log_softmax_jvp, batch_vjp=True,
                    samples=SOFTMAX_SAMPLES)


def _sigmoid_xent(labels, logits):
    # max(x, 0) - x z + log(1 + exp(-|x|)): TF's formulation, finite for any logits
    return np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))


def sigmoid_xent_vjp_labels(g, ans, labels, logits):
    return -g * logits


def sigmoid_xent_vjp_logits(g, ans, labels, logits):
    return g * (dnp.sigmoid(logits) - labels)


def sigmoid_xent_jvp_labels(dlabels, ans, labels, logits):
    return -dlabels * logits


def sigmoid_xent_jvp_logits(dlogits, ans, labels, logits):
    return dlogits * (dnp.sigmoid(logits) - labels)


def _sample_xent(rng):
    return (rng.uniform(0, 1, (3, 4)), rng.standard_normal((3, 4)) * 3), {}


def _sample_xent_broadcast(rng):
    return (rng.uniform(0, 1, (4,)), rng.standard_normal((2, 3, 4))), {}


def _sample_xent_huge(rng):
    return (rng.uniform(0, 1, (5,)), rng.choice([-1000.0, 1000.0], (5,)) + rng.standard_normal(5)), {}


SIGMOID_XENT = defop("SigmoidCrossEntropyWithLogits", _sigmoid_xent,
                     vjp=(sigmoid_xent_vjp_labels, sigmoid_xent_vjp_logits),
                     jvp=(sigmoid_xent_jvp_labels, sigmoid_xent_jvp_logits), elementwise=True,
                     samples=(_sample_xent, _sample_xent_broadcast, _sample_xent_huge))


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) over `axis` (the last by default, as tf.nn.softmax), stably.

    >>> softmax(np.array([1000.0, 1000.0])).tolist()
    [0.5, 0.5]
    """
    return SOFTMAX(x, axis=canonical_axis(axis))


def log_softmax(x, axis=-1):
    """x - logsumexp(x) over `axis` (the last by default), finite at +-1000."""
    return LOG_SOFTMAX(x, axis=canonical_axis(axis))


def sigmoid_cross_entropy_with_logits(labels, logits):
    """TF's sigmoid_cross_entropy_with_logits, elementwise: -z log s(x) - (1 - z) log(1 - s(x)).

    Arguments in TF's order (labels, logits); they broadcast against each other.
    """
    return SIGMOID_XENT(labels, logits)

dnp.export(globals())
