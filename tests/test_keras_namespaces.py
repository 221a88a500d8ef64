"""tf.keras' namespaces list Keras' names only: the helpers and submodules dualtape's Keras is
built from stay importable but are not in dir() (nor in `import *`), as in TF; names Keras
has are checked against those Keras 3.15 lists (tests/keras_namespace_names.py)."""

import pathlib
import sys

import pytest

import dualtape as tf
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from keras_namespace_names import KERAS_NAMES  # noqa: E402

SPACES = sorted(KERAS_NAMES)


def space(name):
    return tf.keras if name == "keras" else getattr(tf.keras, name.split(".")[1])


@pytest.mark.parametrize("name", SPACES)
def test_every_listed_name_is_a_keras_name(name):
    ours = {n for n in dir(space(name)) if not n.startswith("_")}
    assert ours and not ours - set(KERAS_NAMES[name]), sorted(ours - set(KERAS_NAMES[name]))
    assert all(hasattr(space(name), n) for n in ours)


def test_the_names_a_training_script_uses_are_there():
    for name in ("Sequential", "Model", "Input", "layers", "losses", "metrics", "optimizers", "callbacks", "datasets",
                 "utils", "backend", "initializers", "activations", "models"):
        assert name in dir(tf.keras), name
    for name in ("Dense", "Conv2D", "MaxPooling2D", "Flatten", "Dropout", "BatchNormalization", "Embedding", "Input"):
        assert name in dir(tf.keras.layers), name
