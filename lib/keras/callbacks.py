"""`keras.callbacks`: hooks `fit` calls around epochs and batches (Callback, History,
EarlyStopping, LambdaCallback) and the list that dispatches to them."""

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


__all__ = ["Callback", "CallbackList", "EarlyStopping", "History", "LambdaCallback"]


def __dir__():
    return sorted(__all__)
