"""transforms/optimize/hoist.py: loop-invariant arithmetic computed once before the loop, in the
versions compiled for known argument types (issue 13)."""

import math

import numpy as np

import dualtape.transforms as dt

SCALE = 9.81
STEP = 0.01


def damped(k, length, steps):
    x, v = 1.0, 0.0
    for _ in range(steps):
        a = -SCALE / length * math.sin(x) - k * v
        v = v + 0.5 * STEP * a
        x = x + STEP * v
    return x


def _general(df, *args):
    return df.module.compile(df.name)(*args)


def test_invariants_are_computed_once_and_the_values_are_the_general_versions():
    df = dt.grad(damped, wrt=(0, 1))
    source = df.source_for(0.3, 1.2, 50)
    assert "if steps > 0:  # (loop invariants)" in source  # (-SCALE / length may raise: guarded)
    loops = source.split("for _ in ")
    assert all("/ length" not in body.split("\n", 1)[1] for body in loops[1:2])  # not in the forward loop
    np.testing.assert_allclose(df(0.3, 1.2, 50), _general(df, 0.3, 1.2, 50), rtol=1e-13)


def test_a_loop_that_runs_zero_times_raises_nothing_new():
    df = dt.grad(damped, wrt=(0, 1))
    assert df(0.3, 0.0, 0) == _general(df, 0.3, 0.0, 0) == (0.0, 0.0)


def test_globals_are_read_as_the_general_version_reads_them():
    global SCALE
    df = dt.grad(damped, wrt=(0, 1))
    df(0.3, 1.2, 20)
    SCALE = 3.0
    try:
        np.testing.assert_allclose(df(0.3, 1.2, 20), _general(df, 0.3, 1.2, 20), rtol=1e-13)
    finally:
        SCALE = 9.81


def push(x):
    return x * 1.0


def calls_a_function(k, steps):
    x = 1.0
    for _ in range(steps):
        x = push(x) * (SCALE / 2.0) * k
    return x


def test_a_loop_calling_a_user_function_is_left_alone():
    df = dt.grad(calls_a_function)
    assert "loop invariants" not in df.source_for(0.5, 3)
    np.testing.assert_allclose(df(0.5, 3), _general(df, 0.5, 3), rtol=1e-13)
