"""What `compile` makes of its `loss=` and `metrics=`: `CompileLoss` and `CompileMetrics`.

Both resolve their arguments on first use, when the targets and predictions are known:
'accuracy' becomes BinaryAccuracy, SparseCategoricalAccuracy or CategoricalAccuracy by the
shapes, as Keras decides (a last dimension of 1 is binary; integer labels of lower rank are
sparse), keeping the name 'accuracy'.
"""

import numpy as np

from .. import losses as losses_module
from .. import metrics as metrics_module
from ...core import nest


def binary_or_sparse(y_true, y_pred):
    """(is_binary, is_sparse_categorical) from the shapes, as Keras'."""
    true_shape, pred_shape = np.shape(y_true), tuple(y_pred.shape)
    is_binary = pred_shape[-1] == 1
    is_sparse = len(true_shape) < len(pred_shape) or (true_shape[-1:] == (1,) and pred_shape[-1] > 1)
    return is_binary, is_sparse


def resolve_metric(identifier, y_true, y_pred):
    if isinstance(identifier, str) and identifier.lower() in ("accuracy", "acc"):
        is_binary, is_sparse = binary_or_sparse(y_true, y_pred)
        cls = (metrics_module.BinaryAccuracy if is_binary else metrics_module.SparseCategoricalAccuracy
               if is_sparse else metrics_module.CategoricalAccuracy)
        return cls(name=identifier)
    metric = metrics_module.get(identifier)
    if isinstance(identifier, str):
        metric.name = identifier
    return metric


def resolve_loss(identifier, y_true, y_pred):
    if isinstance(identifier, str) and identifier.lower() in ("crossentropy", "ce"):
        is_binary, is_sparse = binary_or_sparse(y_true, y_pred)
        identifier = ("binary_crossentropy" if is_binary else "sparse_categorical_crossentropy" if is_sparse
                      else "categorical_crossentropy")
    loss = losses_module.get(identifier)
    if not isinstance(loss, losses_module.Loss):
        name = identifier if isinstance(identifier, str) else getattr(loss, "__name__", "loss")
        loss = losses_module.LossFunctionWrapper(loss, name=name)
    return loss


class CompileLoss:
    """The compiled loss: one loss (or a list, one per output), summed over the outputs."""

    def __init__(self, loss, loss_weights=None):
        self.identifiers, self.loss_weights = loss, loss_weights
        self.losses = None
        self.metrics = []

    def build(self, y_true, y_pred):
        if isinstance(self.identifiers, (list, tuple)):
            if not isinstance(y_pred, (list, tuple)) or len(y_pred) != len(self.identifiers):
                raise ValueError(f"[compile] got {len(self.identifiers)} losses for a model with "
                                 f"{len(y_pred) if isinstance(y_pred, (list, tuple)) else 1} output(s); pass one loss "
                                 "per output.")
            self.losses = [resolve_loss(i, t, p) for i, t, p in zip(self.identifiers, y_true, y_pred)]
        elif isinstance(self.identifiers, dict):
            raise ValueError("[compile] a dict of losses (by output name) is not supported by dualtape.keras; "
                             "pass a list with one loss per output, in the order of the model's outputs.")
        elif isinstance(y_pred, (list, tuple)):
            raise ValueError(f"[compile] the model has {len(y_pred)} outputs but one loss was given; pass a list with "
                             "one loss per output, in the order of the model's outputs.")
        else:
            self.losses = [resolve_loss(self.identifiers, y_true, y_pred)]

    def __call__(self, y_true, y_pred, sample_weight=None):
        if self.losses is None:
            self.build(y_true, y_pred)
        if len(self.losses) == 1:
            pairs = [(y_true, y_pred)]
        else:
            pairs = list(zip(y_true, y_pred))
        weights = self.loss_weights or [1.0] * len(self.losses)
        total = None
        for loss, weight, (t, p) in zip(self.losses, weights, pairs):
            value = loss(t, p, sample_weight)
            value = value if weight == 1.0 else value * np.float32(weight)
            total = value if total is None else total + value
        return total


class CompileMetrics(metrics_module.Metric):
    """The compiled metrics: `metrics` ignore the sample weights and `weighted_metrics` use them,
    as in Keras; `result()` is a dict {name: value} (a repeated name gets '_1', '_2', ...)."""

    def __init__(self, metrics, weighted_metrics=None):
        super().__init__(name="compile_metrics")
        self.identifiers = [self.listed(metrics), self.listed(weighted_metrics)]
        self.unweighted, self.weighted = [], []
        self.built = False

    @staticmethod
    def listed(metrics):
        found = [] if metrics is None else list(metrics) if isinstance(metrics, (list, tuple)) else [metrics]
        if any(isinstance(m, (list, tuple, dict)) for m in found):
            raise ValueError("[compile] nested metrics (a list or dict per output) are not supported by "
                             "dualtape.keras; pass a flat list of metrics for a single-output model.")
        return found

    @property
    def metrics(self):
        return self.unweighted + self.weighted

    def build(self, y_true, y_pred):
        self.unweighted = [resolve_metric(m, y_true, y_pred) for m in self.identifiers[0]]
        self.weighted = [resolve_metric(m, y_true, y_pred) for m in self.identifiers[1]]
        self.built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        if isinstance(y_pred, (list, tuple)) and any(self.identifiers):
            raise ValueError("[compile] metrics for a model with several outputs are not supported by "
                             "dualtape.keras; update them by hand in a custom train_step.")
        if not self.built:
            self.build(y_true, y_pred)
        for metric in self.unweighted:
            metric.update_state(y_true, y_pred)
        for metric in self.weighted:
            metric.update_state(y_true, y_pred, sample_weight=sample_weight)

    def result(self):
        """{name: value}; a repeated name becomes name_1, name_2 (a weighted metric's first
        becomes weighted_name), as Keras names them."""
        results, counts = {}, {}

        def unique(name):
            if name not in counts:
                counts[name] = 1
                return name
            counts[name] += 1
            return f"{name}_{counts[name] - 1}"

        for metric in self.unweighted:
            results[unique(metric.name)] = metric.result()
        for metric in self.weighted:
            name = metric.name if metric.name not in counts else unique(f"weighted_{metric.name}")
            counts.setdefault(name, 1)
            results[name] = metric.result()
        return results

    def reset_state(self):
        for metric in self.metrics:
            metric.reset_state()


def flatten_logs(values):
    """Merge dict results into one flat dict of Python floats (tensors read)."""
    logs = {}
    for key, value in values.items():
        if isinstance(value, dict):
            logs.update(flatten_logs(value))
        else:
            leaves = nest.flatten(value)
            logs[key] = float(np.asarray(leaves[0].numpy() if hasattr(leaves[0], "numpy") else leaves[0])) \
                if len(leaves) == 1 else value
    return logs
