"""The functional form (optax-like) for the JAX-style API, on pytrees of arrays.

`adam(1e-3)` returns a `GradientTransformation`: `init(params) -> state` and
`update(grads, state, params) -> (updates, state)`; `apply_updates(params, updates)` adds
them. The rules are the Keras classes' (`rules.py`), so both forms take the same steps.

>>> import numpy as np
>>> opt = dualtape.optimizers.sgd(learning_rate=0.5, momentum=0.5)
>>> params = {"w": np.array([1.0, 2.0])}
>>> state = opt.init(params)
>>> grads = dualtape.grad(lambda p: dualtape.dnp.sum(p["w"] ** 2))(params)
>>> updates, state = opt.update(grads, state, params)
>>> dualtape.optimizers.apply_updates(params, updates)["w"]
array([0., 0.])
"""

from typing import Callable, NamedTuple

import numpy as np

from . import rules
from ..core import nest
from ..reverse.indexed_slices import IndexedSlices
from ..reverse.tensor import Tensor, constant


class GradientTransformation(NamedTuple):
    """`init(params) -> state`, `update(grads, state, params=None) -> (updates, state)`."""

    init: Callable
    update: Callable


def _leaf(x):
    """A gradient as an ndarray; an IndexedSlices (the gradient of a gather, tf.gather or
    embedding_lookup) is added into its dense rows first, as Keras' rules do."""
    if isinstance(x, IndexedSlices):
        x = x._dense()
    return x.numpy() if isinstance(x, Tensor) else np.asarray(x)


def _pack(structure, flat):
    return nest.pack_sequence_as(structure, flat) if nest.is_nested(structure) else flat[0]


def from_rule(rule, learning_rate, hyper, weight_decay=None, clipnorm=None, clipvalue=None,
              global_clipnorm=None):
    """The functional optimizer of `rule` (see `rules.py`), with Keras' options.

    The state holds `count` (the steps taken, which schedules and Adam's bias correction
    read) and one params-shaped pytree per slot of the rule. A None gradient leaves its
    parameter and slots alone and gets a None update, as Keras skips it.
    """
    api = rule.name.lower()
    rules.check_clipping(clipnorm, clipvalue, global_clipnorm, api)
    slot_names = tuple(rule.slots(np.zeros((), np.float32), **hyper))

    def init(params):
        leaves = [_leaf(p) for p in nest.flatten(params)]
        per_leaf = [rule.slots(value, **hyper) for value in leaves]
        state = {"count": np.zeros((), np.int64)}
        for name in slot_names:
            state[name] = _pack(params, [slots[name] for slots in per_leaf])
        return state

    def update(grads, state, params=None):
        flat_g = nest.flatten(grads)
        if params is None and weight_decay is not None:
            raise ValueError(f"[{api}.update] weight decay needs the parameters: call update(grads, state, params).")
        flat_p = [None] * len(flat_g) if params is None else [_leaf(p) for p in nest.flatten(params)]
        flat_slots = {name: nest.flatten(state[name]) for name in slot_names}
        if len(flat_p) != len(flat_g) or any(len(s) != len(flat_g) for s in flat_slots.values()):
            raise ValueError(f"[{api}.update] grads has {len(flat_g)} leaves but params/state have "
                             f"{len(flat_p)}; pass grads with the structure of the params given to init.")
        present = [i for i, g in enumerate(flat_g) if g is not None]
        if not present:
            raise ValueError(f"[{api}.update] No gradients provided for any variable (every leaf is None).")
        iteration = int(state["count"])
        lr32 = rules.learning_rate_at(learning_rate, iteration)
        clipped = rules.clip_gradients([_leaf(flat_g[i]) for i in present], clipnorm, clipvalue, global_clipnorm)
        updates = [None] * len(flat_g)
        for i, g in zip(present, clipped):
            old = {name: flat_slots[name][i] for name in slot_names}
            dtype = flat_p[i].dtype if flat_p[i] is not None else (old[slot_names[0]].dtype if old else g.dtype)
            lr = lr32.astype(dtype)
            delta, new = rule.step(g.astype(dtype), old, lr, iteration, **hyper)
            if weight_decay is not None:
                delta = delta - rules.weight_decay(flat_p[i], lr, weight_decay)
            updates[i] = delta
            for name in slot_names:
                flat_slots[name][i] = new[name]
        new_state = {"count": np.asarray(iteration + 1, np.int64)}
        for name in slot_names:
            new_state[name] = _pack(state[name], flat_slots[name])
        return _pack(grads, updates), new_state

    return GradientTransformation(init, update)


def apply_updates(params, updates):
    """`params + updates` leaf by leaf, in each parameter's dtype; a None update keeps it."""
    flat_p, flat_u = nest.flatten(params), nest.flatten(updates)
    if len(flat_p) != len(flat_u):
        raise ValueError(f"[apply_updates] params has {len(flat_p)} leaves, updates {len(flat_u)}; pass the "
                         "updates returned by update() for these params.")
    out = []
    for p, u in zip(flat_p, flat_u):
        if u is None:
            out.append(p)
            continue
        value = _leaf(p)
        new = (value + _leaf(u)).astype(value.dtype)
        out.append(constant(new) if isinstance(p, Tensor) else new)
    return _pack(params, out)


def sgd(learning_rate=0.01, momentum=0.0, nesterov=False, **options):
    """SGD with (Nesterov) momentum; `options`: weight_decay, clipnorm, clipvalue, global_clipnorm."""
    return from_rule(rules.SGD, learning_rate, dict(momentum=momentum, nesterov=nesterov), **options)


def adam(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, **options):
    """Adam, as `tf.keras.optimizers.Adam`."""
    return from_rule(rules.ADAM, learning_rate, dict(beta_1=beta_1, beta_2=beta_2, epsilon=epsilon,
                                                     amsgrad=amsgrad), **options)


def adamw(learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False,
          **options):
    """Adam with decoupled weight decay, as `tf.keras.optimizers.AdamW`."""
    return adam(learning_rate, beta_1, beta_2, epsilon, amsgrad, weight_decay=weight_decay, **options)


def rmsprop(learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, **options):
    """RMSprop, as `tf.keras.optimizers.RMSprop`."""
    return from_rule(rules.RMSPROP, learning_rate, dict(rho=rho, momentum=momentum, epsilon=epsilon,
                                                        centered=centered), **options)


def adagrad(learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, **options):
    """Adagrad, as `tf.keras.optimizers.Adagrad`."""
    return from_rule(rules.ADAGRAD, learning_rate, dict(initial_accumulator_value=initial_accumulator_value,
                                                        epsilon=epsilon), **options)


def nadam(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **options):
    """Nadam (Keras' `Nadam`) as (init, update)."""
    return from_rule(rules.NADAM, learning_rate, dict(beta_1=beta_1, beta_2=beta_2, epsilon=epsilon), **options)


def adamax(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **options):
    """Adamax (Keras' `Adamax`) as (init, update)."""
    return from_rule(rules.ADAMAX, learning_rate, dict(beta_1=beta_1, beta_2=beta_2, epsilon=epsilon), **options)


def lion(learning_rate=0.001, beta_1=0.9, beta_2=0.99, **options):
    """Lion (Keras' `Lion`) as (init, update)."""
    return from_rule(rules.LION, learning_rate, dict(beta_1=beta_1, beta_2=beta_2), **options)
