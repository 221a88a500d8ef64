"""Record TF's public names per namespace for tests/test_tf_namespaces.py (not a test).

    /tmp/tfenv/bin/python tests/tf_names_recorder.py > tests/tf_namespace_names.py

(the committed file has its long lists wrapped to 110 columns).

Run in a virtualenv with TensorFlow (never a dependency of dualtape).
"""

import types

import tensorflow as tf

SPACES = {"tf": tf, "tf.nn": tf.nn, "tf.math": tf.math, "tf.linalg": tf.linalg, "tf.random": tf.random,
          "tf.signal": tf.signal, "tf.image": tf.image, "tf.data": tf.data,
          "tf.keras.optimizers": tf.keras.optimizers, "tf.keras.optimizers.schedules": tf.keras.optimizers.schedules,
          "tf.config": tf.config}

print(f'"""TF {tf.__version__}\'s public names per namespace, recorded by tf_names_recorder.py."""')
print()
print("TF_NAMES = {")
for key, space in SPACES.items():
    names = sorted(n for n in dir(space) if not n.startswith("_"))
    print(f"    {key!r}: {names!r},")
print("}")
print("TF_MODULES = {  # the names above that are modules (sub-namespaces)")
for key, space in SPACES.items():
    names = sorted(n for n in dir(space) if not n.startswith("_") and isinstance(getattr(space, n), types.ModuleType))
    print(f"    {key!r}: {names!r},")
print("}")
