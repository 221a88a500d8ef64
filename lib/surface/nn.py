"""`dualtape.nn`: activations and losses, as TF's `tf.nn`."""

from ..core import dnp
from .tf_ops import _out, _t, elu, relu, sigmoid, softplus, tanh  # noqa: F401


def softmax(logits, axis=-1, name=None):
    return _out(dnp.softmax(_t(logits), axis=int(axis)))


def log_softmax(logits, axis=-1, name=None):
    return _out(dnp.log_softmax(_t(logits), axis=int(axis)))


def relu6(features, name=None):
    return _out(dnp.clip(_t(features), 0.0, 6.0))


def l2_loss(t, name=None):
    t = _t(t)
    return _out(dnp.sum(dnp.square(t)) / 2)


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """-sum(labels * log_softmax(logits)) over `axis`, one loss per example."""
    logits = _t(logits)
    return _out(-dnp.sum(_t(labels, logits.dtype) * dnp.log_softmax(logits, axis=int(axis)), axis=int(axis)))


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Stable max(x, 0) - x * z + log(1 + exp(-|x|)), as TF."""
    logits = _t(logits)
    return _out(dnp.sigmoid_cross_entropy_with_logits(_t(labels, logits.dtype), logits))
