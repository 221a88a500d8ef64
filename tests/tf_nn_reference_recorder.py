"""Record the reference values of tests/test_tf_nn_core.py from TensorFlow (not a test).

Run in a virtualenv that has TensorFlow (never a dependency of dualtape):

    /tmp/tfenv/bin/python tests/tf_nn_reference_recorder.py > tests/tf_nn_references.py

For every case of tf_nn_cases.py it prints the output and the gradients of
sum(output * cotangent) as float32 literals (shortest round-trip decimals).
"""

import pathlib
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from tf_nn_cases import CASES, call, cotangent  # noqa: E402


def literal(a):
    a = np.asarray(a, np.float32)
    if a.ndim == 0:
        return str(a)
    return "[" + ", ".join(literal(v) for v in a) + "]"


print('"""tf.nn reference values recorded from TensorFlow ' + tf.__version__ + ' by tf_nn_reference_recorder.py."""')
print()
print("REFERENCES = {")
for key, (name, build, wrt, kwargs) in CASES.items():
    args = [tf.constant(a) for a in build()]
    with tf.GradientTape() as tape:
        for i in wrt:
            tape.watch(args[i])
        y = call(tf.nn, name, args, kwargs)
        loss = tf.reduce_sum(y * cotangent(y.shape))
    grads = tape.gradient(loss, [args[i] for i in wrt])
    print(f"    {key!r}: ({literal(y.numpy())},")
    print(f"        [{', '.join(literal(g.numpy()) for g in grads)}]),")
print("}")
