"""Record the reference values of tests/test_keras_units.py from TensorFlow (not a test).

    /tmp/tfenv/bin/python tests/keras_units_recorder.py > /tmp/unit_refs.py

Runs each case of tests/keras_unit_cases.py with TensorFlow 2.21 / Keras 3 and prints the
results as a Python literal, each float32 value in its shortest round-trip decimal.
"""

import os
import pathlib
import pprint
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from keras_unit_cases import CASES  # noqa: E402


def short(x):
    if isinstance(x, float):
        return float(str(np.float32(x)))
    if isinstance(x, dict):
        return {k: short(v) for k, v in x.items()}
    if isinstance(x, list):
        return [short(v) for v in x]
    return x


print("REFERENCES = ", end="")
pprint.pprint({fn.__name__: short(fn(tf, keras)) for fn in CASES}, width=110, compact=True)
