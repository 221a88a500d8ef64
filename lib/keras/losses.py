"""`keras.losses`: loss classes, their per-sample functions and the names `compile` accepts.

A loss function maps `(y_true, y_pred)` to one value per sample (the mean over the last
axis, as Keras); a `Loss` object weights those by `sample_weight` and reduces them
('sum_over_batch_size' by default: the weighted sum over the number of values). The maths
follows Keras 3's TensorFlow backend: probabilities are clipped to [1e-7, 1 - 1e-7] before
the log, logits go through the stable log-softmax / sigmoid forms.

>>> loss = dualtape.keras.losses.MeanSquaredError()
>>> float(loss([[0.0, 1.0]], [[1.0, 1.0]]))
0.5
"""

import numpy as np

from . import naming
from ..core import dnp, dtypes
from ..reverse.tensor import Tensor
from ..surface.tf_ops import cast, to_tensor

EPSILON = 1e-7  # keras.backend.epsilon()
REDUCTIONS = ("sum_over_batch_size", "sum", "mean", "mean_with_sample_weight", "none", None)


def as_float(x, dtype="float32"):
    """`x` as a tensor of a float dtype: its own if already floating, else `dtype`."""
    x = to_tensor(x)
    return x if x.dtype.is_floating else cast(x, np.dtype(dtype))


def same_rank(x1, x2):
    """Drop (or add) a trailing axis of size 1 so both have the same rank (Keras' rule)."""
    r1, r2 = len(x1.shape), len(x2.shape)
    if r1 == r2 + 1 and x1.shape[-1] == 1:
        return (x1, dnp.expand_dims(x2, -1)) if r2 == 1 else (dnp.squeeze(x1, -1), x2)
    if r2 == r1 + 1 and x2.shape[-1] == 1:
        return (dnp.expand_dims(x1, -1), x2) if r1 == 1 else (x1, dnp.squeeze(x2, -1))
    return x1, x2


def pair(y_true, y_pred, name="loss"):
    """y_pred as a float tensor, y_true cast to its dtype, ranks matched, shapes checked."""
    y_pred = as_float(y_pred)
    y_true = cast(to_tensor(y_true), y_pred.dtype)
    y_true, y_pred = same_rank(y_true, y_pred)
    try:
        np.broadcast_shapes(tuple(y_true.shape), tuple(y_pred.shape))
    except ValueError:
        raise ValueError(f"[{name}] y_true of shape {tuple(y_true.shape)} does not match y_pred of shape "
                         f"{tuple(y_pred.shape)}; pass targets shaped like the model's output.") from None
    return y_true, y_pred


def check_same_shape(name, y_true, y_pred):
    if tuple(y_true.shape) != tuple(y_pred.shape):
        raise ValueError(f"[{name}] y_true and y_pred must have the same shape, got y_true.shape="
                         f"{tuple(y_true.shape)} and y_pred.shape={tuple(y_pred.shape)}. For integer class "
                         "labels use sparse_categorical_crossentropy.")


# -- per-sample functions ------------------------------------------------------------------------

def mean_squared_error(y_true, y_pred):
    """mean((y_true - y_pred)**2, axis=-1)."""
    y_true, y_pred = pair(y_true, y_pred, "mean_squared_error")
    return dnp.mean(dnp.square(y_true - y_pred), axis=-1)


def mean_absolute_error(y_true, y_pred):
    """mean(|y_true - y_pred|, axis=-1)."""
    y_true, y_pred = pair(y_true, y_pred, "mean_absolute_error")
    return dnp.mean(dnp.abs(y_true - y_pred), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    """100 * mean(|y_true - y_pred| / max(|y_true|, eps), axis=-1)."""
    y_true, y_pred = pair(y_true, y_pred, "mean_absolute_percentage_error")
    diff = dnp.abs((y_true - y_pred) / dnp.maximum(dnp.abs(y_true), EPSILON))
    return 100.0 * dnp.mean(diff, axis=-1)


def huber(y_true, y_pred, delta=1.0):
    """mean of 0.5 e**2 where |e| <= delta, else delta * (|e| - 0.5 delta), over the last axis."""
    y_true, y_pred = pair(y_true, y_pred, "huber")
    error = y_pred - y_true
    abs_error = dnp.abs(error)
    delta = np.asarray(delta, dtype=dtypes.as_numpy_dtype(y_pred.dtype))
    return dnp.mean(dnp.where(abs_error <= delta, 0.5 * dnp.square(error), delta * abs_error - 0.5 * delta ** 2),
                    axis=-1)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """mean(-(t log p + (1 - t) log(1 - p)), axis); `from_logits`: the stable sigmoid form."""
    y_pred = as_float(y_pred)
    y_true = cast(to_tensor(y_true), y_pred.dtype)
    check_same_shape("binary_crossentropy", y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        values = dnp.sigmoid_cross_entropy_with_logits(y_true, y_pred)
    else:
        p = dnp.clip(y_pred, EPSILON, 1.0 - EPSILON)
        values = -(y_true * dnp.log(p) + (1 - y_true) * dnp.log(1 - p))
    return dnp.mean(values, axis=axis)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """-sum(t * log p, axis) with p renormalised and clipped; `from_logits`: log-softmax."""
    y_pred = as_float(y_pred)
    y_true = cast(to_tensor(y_true), y_pred.dtype)
    check_same_shape("categorical_crossentropy", y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / y_pred.shape[-1]
    if from_logits:
        return -dnp.sum(y_true * dnp.log_softmax(y_pred, axis=axis), axis=axis)
    p = dnp.clip(y_pred / dnp.sum(y_pred, axis=axis, keepdims=True), EPSILON, 1.0 - EPSILON)
    return -dnp.sum(y_true * dnp.log(p), axis=axis)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    """-log p[label] per sample, for integer labels; probabilities are clipped, then renormalised
    by a log-softmax of their logs (Keras' TensorFlow backend)."""
    if axis != -1:
        raise ValueError(f"[sparse_categorical_crossentropy] only axis=-1 is supported, got axis={axis}.")
    if ignore_class is not None:
        raise ValueError("[sparse_categorical_crossentropy] `ignore_class` is not supported; mask the "
                         "ignored samples with sample_weight=0 instead.")
    y_pred = as_float(y_pred)
    labels = np.asarray(y_true.numpy() if isinstance(y_true, Tensor) else y_true)
    if labels.ndim == y_pred.ndim and labels.shape[-1:] == (1,):
        labels = labels[..., 0]
    if labels.shape != tuple(y_pred.shape[:-1]):
        raise ValueError(f"[sparse_categorical_crossentropy] labels of shape {labels.shape} do not match "
                         f"predictions of shape {tuple(y_pred.shape)}: expected labels of shape "
                         f"{tuple(y_pred.shape[:-1])} (one integer class per sample).")
    if labels.dtype.kind == "f" and not np.all(labels == np.round(labels)):
        raise ValueError("[sparse_categorical_crossentropy] labels must be integer class ids, got "
                         f"non-integer values such as {labels[labels != np.round(labels)][:3]}; for "
                         "one-hot or soft labels use categorical_crossentropy.")
    labels = labels.astype(np.int64)
    classes = y_pred.shape[-1]
    if labels.size and (labels.min() < 0 or labels.max() >= classes):
        raise ValueError(f"[sparse_categorical_crossentropy] labels must lie in [0, {classes}) for "
                         f"predictions with {classes} classes, got values from {labels.min()} to "
                         f"{labels.max()}. Check the number of units of the last layer.")
    logits = y_pred if from_logits else dnp.log(dnp.clip(y_pred, EPSILON, 1.0 - EPSILON))
    log_p = dnp.log_softmax(logits, axis=-1)
    return -dnp.squeeze(dnp.take_along_axis(log_p, labels[..., None], axis=-1), -1)


def kl_divergence(y_true, y_pred):
    """sum(t * log(t / p), axis=-1), both clipped to [1e-7, 1]."""
    y_true, y_pred = pair(y_true, y_pred, "kl_divergence")
    y_true = dnp.clip(y_true, EPSILON, 1.0)
    y_pred = dnp.clip(y_pred, EPSILON, 1.0)
    return dnp.sum(y_true * dnp.log(y_true / y_pred), axis=-1)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
kld = KLD = kl_divergence


# -- reduction -----------------------------------------------------------------------------------

def reduce_weighted(values, sample_weight=None, reduction="sum_over_batch_size"):
    """Weight per-sample `values` and reduce them, as Keras' `reduce_weighted_values`."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"[keras.losses] unknown reduction {reduction!r}; use one of "
                         "'sum_over_batch_size', 'sum', 'mean', 'mean_with_sample_weight', 'none' or None.")
    if sample_weight is not None:
        sample_weight = cast(to_tensor(sample_weight), values.dtype)
        values, sample_weight = same_rank(values, sample_weight)
        values = values * sample_weight
    if reduction in (None, "none") or len(values.shape) == 0 or tuple(values.shape) == (0,):
        return values
    total = dnp.sum(values)
    if reduction == "sum":
        return total
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        divisor = dnp.sum(sample_weight)
    else:
        count = int(np.prod(values.shape))
        return total / np.asarray(count, dtype=dtypes.as_numpy_dtype(values.dtype)) if count else total * 0
    safe = dnp.where(divisor == 0, dnp.ones_like(divisor), divisor)  # divide_no_nan: 0 when no weight
    return dnp.where(divisor == 0, dnp.zeros_like(total), total / safe)


class Loss:
    """Base class: `call(y_true, y_pred)` gives per-sample values; `__call__` weights and reduces."""

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        if reduction not in REDUCTIONS:
            raise ValueError(f"[{type(self).__name__}] unknown reduction {reduction!r}; use one of "
                             "'sum_over_batch_size', 'sum', 'mean', 'mean_with_sample_weight', 'none' or None.")
        self.name = name or naming.snake_case(type(self).__name__)
        self.reduction = reduction
        self.dtype = np.dtype(dtype or "float32")

    def __call__(self, y_true, y_pred, sample_weight=None):
        y_pred = to_tensor(y_pred)
        if y_pred.dtype.as_numpy_dtype != self.dtype:  # Keras computes a loss in its dtype (float32)
            y_pred = cast(y_pred, self.dtype)
        values = self.call(y_true, y_pred)
        return reduce_weighted(values, sample_weight, self.reduction)

    def call(self, y_true, y_pred):
        raise NotImplementedError(f"[{type(self).__name__}] a Loss subclass implements call(y_true, y_pred).")

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}


class LossFunctionWrapper(Loss):
    """A `Loss` from a per-sample function and its keyword arguments."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        super().__init__(name or fn.__name__, reduction, dtype)
        self.fn, self.fn_kwargs = fn, kwargs

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self.fn_kwargs)

    def get_config(self):
        return {**super().get_config(), **self.fn_kwargs}


class MeanSquaredError(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error", dtype=None):
        super().__init__(mean_squared_error, reduction, name, dtype)


class MeanAbsoluteError(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_error", dtype=None):
        super().__init__(mean_absolute_error, reduction, name, dtype)


class MeanAbsolutePercentageError(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_percentage_error", dtype=None):
        super().__init__(mean_absolute_percentage_error, reduction, name, dtype)


class Huber(LossFunctionWrapper):
    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss", dtype=None):
        super().__init__(huber, reduction, name, dtype, delta=delta)


class KLDivergence(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="kl_divergence", dtype=None):
        super().__init__(kl_divergence, reduction, name, dtype)


class BinaryCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="binary_crossentropy", dtype=None):
        super().__init__(binary_crossentropy, reduction, name, dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)
        self.from_logits = from_logits


class CategoricalCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="categorical_crossentropy", dtype=None):
        super().__init__(categorical_crossentropy, reduction, name, dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)
        self.from_logits = from_logits


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, ignore_class=None, reduction="sum_over_batch_size",
                 name="sparse_categorical_crossentropy", dtype=None):
        super().__init__(sparse_categorical_crossentropy, reduction, name, dtype, from_logits=from_logits,
                         ignore_class=ignore_class)
        self.from_logits = from_logits


FUNCTIONS = {"mean_squared_error": mean_squared_error, "mse": mean_squared_error,
             "mean_absolute_error": mean_absolute_error, "mae": mean_absolute_error,
             "mean_absolute_percentage_error": mean_absolute_percentage_error,
             "mape": mean_absolute_percentage_error, "huber": huber, "huber_loss": huber,
             "binary_crossentropy": binary_crossentropy, "categorical_crossentropy": categorical_crossentropy,
             "sparse_categorical_crossentropy": sparse_categorical_crossentropy,
             "kl_divergence": kl_divergence, "kld": kl_divergence}
CLASSES = {cls.__name__: cls for cls in (MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError, Huber,
                                         KLDivergence, BinaryCrossentropy, CategoricalCrossentropy,
                                         SparseCategoricalCrossentropy)}


def get(identifier):
    """A loss from a name ('mse', 'sparse_categorical_crossentropy', 'MeanSquaredError'), a Loss or a callable."""
    if identifier is None or isinstance(identifier, Loss) or callable(identifier) and not isinstance(identifier, type):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()
    if isinstance(identifier, str):
        if identifier in FUNCTIONS:
            return FUNCTIONS[identifier]
        if identifier in CLASSES:
            return CLASSES[identifier]()
    raise ValueError(f"[keras.losses] unknown loss {identifier!r}; use one of {sorted(FUNCTIONS)}, a class such "
                     "as keras.losses.MeanSquaredError(), or a callable (y_true, y_pred) -> per-sample loss.")


__all__ = ["Loss", *CLASSES, *(name for name in FUNCTIONS if name != "huber_loss"), "MSE", "MAE", "MAPE", "KLD", "get"]


def __dir__():
    return sorted(__all__)
