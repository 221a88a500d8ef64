"""Optimizers: Keras' classes (`tf.keras.optimizers.Adam`, ...) and an optax-like functional form.

Both surfaces run the same update rules (`rules.py`), written after Keras 3's `update_step`
and tested against values recorded from Keras (tests/test_optimizers.py).

- Keras: `SGD`, `Adam`, `AdamW`, `RMSprop`, `Adagrad`, `Nadam`, `Adamax`, `Lion` with `apply_gradients`, `minimize`,
  `iterations`, schedules (`schedules.ExponentialDecay`, ...), weight decay and clipping.
- Functional: `sgd`, `adam`, `adamw`, `rmsprop`, `adagrad`, `nadam`, `adamax`, `lion` return `(init, update)` on
  pytrees; `apply_updates(params, updates)` adds the updates.
"""

from . import rules, schedules
from .functional import (GradientTransformation, adagrad, adam, adamax, adamw, apply_updates, from_rule, lion,
                         nadam, rmsprop, sgd)
from .keras import SGD, Adagrad, Adam, Adamax, AdamW, Lion, Nadam, Optimizer, RMSprop

__all__ = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Nadam", "Adamax", "Lion", "Optimizer", "schedules",
           "GradientTransformation", "from_rule", "sgd", "adam", "adamw", "rmsprop", "adagrad", "nadam",
           "adamax", "lion", "apply_updates"]


def __dir__():
    """dir(tf.keras.optimizers): the optimizers, schedules and the functional form, not the
    modules they are written in (functional, keras, rules stay importable)."""
    return sorted(__all__)
