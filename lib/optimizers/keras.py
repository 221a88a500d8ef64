"""Keras' optimizer classes (as `tf.keras.optimizers`): SGD, Adam, AdamW, RMSprop, Adagrad,
Nadam, Adamax, Lion.

Each class only names its rule (`rules.py`) and hyperparameters; `Optimizer` runs Keras 3's
`apply`: drop None gradients (with Keras' warning), clip, decay the weights, step each
variable, count the iteration.

>>> w = dualtape.Variable([1.0, 2.0])
>>> opt = dualtape.keras.optimizers.SGD(learning_rate=0.1)
>>> with dualtape.GradientTape() as tape:
...     loss = dualtape.reduce_sum(w ** 2)
>>> int(opt.apply_gradients(zip(tape.gradient(loss, [w]), [w])))
1
>>> w.numpy()
array([0.8, 1.6], dtype=float32)
"""

import warnings

import numpy as np

from . import rules
from .schedules import LearningRateSchedule
from ..reverse.indexed_slices import IndexedSlices
from ..reverse.tensor import Tensor, constant
from ..surface.variables import Variable


def _array(x):
    """A gradient as an ndarray; an IndexedSlices (the gradient of a gather, tf.gather or
    embedding_lookup) is added into its dense rows first, as Keras' rules do."""
    if isinstance(x, IndexedSlices):
        x = x._dense()
    return x.numpy() if isinstance(x, Tensor) else np.asarray(x)


class Optimizer:
    """The shared machinery; a subclass sets `rule` and passes its hyperparameters."""

    rule = None

    def __init__(self, learning_rate, hyper, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, name=None, **kwargs):
        for unsupported in ("use_ema", "loss_scale_factor", "gradient_accumulation_steps"):
            if kwargs.pop(unsupported, None):
                raise ValueError(f"[{type(self).__name__}] `{unsupported}` is not supported by dualtape's "
                                 "optimizers; leave it unset.")
        for unused in ("ema_momentum", "ema_overwrite_frequency"):  # meaningful only with use_ema
            kwargs.pop(unused, None)
        if kwargs:
            raise TypeError(f"[{type(self).__name__}] unexpected keyword arguments: {sorted(kwargs)}.")
        rules.check_clipping(clipnorm, clipvalue, global_clipnorm, type(self).__name__)
        self.name = name or type(self).__name__.lower()
        self.hyper = dict(hyper)
        self.weight_decay = weight_decay
        self.clipnorm, self.clipvalue, self.global_clipnorm = clipnorm, clipvalue, global_clipnorm
        self._iterations = Variable(np.int64(0), trainable=False, name="iteration")
        self._learning_rate = None
        self._set_learning_rate(learning_rate)
        self._slots = {}  # id(variable) -> {slot name: Variable}
        self._trainable_variables = []  # held, so no id in _slots is reused by a new variable
        for key, value in self.hyper.items():
            setattr(self, key, value)

    # -- learning rate and iterations ------------------------------------------------------

    @property
    def iterations(self):
        """The number of steps applied, an int64 variable (Keras' `optimizer.iterations`)."""
        return self._iterations

    @property
    def learning_rate(self):
        """The current learning rate: a float32 variable, or the schedule's value now."""
        if isinstance(self._learning_rate, Variable):
            return self._learning_rate
        return constant(self._current_learning_rate())

    @learning_rate.setter
    def learning_rate(self, value):
        self._set_learning_rate(value)

    def _set_learning_rate(self, value):
        if callable(value):
            self._learning_rate = value
        elif isinstance(self._learning_rate, LearningRateSchedule):
            raise TypeError("[Optimizer.learning_rate] This optimizer was created with a `LearningRateSchedule` "
                            "object as its `learning_rate` constructor argument, hence its learning rate is "
                            "not settable. Create the optimizer with a float `learning_rate` instead.")
        elif isinstance(self._learning_rate, Variable):
            self._learning_rate.assign(np.float32(_array(value)))
        else:
            self._learning_rate = Variable(np.float32(_array(value)), trainable=False, name="learning_rate")

    def _current_learning_rate(self):
        lr = self._learning_rate
        if isinstance(lr, Variable):
            return lr.numpy()
        return rules.learning_rate_at(lr, int(self._iterations.numpy()))

    # -- state ---------------------------------------------------------------------------------

    def build(self, var_list):
        """Create the per-variable state (momentums, velocities, ...) for `var_list`."""
        for var in var_list:
            if id(var) not in self._slots:
                slots = self.rule.slots(var.numpy(), **self.hyper)
                base = var.name.split(":")[0].replace("/", "_")
                self._slots[id(var)] = {key: Variable(value, trainable=False, name=f"{base}_{key}")
                                        for key, value in slots.items()}
                self._trainable_variables.append(var)

    @property
    def built(self):
        return bool(self._trainable_variables)

    @property
    def variables(self):
        """The optimizer's own variables: iterations, the learning rate, then each slot."""
        own = [self._iterations] + ([self._learning_rate] if isinstance(self._learning_rate, Variable) else [])
        return own + [v for slots in self._slots.values() for v in slots.values()]

    # -- updates -------------------------------------------------------------------------------

    def apply_gradients(self, grads_and_vars):
        """Apply `(gradient, variable)` pairs; pairs with a None gradient are skipped, as Keras.

        Returns `iterations` (as tf.keras does).
        """
        pairs = list(grads_and_vars)
        if pairs:
            grads, variables = zip(*pairs)
            self.apply(grads, variables)
        return self._iterations

    def apply(self, grads, trainable_variables):
        """Keras 3's `apply`: filter, clip, decay, step each variable, then count the step."""
        grads, variables = list(grads), list(trainable_variables)
        if not grads:
            return
        if len(grads) != len(variables):
            raise ValueError(f"[{type(self).__name__}.apply] got {len(grads)} gradients for "
                             f"{len(variables)} variables; pass one gradient (or None) per variable.")
        for var in variables:
            if not isinstance(var, Variable):
                raise TypeError(f"[{type(self).__name__}.apply] expected tf.Variable objects to update, got "
                                f"{type(var).__name__}. Optimize variables; for arrays use the functional "
                                "form (dualtape.optimizers.adam(...).update).")
        self.build(variables)
        missing = [v.name for g, v in zip(grads, variables) if g is None]
        kept = [(g, v) for g, v in zip(grads, variables) if g is not None]
        if not kept:
            raise ValueError("No gradients provided for any variable.")
        if missing:
            warnings.warn(f"Gradients do not exist for variables {missing} when minimizing the loss. If using "
                          "`model.compile()`, did you forget to provide a `loss` argument?", stacklevel=3)
        grads = rules.clip_gradients([_array(g) for g, _ in kept], self.clipnorm, self.clipvalue,
                                     self.global_clipnorm)
        variables = [v for _, v in kept]
        lr32 = self._current_learning_rate()
        iteration = int(self._iterations.numpy())
        if self.weight_decay is not None:
            for var in variables:
                value = var.numpy()
                var.assign(value - rules.weight_decay(value, lr32.astype(value.dtype), self.weight_decay))
        for g, var in zip(grads, variables):
            value = var.numpy()
            slots = self._slots[id(var)]
            delta, new = self.rule.step(g.astype(value.dtype), {k: s.numpy() for k, s in slots.items()},
                                        lr32.astype(value.dtype), iteration, **self.hyper)
            for key, slot_value in new.items():
                slots[key].assign(slot_value)
            var.assign(value + delta)
        self._iterations.assign(np.int64(iteration + 1))

    def minimize(self, loss, var_list, tape=None):
        """Minimize `loss` over `var_list` by one step (tf.keras 2's `minimize`).

        `loss` is a callable taking no arguments (recorded on a fresh tape), or a tensor
        recorded by `tape`. `var_list` may be a callable returning the list. Keras 3
        dropped `minimize`; it is `apply_gradients` of the tape's gradients.
        """
        from ..reverse.tape import GradientTape
        if callable(loss):
            with GradientTape() as tape:
                if not callable(var_list):
                    tape.watch(var_list)
                loss = loss()
        elif tape is None:
            raise ValueError("`tape` is required when a `Tensor` loss is passed. Received: loss="
                             f"{loss}, tape=None. Pass the GradientTape that recorded it, or pass "
                             "the loss as a callable.")
        if callable(var_list):
            var_list = var_list()
        var_list = list(var_list)
        grads = tape.gradient(loss, var_list)
        return self.apply_gradients(zip(grads, var_list))

    def get_config(self):
        lr = self._learning_rate
        return dict(name=self.name, learning_rate=float(lr.numpy()) if isinstance(lr, Variable) else lr,
                    weight_decay=self.weight_decay, clipnorm=self.clipnorm, clipvalue=self.clipvalue,
                    global_clipnorm=self.global_clipnorm, **self.hyper)


class SGD(Optimizer):
    """Gradient descent, with (Nesterov) momentum: `tf.keras.optimizers.SGD(0.01, momentum=0.9)`."""

    rule = rules.SGD

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, name=None, **kwargs):
        if not isinstance(momentum, float) or not 0 <= momentum <= 1:
            raise ValueError("[SGD] `momentum` must be a float between [0, 1].")
        super().__init__(learning_rate, dict(momentum=momentum, nesterov=nesterov), weight_decay, clipnorm,
                         clipvalue, global_clipnorm, name, **kwargs)


class Adam(Optimizer):
    """Adam (Kingma & Ba), optionally AMSGrad; epsilon is added to sqrt(v) as in Keras."""

    rule = rules.ADAM

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None, name=None, **kwargs):
        super().__init__(learning_rate, dict(beta_1=beta_1, beta_2=beta_2, epsilon=epsilon, amsgrad=amsgrad),
                         weight_decay, clipnorm, clipvalue, global_clipnorm, name, **kwargs)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter), 0.004 by default as in Keras."""

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, clipnorm=None, clipvalue=None, global_clipnorm=None, name=None, **kwargs):
        if weight_decay is None:
            raise ValueError("[AdamW] Argument `weight_decay` must be a float. Received: weight_decay=None")
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad, weight_decay, clipnorm, clipvalue,
                         global_clipnorm, name, **kwargs)


class RMSprop(Optimizer):
    """RMSprop: divide by a running root mean square (epsilon inside the root, as Keras 3)."""

    rule = rules.RMSPROP

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None, name=None, **kwargs):
        super().__init__(learning_rate, dict(rho=rho, momentum=momentum, epsilon=epsilon, centered=centered),
                         weight_decay, clipnorm, clipvalue, global_clipnorm, name, **kwargs)


class Adagrad(Optimizer):
    """Adagrad: per-element step sizes from the accumulated squared gradients."""

    rule = rules.ADAGRAD

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, name=None, **kwargs):
        super().__init__(learning_rate, dict(initial_accumulator_value=initial_accumulator_value, epsilon=epsilon),
                         weight_decay, clipnorm, clipvalue, global_clipnorm, name, **kwargs)


class Nadam(Optimizer):
    """Adam with Nesterov momentum (Dozat), Keras 3's update with its momentum schedule."""

    rule = rules.NADAM

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, name=None, **kwargs):
        super().__init__(learning_rate, dict(beta_1=beta_1, beta_2=beta_2, epsilon=epsilon), weight_decay,
                         clipnorm, clipvalue, global_clipnorm, name, **kwargs)


class Adamax(Optimizer):
    """Adamax: Adam with the infinity norm of the gradients (Kingma & Ba, section 7)."""

    rule = rules.ADAMAX

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, name=None, **kwargs):
        super().__init__(learning_rate, dict(beta_1=beta_1, beta_2=beta_2, epsilon=epsilon), weight_decay,
                         clipnorm, clipvalue, global_clipnorm, name, **kwargs)


class Lion(Optimizer):
    """Lion: the sign of an interpolated momentum as the step (Chen et al. 2023); use a smaller
    learning rate than Adam's (Keras' default 0.001)."""

    rule = rules.LION

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, name=None, **kwargs):
        if beta_1 <= 0 or beta_1 > 1:
            raise ValueError(f"[Lion] Argument `beta_1` must be in the [0, 1] range. Otherwise, the optimizer "
                             f"degenerates to SignSGD. Received: beta_1={beta_1}.")
        super().__init__(learning_rate, dict(beta_1=beta_1, beta_2=beta_2), weight_decay, clipnorm, clipvalue,
                         global_clipnorm, name, **kwargs)
