"""`keras.metrics`: stateful running values (`update_state`, `result`, `reset_state`).

State is kept in float32 as Keras keeps it (a total and a count), so the results agree with
Keras to float32 rounding. `result()` returns a scalar tensor. Updates read their arguments'
values (`.numpy()`): a metric is bookkeeping, never part of a gradient.

>>> m = dualtape.keras.metrics.Mean()
>>> m.update_state([1.0, 3.0, 5.0, 7.0], sample_weight=[1, 1, 0, 0])
>>> float(m.result())
2.0
"""

import numpy as np

from . import losses, naming
from ..reverse.tensor import Tensor, constant


def values_of(x, dtype=None):
    """A NumPy array of `x` (a tensor, array, list or number), optionally cast."""
    x = x.numpy() if isinstance(x, Tensor) else np.asarray(x)
    return x if dtype is None else x.astype(dtype)


def same_rank(x1, x2):
    """NumPy twin of losses.same_rank: match ranks by a trailing axis of size 1."""
    r1, r2 = x1.ndim, x2.ndim
    if r1 == r2 + 1 and x1.shape[-1] == 1:
        return (x1, x2[..., None]) if r2 == 1 else (x1[..., 0], x2)
    if r2 == r1 + 1 and x2.shape[-1] == 1:
        return (x1[..., None], x2) if r1 == 1 else (x1, x2[..., 0])
    return x1, x2


def samplewise(values, sample_weight, reduce_fn):
    """Per-sample values (and weights), as Keras' `reduce_to_samplewise_values`."""
    if sample_weight is not None:
        sample_weight = values_of(sample_weight, values.dtype)
        values, sample_weight = same_rank(values, sample_weight)
        if values.ndim > sample_weight.ndim:
            values = reduce_fn(values, axis=tuple(range(sample_weight.ndim, values.ndim)))
        try:
            sample_weight = np.broadcast_to(sample_weight, values.shape)
        except ValueError:
            raise ValueError(f"[keras.metrics] sample_weight of shape {sample_weight.shape} does not broadcast "
                             f"to the values' shape {values.shape}; pass one weight per sample.") from None
        values = values * sample_weight
        if sample_weight.ndim > 1:
            sample_weight = reduce_fn(sample_weight, axis=tuple(range(1, sample_weight.ndim)))
    if values.ndim > 1:
        values = reduce_fn(values, axis=tuple(range(1, values.ndim)))
    return values, sample_weight


class Metric:
    """Base class: subclasses keep their state in NumPy scalars and implement the three methods."""

    def __init__(self, name=None, dtype=None):
        self.name = name or naming.snake_case(type(self).__name__)
        self.dtype = np.dtype(dtype or "float32")

    def update_state(self, *args, **kwargs):
        raise NotImplementedError(f"[{type(self).__name__}] a Metric implements update_state(...).")

    def result(self):
        raise NotImplementedError(f"[{type(self).__name__}] a Metric implements result().")

    def reset_state(self):
        raise NotImplementedError(f"[{type(self).__name__}] a Metric implements reset_state().")

    def __call__(self, *args, **kwargs):
        """Update with these values and return the result (Keras' stateful call)."""
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype.name}

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


class Sum(Metric):
    """The weighted sum of all values seen."""

    def __init__(self, name="sum", dtype=None):
        super().__init__(name, dtype)
        self.reset_state()

    def update_state(self, values, sample_weight=None):
        values, _ = samplewise(values_of(values, self.dtype), sample_weight, np.sum)
        self.total = self.dtype.type(self.total + np.sum(values, dtype=self.dtype))

    def reset_state(self):
        self.total = self.dtype.type(0)

    def result(self):
        return constant(self.total)


class Mean(Metric):
    """The weighted mean of all values seen: total / count (0 when nothing was counted)."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name, dtype)
        self.reset_state()

    def update_state(self, values, sample_weight=None):
        values, sample_weight = samplewise(values_of(values, self.dtype), sample_weight, np.mean)
        self.total = self.dtype.type(self.total + np.sum(values, dtype=self.dtype))
        if sample_weight is not None:
            count = np.sum(sample_weight, dtype=self.dtype)
        else:
            count = values.shape[0] if values.ndim >= 1 else 1
        self.count = self.dtype.type(self.count + self.dtype.type(count))

    def reset_state(self):
        self.total = self.dtype.type(0)
        self.count = self.dtype.type(0)

    def result(self):
        return constant(self.dtype.type(self.total / self.count) if self.count else self.dtype.type(0))


class MeanMetricWrapper(Mean):
    """The running mean of a per-sample function `fn(y_true, y_pred, **kwargs)`."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name or getattr(fn, "__name__", "mean_metric_wrapper"), dtype)
        self.fn, self.fn_kwargs = fn, kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        values = self.fn(y_true, y_pred, **self.fn_kwargs)
        super().update_state(values, sample_weight=sample_weight)


# -- per-sample functions (NumPy: a metric is never differentiated) -----------------------------

def matched(name, y_true, y_pred):
    """y_true (in y_pred's dtype) and y_pred with their ranks matched; their shapes must agree."""
    y_pred = values_of(y_pred)
    y_true, y_pred = same_rank(values_of(y_true, y_pred.dtype), y_pred)
    if y_true.shape != y_pred.shape:
        raise ValueError(f"[{name}] y_true of shape {y_true.shape} does not match y_pred of shape {y_pred.shape}.")
    return y_true, y_pred


def accuracy(y_true, y_pred):
    y_true, y_pred = matched("accuracy", y_true, y_pred)
    return (y_true == y_pred).astype("float32")


def binary_accuracy(y_true, y_pred, threshold=0.5):
    y_true, y_pred = matched("binary_accuracy", y_true, y_pred)
    return np.mean(y_true == (y_pred > threshold).astype(y_true.dtype), axis=-1, dtype="float32")


def categorical_accuracy(y_true, y_pred):
    y_true, y_pred = values_of(y_true), values_of(y_pred)
    if y_true.shape != y_pred.shape:
        raise ValueError(f"[categorical_accuracy] y_true (one-hot) and y_pred must have the same shape, got "
                         f"{y_true.shape} and {y_pred.shape}; for integer labels use sparse_categorical_accuracy.")
    return (np.argmax(y_true, -1) == np.argmax(y_pred, -1)).astype("float32")


def sparse_categorical_accuracy(y_true, y_pred):
    y_true, y_pred = values_of(y_true), values_of(y_pred)
    if y_true.ndim == y_pred.ndim and y_true.shape[-1:] == (1,):
        y_true = y_true[..., 0]
    matches = (y_true.astype(np.int64) == np.argmax(y_pred, -1)).astype("float32")
    return matches


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    return sparse_top_k_categorical_accuracy(np.argmax(values_of(y_true), -1), y_pred, k)


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    y_true, y_pred = values_of(y_true), values_of(y_pred)
    if y_true.ndim == y_pred.ndim and y_true.shape[-1:] == (1,):
        y_true = y_true[..., 0]
    true_score = np.take_along_axis(y_pred, y_true.astype(np.int64)[..., None], -1)
    return (np.sum(y_pred > true_score, axis=-1) < k).astype("float32")


def numpy_loss(fn):
    """A loss function (on tensors) read as NumPy values, for a metric."""
    def metric_fn(y_true, y_pred, **kwargs):
        return values_of(fn(values_of(y_true), values_of(y_pred), **kwargs))
    metric_fn.__name__ = fn.__name__
    return metric_fn


class Accuracy(MeanMetricWrapper):
    def __init__(self, name="accuracy", dtype=None):
        super().__init__(accuracy, name, dtype)


class BinaryAccuracy(MeanMetricWrapper):
    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        super().__init__(binary_accuracy, name, dtype, threshold=threshold)


class CategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(categorical_accuracy, name, dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(sparse_categorical_accuracy, name, dtype)


class TopKCategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, k=5, name="top_k_categorical_accuracy", dtype=None):
        super().__init__(top_k_categorical_accuracy, name, dtype, k=k)


class SparseTopKCategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, k=5, name="sparse_top_k_categorical_accuracy", dtype=None):
        super().__init__(sparse_top_k_categorical_accuracy, name, dtype, k=k)


class MeanSquaredError(MeanMetricWrapper):
    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(numpy_loss(losses.mean_squared_error), name, dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    def __init__(self, name="mean_absolute_error", dtype=None):
        super().__init__(numpy_loss(losses.mean_absolute_error), name, dtype)


class RootMeanSquaredError(Mean):
    """sqrt of the running mean of squared errors."""

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name, dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = same_rank(values_of(y_true, self.dtype), values_of(y_pred, self.dtype))
        super().update_state(np.square(y_pred - y_true), sample_weight=sample_weight)

    def result(self):
        return constant(np.sqrt(super().result().numpy()))


class BinaryCrossentropy(MeanMetricWrapper):
    def __init__(self, name="binary_crossentropy", dtype=None, from_logits=False, label_smoothing=0.0):
        super().__init__(numpy_loss(losses.binary_crossentropy), name, dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing)


class CategoricalCrossentropy(MeanMetricWrapper):
    def __init__(self, name="categorical_crossentropy", dtype=None, from_logits=False, label_smoothing=0.0):
        super().__init__(numpy_loss(losses.categorical_crossentropy), name, dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing)


class SparseCategoricalCrossentropy(MeanMetricWrapper):
    def __init__(self, name="sparse_categorical_crossentropy", dtype=None, from_logits=False):
        super().__init__(numpy_loss(losses.sparse_categorical_crossentropy), name, dtype, from_logits=from_logits)


class ConfusionRatio(Metric):
    """Precision or recall at one threshold: weighted true positives over a second count."""

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(name, dtype)
        if top_k is not None or class_id is not None or isinstance(thresholds, (list, tuple)):
            raise ValueError(f"[{type(self).__name__}] dualtape.keras supports one threshold over all classes "
                             "(no top_k, class_id or list of thresholds).")
        self.threshold = 0.5 if thresholds is None else float(thresholds)
        self.reset_state()

    def reset_state(self):
        self.true_positives = self.dtype.type(0)
        self.other = self.dtype.type(0)  # false positives (precision) or false negatives (recall)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = same_rank(values_of(y_true), values_of(y_pred, self.dtype))
        if y_true.shape != y_pred.shape:
            raise ValueError(f"[{type(self).__name__}] y_true of shape {y_true.shape} does not match y_pred of shape "
                             f"{y_pred.shape}.")
        weight = np.ones(y_pred.shape, self.dtype)
        if sample_weight is not None:
            w = values_of(sample_weight, self.dtype)
            weight = np.broadcast_to(w.reshape(w.shape + (1,) * (y_pred.ndim - w.ndim)), y_pred.shape)
        predicted, actual = y_pred > self.threshold, y_true.astype(bool)
        self.true_positives = self.dtype.type(self.true_positives + np.sum(weight * (predicted & actual), dtype=self.dtype))
        wrong = (predicted & ~actual) if isinstance(self, Precision) else (~predicted & actual)
        self.other = self.dtype.type(self.other + np.sum(weight * wrong, dtype=self.dtype))

    def result(self):
        total = self.true_positives + self.other
        return constant(self.dtype.type(self.true_positives / total) if total else self.dtype.type(0))


class Precision(ConfusionRatio):
    """true positives / predicted positives, a prediction being positive above `thresholds` (0.5)."""

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(thresholds, top_k, class_id, name or naming.unique_name("precision"), dtype)


class Recall(ConfusionRatio):
    """true positives / actual positives, a prediction being positive above `thresholds` (0.5)."""

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(thresholds, top_k, class_id, name or naming.unique_name("recall"), dtype)


class AUC(Metric):
    """Area under the ROC curve from confusion counts at `num_thresholds` thresholds (Keras' AUC
    with curve='ROC' and trapezoidal 'interpolation'); labels and predictions are flattened."""

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation", name=None, dtype=None,
                 thresholds=None, multi_label=False, num_labels=None, label_weights=None, from_logits=False):
        super().__init__(name or naming.unique_name("auc"), dtype)  # 'auc', 'auc_1', ... as Keras names them
        if curve != "ROC" or summation_method != "interpolation" or multi_label or label_weights is not None:
            raise ValueError("[AUC] dualtape.keras computes the ROC curve's area by interpolation over flattened "
                             "labels only (curve='ROC', summation_method='interpolation', multi_label=False).")
        if thresholds is None:
            if num_thresholds <= 1:
                raise ValueError(f"[AUC] num_thresholds must be > 1, got {num_thresholds}.")
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        else:
            inner = sorted(float(t) for t in thresholds)
        self.thresholds = np.array([0.0 - losses.EPSILON] + inner + [1.0 + losses.EPSILON], np.float32)
        self.from_logits = from_logits
        self.reset_state()

    def reset_state(self):
        zeros = np.zeros(len(self.thresholds), self.dtype)
        self.true_positives, self.false_positives = zeros.copy(), zeros.copy()
        self.true_negatives, self.false_negatives = zeros.copy(), zeros.copy()

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = same_rank(values_of(y_true), values_of(y_pred, self.dtype))
        if y_true.shape != y_pred.shape:
            raise ValueError(f"[AUC] y_true of shape {y_true.shape} does not match y_pred of shape {y_pred.shape}.")
        if self.from_logits:
            y_pred = (1.0 / (1.0 + np.exp(-y_pred))).astype(self.dtype)
        weight = np.ones(y_pred.shape, self.dtype)
        if sample_weight is not None:
            w = values_of(sample_weight, self.dtype)
            weight = np.broadcast_to(w.reshape(w.shape + (1,) * (y_pred.ndim - w.ndim)), y_pred.shape)
        y_true, y_pred, weight = y_true.reshape(-1).astype(bool), y_pred.reshape(-1), weight.reshape(-1)
        above = y_pred[None, :] > self.thresholds[:, None]
        positive, negative = weight * y_true, weight * ~y_true
        self.true_positives += np.sum(above * positive, axis=1, dtype=self.dtype)
        self.false_positives += np.sum(above * negative, axis=1, dtype=self.dtype)
        self.false_negatives += np.sum(~above * positive, axis=1, dtype=self.dtype)
        self.true_negatives += np.sum(~above * negative, axis=1, dtype=self.dtype)

    def result(self):
        def ratio(a, b):
            return np.where(b > 0, a / np.where(b > 0, b, 1), 0).astype(self.dtype)
        recall = ratio(self.true_positives, self.true_positives + self.false_negatives)
        fp_rate = ratio(self.false_positives, self.false_positives + self.true_negatives)
        heights = (recall[:-1] + recall[1:]) / 2
        return constant(np.sum((fp_rate[:-1] - fp_rate[1:]) * heights, dtype=self.dtype))


CLASSES = {cls.__name__: cls for cls in (Mean, Sum, AUC, Precision, Recall, Accuracy, BinaryAccuracy, CategoricalAccuracy,
                                         SparseCategoricalAccuracy, TopKCategoricalAccuracy,
                                         SparseTopKCategoricalAccuracy, MeanSquaredError, MeanAbsoluteError,
                                         RootMeanSquaredError, BinaryCrossentropy, CategoricalCrossentropy,
                                         SparseCategoricalCrossentropy)}
NAMES = {"auc": AUC, "precision": Precision, "recall": Recall, "accuracy": Accuracy, "acc": Accuracy, "binary_accuracy": BinaryAccuracy,
         "categorical_accuracy": CategoricalAccuracy, "sparse_categorical_accuracy": SparseCategoricalAccuracy,
         "top_k_categorical_accuracy": TopKCategoricalAccuracy,
         "sparse_top_k_categorical_accuracy": SparseTopKCategoricalAccuracy,
         "mean_squared_error": MeanSquaredError, "mse": MeanSquaredError,
         "mean_absolute_error": MeanAbsoluteError, "mae": MeanAbsoluteError,
         "root_mean_squared_error": RootMeanSquaredError, "binary_crossentropy": BinaryCrossentropy,
         "categorical_crossentropy": CategoricalCrossentropy,
         "sparse_categorical_crossentropy": SparseCategoricalCrossentropy}


def get(identifier):
    """A metric from a name ('mae', 'sparse_categorical_accuracy'), a class, an instance or a function."""
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if isinstance(identifier, str):
        cls = NAMES.get(identifier) or CLASSES.get(identifier)
        if cls is not None:
            return cls()
    if callable(identifier):
        return MeanMetricWrapper(numpy_loss(identifier))
    raise ValueError(f"[keras.metrics] unknown metric {identifier!r}; use one of {sorted(NAMES)}, a Metric "
                     "instance or a function (y_true, y_pred) -> per-sample values.")


__all__ = ["Metric", "MeanMetricWrapper", *CLASSES, "binary_accuracy", "categorical_accuracy",
           "sparse_categorical_accuracy", "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy", "get"]


def __dir__():
    return sorted(__all__)
