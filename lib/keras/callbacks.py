"""`keras.callbacks`: hooks `fit` calls around epochs and batches (Callback, History,
EarlyStopping, LambdaCallback, LearningRateScheduler, ReduceLROnPlateau, ModelCheckpoint) and
the list that dispatches to them."""

import numpy as np


class Callback:
    """Base class: override the hooks you need; `self.model` is the model being trained."""

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None): ...
    def on_train_end(self, logs=None): ...
    def on_epoch_begin(self, epoch, logs=None): ...
    def on_epoch_end(self, epoch, logs=None): ...
    def on_train_batch_begin(self, batch, logs=None): ...
    def on_train_batch_end(self, batch, logs=None): ...
    def on_test_begin(self, logs=None): ...
    def on_test_end(self, logs=None): ...
    def on_test_batch_begin(self, batch, logs=None): ...
    def on_test_batch_end(self, batch, logs=None): ...
    def on_predict_begin(self, logs=None): ...
    def on_predict_end(self, logs=None): ...
    def on_predict_batch_begin(self, batch, logs=None): ...
    def on_predict_batch_end(self, batch, logs=None): ...


class History(Callback):
    """Records each epoch's logs: `history.history['loss']` is the list of epoch losses."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)


class LambdaCallback(Callback):
    """A callback from functions: `LambdaCallback(on_epoch_end=lambda epoch, logs: ...)`."""

    def __init__(self, **hooks):
        super().__init__()
        for name, fn in hooks.items():
            if not name.startswith("on_") or not hasattr(Callback, name):
                raise ValueError(f"[LambdaCallback] unknown hook {name!r}; use on_epoch_end, on_train_batch_end, ...")
            setattr(self, name, fn)


class EarlyStopping(Callback):
    """Stop training when `monitor` has not improved by `min_delta` for `patience` epochs."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            raise ValueError(f"[EarlyStopping] `mode` must be 'auto', 'min' or 'max', got {mode!r}.")
        if mode == "auto":
            mode = "max" if "acc" in monitor or "auc" in monitor else "min"
        self.monitor, self.patience, self.verbose, self.mode = monitor, patience, verbose, mode
        self.min_delta = abs(min_delta) * (1 if mode == "max" else -1)
        self.baseline, self.restore_best_weights, self.start_from_epoch = baseline, restore_best_weights, start_from_epoch
        self.stopped_epoch = 0

    def better(self, value, reference):
        return value - self.min_delta > reference if self.mode == "max" else value - self.min_delta < reference

    def on_train_begin(self, logs=None):
        self.wait, self.stopped_epoch, self.best_weights, self.best_epoch = 0, 0, None, 0
        self.best = np.inf if self.mode == "min" else -np.inf

    def on_epoch_end(self, epoch, logs=None):
        value = (logs or {}).get(self.monitor)
        if value is None:
            raise ValueError(f"[EarlyStopping] the monitored metric {self.monitor!r} is not in the logs "
                             f"{sorted(logs or {})}; pass monitor= one of them.")
        if epoch < self.start_from_epoch:
            return
        self.wait += 1
        if self.better(value, self.best):
            self.best, self.best_epoch = value, epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self.better(value, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights and self.best_weights is not None:
                self.model.set_weights(self.best_weights)

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")


def current_learning_rate(model):
    return float(np.asarray(model.optimizer.learning_rate.numpy()))


class LearningRateScheduler(Callback):
    """Set the optimizer's learning rate at each epoch's start to `schedule(epoch, lr)` (or
    `schedule(epoch)`); the logs get 'learning_rate'."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch, logs=None):
        lr = current_learning_rate(self.model)
        try:
            lr = self.schedule(epoch, lr)
        except TypeError:  # a schedule of the epoch only
            lr = self.schedule(epoch)
        if not isinstance(lr, (float, int, np.floating, np.integer)):
            lr = float(np.asarray(lr.numpy() if hasattr(lr, "numpy") else lr))
        self.model.optimizer.learning_rate = float(lr)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {float(lr)}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = current_learning_rate(self.model)


class ReduceLROnPlateau(Callback):
    """Multiply the learning rate by `factor` when `monitor` has not improved by `min_delta`
    for `patience` epochs (then wait `cooldown` epochs); never below `min_lr`."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0.0, **kwargs):
        super().__init__()
        if factor >= 1.0:
            raise ValueError(f"[ReduceLROnPlateau] `factor` must be < 1.0, got {factor}.")
        if mode not in ("auto", "min", "max"):
            raise ValueError(f"[ReduceLROnPlateau] `mode` must be 'auto', 'min' or 'max', got {mode!r}.")
        self.monitor, self.factor, self.patience, self.verbose = monitor, factor, patience, verbose
        self.mode = ("max" if "acc" in monitor else "min") if mode == "auto" else mode
        self.min_delta, self.cooldown, self.min_lr = min_delta, cooldown, min_lr
        self.on_train_begin()

    def better(self, value):
        if self.mode == "min":
            return value < self.best - self.min_delta
        return value > self.best + self.min_delta

    def on_train_begin(self, logs=None):
        self.wait, self.cooldown_counter = 0, 0
        self.best = np.inf if self.mode == "min" else -np.inf

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        logs["learning_rate"] = current_learning_rate(self.model)
        value = logs.get(self.monitor)
        if value is None:
            raise ValueError(f"[ReduceLROnPlateau] the monitored metric {self.monitor!r} is not in the logs "
                             f"{sorted(logs)}; pass monitor= one of them.")
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self.better(value):
            self.best, self.wait = value, 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old = current_learning_rate(self.model)
                if old > np.float32(self.min_lr):
                    self.model.optimizer.learning_rate = max(old * self.factor, self.min_lr)
                    if self.verbose > 0:
                        print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to "
                              f"{current_learning_rate(self.model)}.")
                    self.cooldown_counter, self.wait = self.cooldown, 0


class ModelCheckpoint(Callback):
    """Save the weights after each epoch (or only when `monitor` improves, `save_best_only`) to
    `filepath`, formatted with the epoch and the logs ('w.{epoch:02d}-{val_loss:.2f}.weights.h5').
    Only weights can be saved (`save_weights_only=True`; the file is dualtape's, not Keras' HDF5)."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", save_freq="epoch", initial_value_threshold=None):
        super().__init__()
        if not save_weights_only:
            raise ValueError("[ModelCheckpoint] dualtape.keras saves weights only: pass save_weights_only=True "
                             "(and restore them with model.load_weights(path)).")
        if save_freq != "epoch":
            raise ValueError(f"[ModelCheckpoint] only save_freq='epoch' is supported, got {save_freq!r}.")
        if mode not in ("auto", "min", "max"):
            raise ValueError(f"[ModelCheckpoint] `mode` must be 'auto', 'min' or 'max', got {mode!r}.")
        self.filepath, self.monitor, self.verbose = str(filepath), monitor, verbose
        self.save_best_only = save_best_only
        self.mode = ("max" if "acc" in monitor or "auc" in monitor else "min") if mode == "auto" else mode
        self.best = initial_value_threshold if initial_value_threshold is not None else (
            np.inf if self.mode == "min" else -np.inf)

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        path = self.filepath.format(epoch=epoch + 1, **logs)
        if self.save_best_only:
            value = logs.get(self.monitor)
            if value is None:
                raise ValueError(f"[ModelCheckpoint] the monitored metric {self.monitor!r} is not in the logs "
                                 f"{sorted(logs)}; pass monitor= one of them.")
            if not (value < self.best if self.mode == "min" else value > self.best):
                return
            self.best = value
        self.model.save_weights(path)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: saving model to {path}")


class TensorBoard(Callback):
    """Not available: dualtape writes no TensorBoard logs."""

    def __init__(self, *args, **kwargs):
        raise ValueError("[TensorBoard] dualtape.keras writes no TensorBoard logs; remove the callback, or record "
                         "the logs yourself with keras.callbacks.LambdaCallback(on_epoch_end=...).")


class CallbackList:
    """Calls each hook on every callback in order."""

    def __init__(self, callbacks, model, params):
        self.callbacks = list(callbacks or [])
        for callback in self.callbacks:
            if not isinstance(callback, Callback):
                raise TypeError(f"[fit] callbacks must be keras.callbacks.Callback instances, got "
                                f"{type(callback).__name__}.")
            callback.set_model(model)
            callback.set_params(params)

    def __getattr__(self, hook):
        if not hook.startswith("on_"):
            raise AttributeError(hook)

        def call(*args):
            for callback in self.callbacks:
                getattr(callback, hook)(*args)
        return call


__all__ = ["Callback", "CallbackList", "EarlyStopping", "History", "LambdaCallback", "LearningRateScheduler",
           "ModelCheckpoint", "ReduceLROnPlateau", "TensorBoard"]


def __dir__():
    return sorted(__all__)
