"""`dualtape.nn`: activations and losses, as TF's `tf.nn`."""

from ..core import dnp
from .tf_ops import output_tensor as _out, to_tensor as _t
from .tf_ops import clip_by_norm, elu, gather, relu, sigmoid, softplus, tanh  # noqa: F401


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


def silu(features, beta=1.0, name=None):
    """features * sigmoid(beta * features), as TF 2.21's tf.nn.silu (tf.nn.swish)."""
    features = _t(features)
    return _out(features * dnp.sigmoid(features * _t(beta, features.dtype)))


swish = silu


def embedding_lookup(params, ids, max_norm=None, name=None):
    """The rows of `params` at `ids` (a gather along axis 0, any shape of ids), as TF's
    tf.nn.embedding_lookup; differentiable in params. `max_norm` clips each looked-up
    embedding to that l2 norm, as TF. A list of params is TF's sharding: one shard only."""
    if isinstance(params, (list, tuple)):
        if len(params) != 1:
            raise ValueError(f"[embedding_lookup] got {len(params)} partitioned params; dualtape "
                             "supports one tensor (or a list of one). Concatenate the shards "
                             "with tf.concat(params, 0) in TF's 'mod' order, or pass one tensor.")
        params = params[0]
    ids = _t(ids)
    if ids.dtype._np.kind not in "iu":
        raise TypeError(f"[embedding_lookup] ids must be integers (int32 / int64), got "
                        f"{ids.dtype.name}. Cast them with tf.cast(ids, tf.int32).")
    rows = gather(params, ids)
    if max_norm is None:
        return rows
    return clip_by_norm(rows, max_norm, axes=list(range(ids.ndim, rows.ndim)))
