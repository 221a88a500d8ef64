"""Snapshot tests: the exact emitted source for a dozen small functions.

A diff in tests/golden/*.py *is* the change in readability; review it like code.
Regenerate with `DUALTAPE_UPDATE_GOLDEN=1 pytest tests/test_transforms_golden.py`.
"""

import math
import os
import pathlib

import numpy as np
import pytest

import dualtape.transforms as dt

GOLDEN = pathlib.Path(__file__).parent / "golden"


def assert_golden(name, source):
    """`source` is tests/golden/<name>.py, byte for byte, and compiles (DUALTAPE_UPDATE_GOLDEN=1
    writes it instead)."""
    path = GOLDEN / f"{name}.py"
    if os.environ.get("DUALTAPE_UPDATE_GOLDEN") or not path.exists():
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(source)
    assert source == path.read_text(), f"generated source of {name} changed; review and regenerate"
    compile(source, str(path), "exec")


def style_example(x, y):
    z = x * y
    s = np.sin(z)
    w = s + x
    return w


def branch(a):
    if a > 1.0:
        b = a * a
    else:
        b = math.sin(a)
    return b + a


def loop(a, n):
    s = 0.0
    for i in range(n):
        s = s + math.sin(a * i)
    return s


def helper(a, b):
    return a * math.cos(b)


def calls_helper(a, b):
    c = helper(a, b)
    return c * c


def while_loop(a):
    s = a
    while s < 10.0:
        s = s * 1.5
    return s


def loop_break(a, n):
    s = a
    for i in range(n):
        s = s * 1.3
        if s > 2.5:
            break
    return s


def subscript_write(x):
    y = x * 1.0
    y[0] = x[1] * x[2]
    return np.sum(y * y)


def tuple_swap(a, b):
    p, q = a, b
    for _ in range(3):
        p, q = q, p + q
    return p


def early_return(a):
    if a > 1.0:
        return a * a
    return math.exp(a)


def reductions(m):
    return np.sum(np.mean(m, axis=0) ** 2)


def inactive(a, n):
    k = n * 2
    unused = math.exp(a)  # noqa: F841
    return a * k


def mlp(w1, b1, w2, x):
    h = np.tanh(x @ w1 + b1)
    return np.mean((h @ w2) ** 2)


CASES = {
    "style_example": (style_example, (0, 1), None),
    "style_example_floats": (style_example, (0, 1), (1.0, 2.0)),
    "branch": (branch, 0, (1.0,)),
    "loop": (loop, 0, (1.0, 3)),
    "calls_helper": (calls_helper, (0, 1), (1.0, 2.0)),
    "while_loop": (while_loop, 0, (1.0,)),
    "loop_break": (loop_break, 0, (1.0, 5)),
    "subscript_write": (subscript_write, 0, None),
    "tuple_swap": (tuple_swap, (0, 1), (1.0, 2.0)),
    "early_return": (early_return, 0, (1.0,)),
    "reductions": (reductions, 0, None),
    "inactive": (inactive, 0, (1.0, 2)),
    "mlp": (mlp, (0, 1, 2), None),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_source(name):
    fn, wrt, args = CASES[name]
    df = dt.grad(fn, wrt=wrt)
    source = df.source if args is None else df.source_for(*args)
    assert_golden(name, source)


def test_generated_code_has_no_tape_calls():
    for fn, wrt, args in CASES.values():
        source = dt.grad(fn, wrt=wrt).source
        assert "GradientTape" not in source and "dispatch" not in source


def test_scalar_specialization_drops_unbroadcast():
    source = dt.grad(style_example, wrt=(0, 1)).source_for(1.0, 2.0)
    assert "unbroadcast" not in source and "math.cos" in source


def concat_constant(x):
    return np.sum(np.sin(np.concatenate([x, [1.0]])))


def sum_rows(m, v):
    return np.sum(np.tanh(m @ v), axis=0)


# Forward mode and hvp (issue #6): (function, mode, wrt, specialization args or None).
# `tangents` in the args select the layout: one direction, or k on a leading axis (batch).
FORWARD_CASES = {
    "jvp_style_example": (style_example, "jvp", (0, 1), None),
    "jvp_loop_floats": (loop, "jvp", 0, (0.5, 3, 1.0)),
    "jvp_branch_floats": (branch, "jvp", 0, (2.0, 1.0)),
    "jvp_concat_constant": (concat_constant, "jvp", 0, None),
    "jvp_sum_rows_batch": (sum_rows, "jvp", 0, (np.ones((2, 3)), np.ones(3), np.ones((6, 2, 3)))),
    "hvp_style_example_floats": (style_example, "hvp", (0, 1), (1.0, 2.0, (1.0, 0.0))),
    "hvp_calls_helper_floats": (calls_helper, "hvp", (0, 1), (1.0, 2.0, (1.0, 0.0))),
    "hvp_mlp": (mlp, "hvp", (0, 1, 2), None),
}


@pytest.mark.parametrize("name", sorted(FORWARD_CASES))
def test_golden_forward_source(name):
    fn, mode, wrt, args = FORWARD_CASES[name]
    transformed = (dt.jvp if mode == "jvp" else dt.hvp)(fn, wrt=wrt)
    source = transformed.source if args is None else transformed.source_for(*args)
    assert_golden(name, source)
