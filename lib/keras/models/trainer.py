"""`Trainer`: compile, fit, evaluate and predict, as Keras 3 runs them (eagerly).

`fit` runs `train_step` on each batch, which is the loop a user would write: the forward
pass on a `GradientTape`, `compute_loss`, `tape.gradient` over `trainable_weights` and
`optimizer.apply_gradients`; then the loss tracker (weighted by the batch size, as Keras) and
the compiled metrics. Override `train_step(data)` / `test_step(data)` to change a step
("Customizing what happens in fit()"); the logs are the dict it returns, flattened and
sorted by name, as Keras prints them and stores them in `History`.
"""

import sys
import warnings

import numpy as np

from . import compiled, data as data_module
from .. import callbacks as callbacks_module
from .. import metrics as metrics_module
from ..progbar import Progbar
from ... import optimizers as optimizers_module
from ...core import nest
from ...reverse.tape import GradientTape
from ...reverse.tensor import Tensor


def get_optimizer(identifier):
    """An optimizer from a name ('adam', 'sgd', ...) or an instance."""
    if isinstance(identifier, optimizers_module.Optimizer):
        return identifier
    if isinstance(identifier, str):
        classes = {name.lower(): getattr(optimizers_module, name) for name in dir(optimizers_module)
                   if isinstance(getattr(optimizers_module, name), type)
                   and issubclass(getattr(optimizers_module, name), optimizers_module.Optimizer)}
        if identifier.lower() in classes and identifier.lower() != "optimizer":
            return classes[identifier.lower()]()
        raise ValueError(f"[compile] unknown optimizer {identifier!r}; use one of "
                         f"{sorted(set(classes) - {'optimizer'})} or an optimizer instance.")
    raise TypeError(f"[compile] `optimizer` must be a name or a keras.optimizers instance, got "
                    f"{type(identifier).__name__}.")


def batch_size_of(x):
    leaf = next(leaf for leaf in nest.flatten(x) if leaf is not None)
    return np.shape(leaf)[0]


class CompiledMetricsShim:
    """`model.compiled_metrics` of tf.keras 2: `update_state(y, y_pred)` updates the compiled metrics."""

    def __init__(self, model):
        self.model = model

    def update_state(self, y, y_pred, sample_weight=None):
        metrics = self.model._compile_metrics
        if metrics is not None:
            metrics.update_state(y, y_pred, sample_weight)

    def reset_state(self):
        if self.model._compile_metrics is not None:
            self.model._compile_metrics.reset_state()

    @property
    def metrics(self):
        return [] if self.model._compile_metrics is None else self.model._compile_metrics.metrics


class Trainer:
    """The training half of `keras.Model` (mixed into it)."""

    def init_trainer(self):
        self.optimizer = None
        self.compiled = False
        self._compile_loss = None
        self._compile_metrics = None
        self._loss_tracker = None
        self.stop_training = False
        self.history = None
        self._metrics = []

    def compile(self, optimizer="rmsprop", loss=None, loss_weights=None, metrics=None, weighted_metrics=None,
                run_eagerly=False, steps_per_execution=1, jit_compile="auto", auto_scale_loss=True):
        """Set the optimizer, loss and metrics `fit` and `evaluate` use."""
        self.optimizer = get_optimizer(optimizer)
        self._compile_loss = None if loss is None else compiled.CompileLoss(loss, loss_weights)
        self._compile_metrics = (None if metrics is None and weighted_metrics is None
                                 else compiled.CompileMetrics(metrics, weighted_metrics))
        self._loss_tracker = metrics_module.Mean(name="loss")
        self.compiled = True
        self.run_eagerly = True

    # -- the pieces a train_step uses -----------------------------------------------------------

    @property
    def metrics(self):
        """The loss tracker, the compiled metrics, then metrics assigned to attributes (Keras' order)."""
        found = []
        if self.compiled:
            found.append(self._loss_tracker)
            if self._compile_metrics is not None:
                found.append(self._compile_metrics)
        return found + [m for m in self._metrics if all(m is not f for f in found)]

    @property
    def metrics_names(self):
        return [m.name for m in self.metrics]

    def reset_metrics(self):
        for metric in self.metrics:
            metric.reset_state()

    @property
    def compiled_metrics(self):
        return CompiledMetricsShim(self)

    def compiled_loss(self, y, y_pred, sample_weight=None, regularization_losses=None):
        """tf.keras 2's `compiled_loss`: the compiled loss plus the layers' added losses, counted
        in the "loss" metric as tf.keras 2 counted it. (Keras 3.15's shim leaves that metric to
        `compiled_metrics.update_state`, which feeds it the mean of `y_pred`: a wrong "loss".)"""
        loss = self.compute_loss(y=y, y_pred=y_pred, sample_weight=sample_weight)
        if self._loss_tracker is not None:
            self._loss_tracker.update_state(loss, sample_weight=batch_size_of(y_pred))
        return loss

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The compiled loss of (y, y_pred) plus the losses layers added (`add_loss`)."""
        found = []
        if self._compile_loss is not None:
            found.append(self._compile_loss(y, y_pred, sample_weight))
        found.extend(self.losses)
        if not found:
            raise ValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
        total = found[0]
        for extra in found[1:]:
            total = total + extra
        return total

    def call_compute_loss(self, x, y, y_pred, sample_weight, training):
        """`compute_loss` with `training=` only if an override accepts it (added in Keras 3.3)."""
        try:
            return self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=training)
        except TypeError as error:
            if "training" not in str(error):
                raise
            return self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight)

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        if self._compile_metrics is not None:
            self._compile_metrics.update_state(y, y_pred, sample_weight)
        return self.get_metrics_result()

    def get_metrics_result(self):
        results = {}
        for metric in self.metrics:
            value = metric.result()
            results.update(value) if isinstance(value, dict) else results.__setitem__(metric.name, value)
        return results

    def train_step(self, data):
        """One step of training on a batch: forward, loss, gradient, update, metrics."""
        x, y, sample_weight = data_module.unpack(data)
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.call_compute_loss(x, y, y_pred, sample_weight, True)
        self._loss_tracker.update_state(loss, sample_weight=batch_size_of(x))
        trainable = self.trainable_weights
        if trainable:
            grads = tape.gradient(loss, trainable)
            self.optimizer.apply_gradients(zip(grads, trainable))
        else:
            warnings.warn("The model does not have any trainable weights.", stacklevel=2)
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def test_step(self, data):
        x, y, sample_weight = data_module.unpack(data)
        y_pred = self(x, training=False)
        loss = self.call_compute_loss(x, y, y_pred, sample_weight, False)
        self._loss_tracker.update_state(loss, sample_weight=batch_size_of(x))
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def predict_step(self, data):
        x, _, _ = data_module.unpack(data)
        return self(x, training=False)

    # -- the loops --------------------------------------------------------------------------------

    def require_compiled(self, api):
        if not self.compiled:
            raise RuntimeError(f"[{api}] You must call `compile()` before using the model.")

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_split=0.0,
            validation_data=None, shuffle=True, class_weight=None, sample_weight=None, initial_epoch=0,
            steps_per_epoch=None, validation_steps=None, validation_batch_size=None, validation_freq=1):
        """Train for `epochs` passes over the data; returns a `History` (its `.history` dict)."""
        self.require_compiled("fit")
        if class_weight is not None:
            raise ValueError("[fit] `class_weight` is not supported by dualtape.keras; pass per-sample weights "
                             "(sample_weight=class_weight_array[y]) instead.")
        verbose = 1 if verbose == "auto" else int(verbose)
        train = data_module.batches(x, y, sample_weight, batch_size, shuffle, steps_per_epoch, "fit")
        validation = None
        if validation_split:
            if not isinstance(train, data_module.ArrayBatches):
                raise ValueError("[fit] `validation_split` is only supported for arrays and tensors, not for a "
                                 "dataset or generator; pass validation_data= instead.")
            train, validation = train.split(validation_split)
        elif validation_data is not None:
            if isinstance(validation_data, tuple):
                vx, vy, vw = data_module.unpack(validation_data)
                validation = data_module.batches(vx, vy, vw, validation_batch_size or batch_size, False,
                                                 validation_steps, "fit")
            else:
                validation = data_module.batches(validation_data, steps=validation_steps, api="fit")
        history = callbacks_module.History()
        steps = self.steps_of(train)
        callback_list = callbacks_module.CallbackList(
            list(callbacks or []) + [history], self, {"verbose": verbose, "epochs": epochs, "steps": steps})
        self.stop_training = False
        callback_list.on_train_begin()
        logs = {}
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            callback_list.on_epoch_begin(epoch)
            if verbose:
                print(f"Epoch {epoch + 1}/{epochs}")
                sys.stdout.flush()
            progbar = Progbar(steps, verbose)
            step = 0
            for step, batch in enumerate(train, 1):
                callback_list.on_train_batch_begin(step - 1)
                logs = dict(sorted(compiled.flatten_logs(self.train_step(batch)).items()))
                callback_list.on_train_batch_end(step - 1, logs)
                progbar.update(step, logs)
                if self.stop_training:
                    break
            if step == 0:
                raise ValueError("[fit] the training data produced no batches; check that x is not empty and that "
                                 "a one-shot iterator was not used up by an earlier epoch.")
            steps = steps or step
            epoch_logs = dict(logs)
            if validation is not None and (epoch + 1) % validation_freq == 0:
                val_logs = self.evaluate(validation, verbose=0, return_dict=True)
                epoch_logs.update({"val_" + key: value for key, value in val_logs.items()})
            callback_list.on_epoch_end(epoch, epoch_logs)
            progbar.finish(step, epoch_logs)
            if self.stop_training:
                break
        callback_list.on_train_end(logs)
        self.history = history
        return history

    @staticmethod
    def steps_of(batches):
        try:
            return len(batches)
        except TypeError:
            return None

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None, steps=None,
                 callbacks=None, return_dict=False):
        """The loss and metrics over the data: a list in `metrics_names` order (a float if only one)."""
        self.require_compiled("evaluate")
        verbose = 1 if verbose == "auto" else int(verbose)
        source = x if isinstance(x, (data_module.ArrayBatches, data_module.IterableBatches)) else \
            data_module.batches(x, y, sample_weight, batch_size, False, steps, "evaluate")
        callback_list = callbacks_module.CallbackList(callbacks, self, {"verbose": verbose, "steps": steps})
        callback_list.on_test_begin()
        self.reset_metrics()
        progbar = Progbar(self.steps_of(source), verbose)
        logs, step = {}, 0
        for step, batch in enumerate(source, 1):
            callback_list.on_test_batch_begin(step - 1)
            logs = dict(sorted(compiled.flatten_logs(self.test_step(batch)).items()))
            callback_list.on_test_batch_end(step - 1, logs)
            progbar.update(step, logs)
        if step == 0:
            raise ValueError("[evaluate] the data produced no batches.")
        progbar.finish(step, logs)
        callback_list.on_test_end(logs)
        if return_dict:
            return logs
        return self.in_metric_order(logs)

    def in_metric_order(self, logs):
        names = []
        for metric in self.metrics:
            names += list(metric.result()) if isinstance(metric, compiled.CompileMetrics) else [metric.name]
        results = [logs[name] for name in names if name in logs]
        results += [logs[key] for key in sorted(logs) if key not in names]
        return results[0] if len(results) == 1 else results

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """The model's outputs on `x`, batch by batch, as NumPy arrays."""
        verbose = 1 if verbose == "auto" else int(verbose)
        source = data_module.batches(x, None, None, batch_size, False, steps, "predict")
        progbar = Progbar(self.steps_of(source), verbose)
        outputs, step = [], 0
        for step, batch in enumerate(source, 1):
            out = self.predict_step(batch)
            outputs.append(nest.map_structure(lambda t: t.numpy() if isinstance(t, Tensor) else np.asarray(t), out))
            progbar.update(step, {})
        if step == 0:
            raise ValueError("[predict] the data produced no batches.")
        progbar.finish(step, {})
        joined = [np.concatenate(parts) for parts in zip(*[nest.flatten(out) for out in outputs])]
        return nest.pack_sequence_as(outputs[0], joined)

    def train_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """One training step on one batch; the metrics keep accumulating (Keras 3)."""
        self.require_compiled("train_on_batch")
        logs = dict(sorted(compiled.flatten_logs(self.train_step((x, y, sample_weight))).items()))
        return logs if return_dict else self.in_metric_order(logs)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        self.require_compiled("test_on_batch")
        self.reset_metrics()
        logs = dict(sorted(compiled.flatten_logs(self.test_step((x, y, sample_weight))).items()))
        return logs if return_dict else self.in_metric_order(logs)

    def predict_on_batch(self, x):
        return nest.map_structure(lambda t: t.numpy(), self.predict_step((x,)))
