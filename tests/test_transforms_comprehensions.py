"""List comprehensions over differentiated values, written as the loop that builds the list
(transforms/frontend/comprehensions.py): `if` filters, nested `for`s, comprehensions in the item
(lists of lists), inside a larger expression; every mode against every other, the tape and
finite differences (dualtape.testing.check_modes)."""

import numpy as np
import pytest

import dualtape
import dualtape.transforms as dt
from dualtape.testing import check_modes
from dualtape.transforms import TransformError


def filtered(x, w):
    ys = [x * w[i] for i in range(3) if i != 1]
    return np.sum(np.stack(ys) ** 2)


def inside_an_expression(x, w):
    s = np.sum(np.stack([np.sin(x * v) for v in w]))
    return s * x


def nested_lists(x, w):
    m = [[x * a * b for b in w] for a in range(2)]
    return np.sum(np.stack([np.stack(r) for r in m]) ** 2)


def two_fors(x, w):
    t = [x * a + b for a in range(2) for b in w if b > 0]
    return np.sum(np.stack(t) ** 2)


def variable_does_not_leak(x, w):
    i = 5.0
    ys = [x * w * i for i in range(3)]
    return np.sum(np.stack(ys)) * i


def reads_its_target(x, w):
    ys = [x * w, x + w]
    ys = [np.sin(y) * x for y in ys]
    return np.sum(ys[0] * ys[1])


CASES = [filtered, inside_an_expression, nested_lists, two_fors, variable_does_not_leak, reads_its_target]


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_every_mode_agrees(f):
    report = check_modes(f, [0.7, np.array([0.3, -0.2, 1.1])])
    assert not report.refused and not report.skipped and report.checked, report


def test_gradient_matches_the_tape():
    args = (0.7, np.array([0.3, -0.2, 1.1]))
    for f in CASES:
        for mine, tape in zip(dt.grad(f, argnums=(0, 1))(*args), dualtape.grad(f, argnums=(0, 1))(*args)):
            np.testing.assert_allclose(mine, tape, rtol=1e-12)


def test_variable_keeps_its_value_after():
    # Python's comprehension variable is local to it: the outer `i` stays 5.0
    assert dt.grad(variable_does_not_leak)(1.0, np.ones(3)) == pytest.approx(5.0 * 3 * 3)


def maybe_evaluated(x):
    ys = [v * v for v in x] if x[0] > 0 else [x]
    return ys[0]


def test_comprehension_python_may_skip_stays_refused():
    with pytest.raises(TransformError, match="a list comprehension over differentiated values"):
        dt.grad(maybe_evaluated)(np.ones(3))


M_CONST = np.array([[0.586, -0.959, 0.388], [-0.663, 0.734, -0.4], [0.0, -1.0, -0.103]])


def display_plus_comprehension(x):
    # `[a] + [... for k in ...]` is list concatenation: the display is not an array operand
    dx = [np.linalg.inv(x)] + [np.log(1.0 + M_CONST * M_CONST) * (k + 1.0) for k in range(3)]
    return np.sum(dx[3] + np.sin(dx[0]))


def sorted_plus_display(x):
    dx = sorted([x[0, 0], x[1, 1]]) + [x[2, 2] * 2.0]
    return dx[0] * dx[2] + dx[1]


@pytest.mark.parametrize("f", [display_plus_comprehension, sorted_plus_display])
def test_a_display_added_to_a_comprehension_or_sorted_list_is_concatenation(f):
    report = check_modes(f, [np.eye(3) * 2.0 + 0.1])
    assert not report.refused and report.checked, report


def inactive_comprehension_in_a_loop(x, w):
    s = 0.0
    for i in range(2):
        scales = [k + i + 1.0 for k in range(2)]  # kept as written: its `k` is its own
        s = s + np.sum(x * w * scales[1]) ** 2
    return s


def variable_named_like_an_outer_one(x, w):
    k = np.sum(w)
    ys = [x * (k + 1.0) for k in range(3)]  # (renamed: not forward mode's batch size `_k`)
    return np.sum(ys[1] * x) * k


@pytest.mark.parametrize("f", [inactive_comprehension_in_a_loop, variable_named_like_an_outer_one])
def test_comprehension_variables_keep_their_scope(f):
    """The backward sweep's recomputation of a loop body neither saves nor renames a
    comprehension's own variables; a renamed one never takes a name generated code binds."""
    report = check_modes(f, [np.array([0.3, 0.7]), np.array([1.1, -0.4])])
    assert not report.refused and report.checked, report
    got = dt.hessian(f, argnums=(0, 1))(np.array([0.3, 0.7]), np.array([1.1, -0.4]))
    expected = dualtape.hessian(f, argnums=(0, 1))(np.array([0.3, 0.7]), np.array([1.1, -0.4]))
    for g, e in zip(np.ravel(np.asarray(got, dtype=object)), np.ravel(np.asarray(expected, dtype=object))):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
