"""dualtape.keras' losses, metrics, initializers and layers against TensorFlow 2.21 / Keras 3.15,
case by case (tests/keras_unit_cases.py; the values in tests/keras_unit_references.py).

Values and gradients agree to float32 rounding: rtol 1e-5, and a gradient entry to 1e-6 of
its largest entry (a sum of float32 terms is exact only to a few ulp of its largest term).
Random initializers cannot match TF's generator: their distributions are checked instead.
"""

import pathlib
import sys

import numpy as np
import pytest

import dualtape as tf

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import keras_unit_cases  # noqa: E402
from keras_unit_references import REFERENCES  # noqa: E402

RTOL = 1e-5


@pytest.fixture(autouse=True)
def _fresh_names():
    tf.keras.backend.clear_session()


class Results(dict):
    """Each family of cases runs once, when a test first asks for it."""

    def __missing__(self, name):
        self[name] = getattr(keras_unit_cases, name)(tf, tf.keras)
        return self[name]


@pytest.fixture(scope="module")
def results():
    return Results()


def close(got, expected, what, gradient=False):
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    assert got.shape == expected.shape, f"{what}: shape {got.shape}, TF {expected.shape}"
    atol = 1e-6 * np.max(np.abs(expected)) if gradient and expected.size else 0.0
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=atol, err_msg=what)


@pytest.mark.parametrize("case", sorted(REFERENCES["loss_cases"]))
def test_loss_value_and_gradient(results, case):
    got, ref = results["loss_cases"][case], REFERENCES["loss_cases"][case]
    close(got["value"], ref["value"], f"{case}: loss")
    if "grad" in ref:
        close(got["grad"], ref["grad"], f"{case}: d loss / d y_pred", gradient=True)


@pytest.mark.parametrize("case", sorted(REFERENCES["metric_cases"]))
def test_metric_results(results, case):
    got, ref = results["metric_cases"][case], REFERENCES["metric_cases"][case]
    assert got["name"] == ref["name"]
    close(got["results"], ref["results"], f"{case}: result after each update, then after reset_state")


def test_deterministic_initializers_and_names(results):
    got, ref = results["initializer_cases"], REFERENCES["initializer_cases"]
    for key in ("zeros", "ones", "constant", "identity"):
        close(got[key], ref[key], key)
    assert got["string_names"] == ref["string_names"]


@pytest.mark.parametrize("case", sorted(REFERENCES["layer_cases"]))
def test_layer_output_and_gradients(results, case):
    got, ref = results["layer_cases"][case], REFERENCES["layer_cases"][case]
    assert got["shape"] == ref["shape"], case
    close(got["value"], ref["value"], f"{case}: output")
    assert len(got["grads"]) == len(ref["grads"]), case
    for i, (g, e) in enumerate(zip(got["grads"], ref["grads"])):
        close(g, e, f"{case}: gradient {i} (0: the input, then the trainable weights)", gradient=True)
    for i, (g, e) in enumerate(zip(got["weights_after"], ref["weights_after"])):
        close(g, e, f"{case}: non-trainable weight {i} after the call (moving statistics)")


# -- random initializers: the distribution Keras documents ----------------------------------------

FAN_IN, FAN_OUT = 300, 200


@pytest.mark.parametrize("name, std, bound", [
    ("glorot_uniform", np.sqrt(2.0 / (FAN_IN + FAN_OUT)), np.sqrt(6.0 / (FAN_IN + FAN_OUT))),
    ("he_uniform", np.sqrt(2.0 / FAN_IN), np.sqrt(6.0 / FAN_IN)),
    ("glorot_normal", np.sqrt(2.0 / (FAN_IN + FAN_OUT)), 2 * np.sqrt(2.0 / (FAN_IN + FAN_OUT)) / 0.87962566103423978),
    ("he_normal", np.sqrt(2.0 / FAN_IN), 2 * np.sqrt(2.0 / FAN_IN) / 0.87962566103423978),
    ("lecun_normal", np.sqrt(1.0 / FAN_IN), 2 * np.sqrt(1.0 / FAN_IN) / 0.87962566103423978),
    ("random_uniform", 0.1 / np.sqrt(12), 0.05),
    ("truncated_normal", 0.05 * 0.87962566103423978, 0.1),
])
def test_random_initializer_distribution(name, std, bound):
    init = tf.keras.initializers.get(name)
    values = init((FAN_IN, FAN_OUT), "float32")
    assert values.shape == (FAN_IN, FAN_OUT) and values.dtype == np.float32
    assert np.max(np.abs(values)) <= bound * (1 + 1e-6)
    assert abs(np.mean(values)) < 4 * std / np.sqrt(values.size)
    # the sample std of 60000 values is within 2% of the documented one (about 7 standard errors)
    assert abs(np.std(values) / std - 1) < 0.02, (np.std(values), std)


def test_seeded_initializers_repeat_and_unseeded_follow_the_global_seed():
    init = tf.keras.initializers.GlorotUniform(seed=3)
    np.testing.assert_array_equal(init((4, 5)), init((4, 5)))
    tf.random.set_seed(1)
    first = tf.keras.initializers.HeNormal()((4, 5))
    tf.random.set_seed(1)
    np.testing.assert_array_equal(first, tf.keras.initializers.HeNormal()((4, 5)))


def test_orthogonal_initializer_is_orthogonal():
    q = tf.keras.initializers.Orthogonal(gain=2.0, seed=0)((6, 4))
    np.testing.assert_allclose(q.T @ q, 4.0 * np.eye(4), atol=1e-5)


def test_unknown_names_say_what_exists():
    for module, name in ((tf.keras.initializers, "glorot"), (tf.keras.losses, "msee"), (tf.keras.metrics, "acuracy"),
                         (tf.keras.activations, "rellu"), (tf.keras.regularizers, "l3")):
        with pytest.raises(ValueError, match="unknown"):
            module.get(name)
