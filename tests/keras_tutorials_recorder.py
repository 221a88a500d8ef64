"""Record the reference values of tests/test_keras_tutorials.py from TensorFlow (not a test).

Run with an interpreter that has TensorFlow 2.21 / Keras 3 (never a dependency of dualtape):

    /tmp/tfenv/bin/python tests/keras_tutorials_recorder.py > /tmp/tutorial_refs.py

It runs each tutorial of tests/keras_tutorials.py with real TensorFlow and prints its
record as a Python literal, float32 values in the shortest decimal that round-trips.
"""

import os
import pathlib
import pprint
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from keras_tutorials import TUTORIALS  # noqa: E402

print("REFERENCES = ", end="")
pprint.pprint({fn.__name__: fn(tf, keras) for fn in TUTORIALS}, width=110, compact=True)
