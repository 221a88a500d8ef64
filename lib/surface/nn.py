"""`dualtape.nn`: activations, losses, convolution and pooling, as TF's `tf.nn`."""

import numpy as _np

from ..core import dnp as _dnp
from ..core.errors import InvalidArgumentError as _InvalidArgumentError
from . import random as _random
from .tf_ops import output_tensor as _out, to_tensor as _t
from .tf_ops import clip_by_norm as _clip_by_norm, gather as _gather, stop_gradient as _stop_gradient
from .tf_ops import elu, relu, sigmoid, softplus, tanh  # noqa: F401


def softmax(logits, axis=-1, name=None):
    return _out(_dnp.softmax(_t(logits), axis=int(axis)))


def log_softmax(logits, axis=-1, name=None):
    return _out(_dnp.log_softmax(_t(logits), axis=int(axis)))


def relu6(features, name=None):
    return _out(_dnp.clip(_t(features), 0.0, 6.0))


def l2_loss(t, name=None):
    t = _t(t)
    return _out(_dnp.sum(_dnp.square(t)) / 2)


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """-sum(labels * log_softmax(logits)) over `axis`, one loss per example."""
    logits = _t(logits)
    return _out(-_dnp.sum(_t(labels, logits.dtype) * _dnp.log_softmax(logits, axis=int(axis)), axis=int(axis)))


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Stable max(x, 0) - x * z + log(1 + exp(-|x|)), as TF."""
    logits = _t(logits)
    return _out(_dnp.sigmoid_cross_entropy_with_logits(_t(labels, logits.dtype), logits))


def silu(features, beta=1.0, name=None):
    """features * sigmoid(beta * features), as TF 2.21's tf.nn.silu (tf.nn.swish)."""
    features = _t(features)
    return _out(features * _dnp.sigmoid(features * _t(beta, features.dtype)))


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
    rows = _gather(params, ids)
    if max_norm is None:
        return rows
    return _clip_by_norm(rows, max_norm, axes=list(range(ids.ndim, rows.ndim)))


def sparse_softmax_cross_entropy_with_logits(labels, logits, name=None):
    """-log_softmax(logits)[label] per example: integer `labels` of logits' shape without its
    last axis, each in [0, classes), as TF (an out-of-range label is an error, not a NaN)."""
    logits = _t(logits)
    labels = _t(labels)
    if labels.dtype._np.kind not in "iu":
        raise TypeError(f"[sparse_softmax_cross_entropy_with_logits] labels must be integers (int32 / int64), "
                        f"got {labels.dtype.name}. Cast them (tf.cast(labels, tf.int32)), or use "
                        "softmax_cross_entropy_with_logits for one-hot or soft labels.")
    if tuple(labels.shape) != tuple(logits.shape[:-1]):
        raise ValueError(f"Shape mismatch: The shape of labels (received {tuple(labels.shape)}) should equal the "
                         f"shape of logits except for the last dimension (received {tuple(logits.shape)}).")
    values = labels.numpy()
    classes = logits.shape[-1]
    bad = values[(values < 0) | (values >= classes)]
    if bad.size:
        raise _InvalidArgumentError(f"[sparse_softmax_cross_entropy_with_logits] Received a label value of "
                                    f"{int(bad.flat[0])} which is outside the valid range of [0, {classes}). "
                                    "Labels are class indices: check the number of classes of the logits.")
    picked = _dnp.take_along_axis(_dnp.log_softmax(logits, axis=-1), values[..., None].astype(_np.intp), axis=-1)
    return _out(-_dnp.squeeze(picked, axis=-1))


def gelu(features, approximate=False, name=None):
    """x * Phi(x) (Phi the normal CDF), or TF's tanh approximation with `approximate=True`."""
    features = _t(features)
    if not approximate:
        return _out(_dnp.gelu(features))
    cube = features * features * features
    inner = _t(0.7978845608028654, features.dtype) * (features + _t(0.044715, features.dtype) * cube)
    return _out(_t(0.5, features.dtype) * features * (_t(1.0, features.dtype) + _dnp.tanh(inner)))


def leaky_relu(features, alpha=0.2, name=None):
    """x where x > 0, else alpha * x; the slope at 0 is alpha, as TF's LeakyReluGrad."""
    features = _t(features)
    return _out(_dnp.where(features > 0, features, features * _t(alpha, features.dtype)))


_SELU_SCALE = 1.0507009873554804934193349852946
_SELU_ALPHA = 1.6732632423543772848170429916717


def selu(features, name=None):
    """scale * (x if x >= 0 else alpha * (exp(x) - 1)), TF's constants; the slope at 0 is scale,
    as TF's SeluGrad (which branches on x < 0)."""
    features = _t(features)
    scale, alpha = _t(_SELU_SCALE, features.dtype), _t(_SELU_SCALE * _SELU_ALPHA, features.dtype)
    return _out(_dnp.where(features < 0, alpha * _dnp.elu(features), scale * features))


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Each element kept with probability 1 - rate and scaled by 1 / (1 - rate), else 0, as
    tf.nn.dropout (`noise_shape` broadcasts one draw over axes of size 1; `seed` or
    tf.random.set_seed makes it reproducible, though not TF's draws)."""
    x = _t(x)
    if not x.dtype.is_floating:
        raise ValueError(f"[dropout] x has to be a floating point tensor since it's going to be scaled. "
                         f"Got a {x.dtype.name} tensor instead.")
    rate = float(rate.numpy() if hasattr(rate, "numpy") else rate)
    if not 0 <= rate < 1:
        raise ValueError(f"[dropout] rate must be a scalar tensor or a float in the range [0, 1), got {rate}.")
    if rate == 0:
        return x
    if hasattr(noise_shape, "numpy"):
        noise_shape = noise_shape.numpy()
    shape = tuple(x.shape) if noise_shape is None else tuple(
        x.shape[i] if d is None else int(d) for i, d in enumerate(_np.ravel(noise_shape).tolist()))
    keep = _random.generator(seed).uniform(0.0, 1.0, shape) >= rate
    return _out(x * _t(1 / (1 - rate), x.dtype) * _t(keep.astype(x.dtype._np)))


def moments(x, axes, shift=None, keepdims=False, name=None):
    """(mean, variance) of `x` over `axes`, as tf.nn.moments (the variance around the mean,
    with the mean held constant in it as TF: the gradient is the same)."""
    x = _t(x)
    axes = tuple(int(a) for a in _np.ravel(axes.numpy() if hasattr(axes, "numpy") else axes))
    mean = _dnp.mean(x, axis=axes, keepdims=True)
    variance = _dnp.mean(_dnp.square(x - _stop_gradient(mean)), axis=axes, keepdims=True)
    if not keepdims:
        mean, variance = _dnp.squeeze(mean, axis=axes), _dnp.squeeze(variance, axis=axes)
    return _out(mean), _out(variance)


def bias_add(value, bias, data_format=None, name=None):
    """value + bias along the channel axis: the last (NHWC, the default) or axis 1 ("NC...")."""
    value = _t(value)
    bias = _t(bias, value.dtype) if not hasattr(bias, "dtype") else _t(bias)
    channels_first = data_format is not None and str(data_format).startswith("NC")
    axis = 1 if channels_first else -1
    if bias.ndim != 1 or value.ndim < 2 or value.shape[axis] != bias.shape[0]:
        raise _InvalidArgumentError(f"[bias_add] Must provide as many biases as the {'channel' if channels_first else 'last'} "
                                    f"dimension of the input tensor: bias of shape {tuple(bias.shape)} vs. value of shape "
                                    f"{tuple(value.shape)}. Give bias one entry per channel.")
    if bias.dtype != value.dtype:
        raise TypeError(f"[bias_add] value is {value.dtype.name} but bias is {bias.dtype.name}; cast one of them.")
    if channels_first:
        bias = _dnp.reshape(bias, (-1,) + (1,) * (value.ndim - 2))
    return _out(value + bias)


# -- convolution and pooling: TF's arguments resolved to the ops' canonical ones --------------
def _spatial(op, what, value, data_format, default=1):
    """(rows, cols) from TF's int, [n], [rows, cols] or 4-entry form (batch and channel 1)."""
    if value is None:
        return (default, default)
    values = [int(v) for v in _np.ravel(value.numpy() if hasattr(value, "numpy") else value)]
    if len(values) == 1:
        return (values[0], values[0])
    if len(values) == 2:
        return tuple(values)
    if len(values) == 4:
        rows, cols = (2, 3) if data_format == "NCHW" else (1, 2)
        others = [v for i, v in enumerate(values) if i not in (rows, cols)]
        if others != [1, 1]:
            raise ValueError(f"[{op}] {what} {values} must be 1 on the batch and channel axes "
                             f"({data_format}); pool or convolve over rows and columns only.")
        return (values[rows], values[cols])
    raise ValueError(f"[{op}] {what} must be an int or a list of 1, 2 or 4 ints, got {values}.")


def _padding(op, padding, size, window, strides, data_format):
    """((top, bottom), (left, right)) for TF's 'SAME' / 'VALID' or an explicit 4x2 list, with
    TF's SAME rule (output = ceil(size / stride), the odd pixel of padding at the end)."""
    pads = []
    if isinstance(padding, str):
        mode = padding.upper()
        if mode not in ("SAME", "VALID"):
            raise ValueError(f"[{op}] padding must be 'SAME', 'VALID' or an explicit list, got {padding!r}.")
        for n, k, s in zip(size, window, strides):
            if mode == "VALID":
                pads.append((0, 0))
            else:
                total = max((-(-n // s) - 1) * s + k - n, 0)
                pads.append((total // 2, total - total // 2))
    else:
        rows = _np.asarray(padding, int).reshape(-1, 2) if padding is not None else None
        if rows is None or rows.shape != (4, 2):
            raise ValueError(f"[{op}] explicit padding must be 4 [before, after] pairs (one per axis of "
                             f"{data_format}), got {padding!r}.")
        spatial = (2, 3) if data_format == "NCHW" else (1, 2)
        if any(rows[i].any() for i in range(4) if i not in spatial):
            raise ValueError(f"[{op}] explicit padding {rows.tolist()} pads the batch or channel axis; "
                             "pad rows and columns only.")
        pads = [tuple(int(v) for v in rows[i]) for i in spatial]
    for n, k, s, (before, after) in zip(size, window, strides, pads):
        if n + before + after < k:
            raise _InvalidArgumentError(
                f"[{op}] Computed output size would be negative: {(n + before + after - k) // s + 1} "
                f"[input_size: {n}, effective_filter_size: {k}, stride: {s}]. Use padding='SAME' or a smaller window.")
    return tuple(pads)


def _nhwc(op, x, data_format):
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"[{op}] data_format must be 'NHWC' or 'NCHW', got {data_format!r}.")
    if x.ndim != 4:
        raise ValueError(f"[{op}] input must be 4-D ({data_format}), got shape {tuple(x.shape)}. "
                         "Add a batch axis (tf.expand_dims(x, 0)) or a channel axis.")
    return x if data_format == "NHWC" else _dnp.transpose(x, (0, 2, 3, 1))


def _back(y, data_format):
    return _out(y if data_format == "NHWC" else _dnp.transpose(y, (0, 3, 1, 2)))


def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):  # noqa: A002
    """TF's tf.nn.conv2d: `input` NHWC (or NCHW), `filters` [rows, cols, in, out], `padding`
    'SAME', 'VALID' or explicit; differentiable in both, at any order, in every mode."""
    x, w = _t(input), _t(filters)
    x = _nhwc("conv2d", x, data_format)
    if w.ndim != 4:
        raise ValueError(f"[conv2d] filters must be 4-D [rows, cols, in_channels, out_channels], got shape "
                         f"{tuple(w.shape)}.")
    if x.shape[3] != w.shape[2]:
        raise ValueError(f"[conv2d] input has {x.shape[3]} channels but filters of shape {tuple(w.shape)} expect "
                         f"{w.shape[2]} (filters are [rows, cols, in_channels, out_channels]).")
    if x.dtype != w.dtype:
        raise TypeError(f"[conv2d] input is {x.dtype.name} but filters are {w.dtype.name}; cast one (tf.cast).")
    stride = _spatial("conv2d", "strides", strides, data_format)
    dilation = _spatial("conv2d", "dilations", dilations, data_format)
    window = tuple((k - 1) * d + 1 for k, d in zip(w.shape[:2], dilation))
    pads = _padding("conv2d", padding, x.shape[1:3], window, stride, data_format)
    return _back(_dnp.conv2d(x, w, strides=stride, padding=pads, dilations=dilation), data_format)


def _pool(op, fn, input, ksize, strides, padding, data_format):  # noqa: A002
    x = _nhwc(op, _t(input), data_format)
    window = _spatial(op, "ksize", ksize, data_format)
    stride = _spatial(op, "strides", strides, data_format)
    pads = _padding(op, padding, x.shape[1:3], window, stride, data_format)
    return _back(fn(x, ksize=window, strides=stride, padding=pads), data_format)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """The maximum of each window (padding never wins); the gradient goes to the first
    maximum of a window in row-major order, as TF's MaxPoolGrad."""
    return _pool("max_pool2d", _dnp.max_pool2d, input, ksize, strides, padding, data_format)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """The mean of each window over the input elements it covers (SAME padding is not counted)."""
    if not isinstance(padding, str):
        raise ValueError("[avg_pool2d] padding must be 'SAME' or 'VALID' (TF has no explicit padding here).")
    return _pool("avg_pool2d", _dnp.avg_pool2d, input, ksize, strides, padding, data_format)


def max_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """tf.nn.max_pool for 4-D inputs (max_pool2d); 1-D and 3-D pooling are not available."""
    return max_pool2d(input, ksize, strides, padding, data_format or "NHWC")


def avg_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """tf.nn.avg_pool for 4-D inputs (avg_pool2d); 1-D and 3-D pooling are not available."""
    return avg_pool2d(input, ksize, strides, padding, data_format or "NHWC")
