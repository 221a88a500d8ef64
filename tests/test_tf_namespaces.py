"""`import dualtape as tf` shows TF's names (issue 24): every public name of tf, tf.nn, tf.math,
tf.linalg, tf.random, tf.signal, tf.image, tf.data, tf.config and tf.keras.optimizers(.schedules) is one
TF 2.21 has (tf_namespace_names.py, recorded from TF) or one of dualtape's own documented
additions below; no namespace leaks a helper module (np, math, dnp) or an imported name."""

import types

import pytest

import dualtape as tf
from tf_namespace_names import TF_MODULES, TF_NAMES

SPACES = {"tf": tf, "tf.nn": tf.nn, "tf.math": tf.math, "tf.linalg": tf.linalg, "tf.random": tf.random,
          "tf.signal": tf.signal, "tf.image": tf.image, "tf.data": tf.data,
          "tf.keras.optimizers": tf.keras.optimizers, "tf.keras.optimizers.schedules": tf.keras.optimizers.schedules,
          "tf.config": tf.config}

# dualtape's additions, each documented (README, docs/): the JAX-style functional API and custom
# rules at the top level, TF 1's top-level spellings it kept, the functional optimizers
# (dualtape.optimizers is tf.keras.optimizers), and the global generator the random ops share.
EXTRAS = {
    "tf": {"grad", "value_and_grad", "jvp", "vjp", "jacfwd", "jacrev", "jacobian", "hessian", "hvp", "linearize",
           "vmap", "custom_jvp", "custom_vjp", "primitive", "defjvp", "defvjp", "defop", "REGISTRY", "checkpoint",
           "remat", "register_pytree_node", "register_pytree_node_class", "log", "reduce_std", "reduce_variance"},
    "tf.linalg": {"transpose"},
    "tf.random": {"generator"},
    "tf.keras.optimizers": {"GradientTransformation", "from_rule", "apply_updates", "sgd", "adam", "adamw", "rmsprop",
                            "adagrad", "nadam", "adamax", "lion"},
}

FOREIGN = ("numpy", "typing", "functools", "itertools", "collections", "math", "warnings", "dataclasses",
           "inspect", "types", "operator", "abc", "enum", "os", "sys")


def _public(space):
    return sorted(n for n in dir(space) if not n.startswith("_"))


@pytest.mark.parametrize("key", SPACES)
def test_no_helper_modules_or_foreign_names(key):
    space = SPACES[key]
    modules = [n for n in _public(space) if isinstance(getattr(space, n), types.ModuleType)
               and n not in TF_MODULES[key]]
    assert not modules, f"{key} lists modules TF does not have: {modules} (import them as _name)"
    foreign = [f"{n} from {getattr(space, n).__module__}" for n in _public(space)
               if (getattr(getattr(space, n), "__module__", None) or "").split(".")[0] in FOREIGN]
    assert not foreign, f"{key} re-exports names of other libraries: {foreign}"


@pytest.mark.parametrize("key", SPACES)
def test_every_public_name_is_tfs_or_a_documented_addition(key):
    unknown = sorted(set(_public(SPACES[key])) - set(TF_NAMES[key]) - EXTRAS.get(key, set()))
    assert not unknown, (f"{key} shows names TF 2.21 does not have: {unknown}. Import helpers as _name, "
                         "or add a documented dualtape addition to EXTRAS.")


def test_the_reported_leaks_are_gone():
    for space, name in ((tf.nn, "dnp"), (tf.keras.optimizers.schedules, "np"), (tf.math, "np"),
                        (tf.random, "np"), (tf.linalg, "dnp"), (tf.signal, "dnp"), (tf.data, "TensorSpec")):
        assert not hasattr(space, name), name
    # dualtape's own packages stay importable, unlisted
    assert "core" not in dir(tf) and tf.core.registry.REGISTRY is tf.REGISTRY
    assert "dnp" not in dir(tf) and tf.dnp.sin is not None
