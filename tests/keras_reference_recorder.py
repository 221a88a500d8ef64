"""Record the reference values of tests/test_optimizers.py from Keras (not a test).

Run in a throwaway virtualenv that has TensorFlow (never a dependency of dualtape):

    python3 -m venv /tmp/kerasvenv && /tmp/kerasvenv/bin/pip install tensorflow-cpu
    /tmp/kerasvenv/bin/python tests/keras_reference_recorder.py > /tmp/refs.py

Every case feeds the same fixed gradients (multiples of 1/16, exact in float32) to two
variables for four steps and prints the variables after each step, in the shortest
decimal that round-trips in the variable's dtype.
"""

import pathlib
import sys

import keras
import numpy as np
import tensorflow as tf

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from optimizer_cases import (B0, CASES, FLOAT64, NONE_GRAD, SCHEDULED_FLOAT64, SCHEDULES, STEPS, W0,  # noqa: E402
                             fixed_grads)

S = keras.optimizers.schedules


def short(x, dtype):
    return str(np.float32(x)) if dtype == "float32" else repr(float(x))


def run(name, kwargs, dtype="float32", none_at=None, schedule=None):
    if schedule is not None:
        kwargs = dict(kwargs, learning_rate=getattr(S, schedule[0])(**schedule[1]))
    opt = getattr(keras.optimizers, name)(**kwargs)
    w = tf.Variable(np.array(W0, dtype))
    b = tf.Variable(np.array(B0, dtype))
    gw, gb = fixed_grads(dtype)
    out = []
    for k in range(STEPS):
        g_b = None if k == none_at else tf.constant(gb[k])
        opt.apply_gradients(zip([tf.constant(gw[k]), g_b], [w, b]))
        out.append(([short(x, dtype) for x in w.numpy().ravel()],
                    [short(x, dtype) for x in b.numpy().ravel()]))
    assert int(opt.iterations.numpy()) == STEPS
    return out


def fmt(steps):
    rows = ("        ([" + ", ".join(w) + "],\n         [" + ", ".join(b) + "])," for w, b in steps)
    return "[\n" + "\n".join(rows) + "\n    ]"


def main():
    print(f"# TensorFlow {tf.__version__}, Keras {keras.__version__}, NumPy {np.__version__}")
    print("FLOAT32 = {")
    for case, (name, kwargs) in CASES.items():
        print(f"    {case!r}: {fmt(run(name, kwargs))},")
    print("}")
    print("FLOAT64 = {")
    for case in FLOAT64:
        name, kwargs = CASES[case]
        print(f"    {case!r}: {fmt(run(name, kwargs, 'float64'))},")
    print("}")
    print("NONE_GRAD = {  # b has no gradient at step 2 (index 1)")
    for case in NONE_GRAD:
        name, kwargs = CASES[case]
        print(f"    {case!r}: {fmt(run(name, kwargs, none_at=1))},")
    print("}")
    print("SCHEDULE_VALUES = {  # steps 0..7")
    for case, (name, kwargs) in SCHEDULES.items():
        sched = getattr(S, name)(**kwargs)
        values = ", ".join(short(sched(k).numpy(), "float32") for k in range(8))
        print(f"    {case!r}: [{values}],")
    print("}")
    print("SCHEDULED_ADAM = {  # Adam(learning_rate=schedule)")
    for case, spec in SCHEDULES.items():
        print(f"    {case!r}: {fmt(run('Adam', {}, schedule=spec))},")
    print("}")
    print("SCHEDULED_ADAM_FLOAT64 = {")
    for case in SCHEDULED_FLOAT64:
        print(f"    {case!r}: {fmt(run('Adam', {}, 'float64', schedule=SCHEDULES[case]))},")
    print("}")


if __name__ == "__main__":
    main()
