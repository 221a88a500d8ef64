"""A user function that changes a list argument in place, called on a list the caller made and
nothing else holds (transforms/calls/list_arguments.py): read as a call of a version that
returns the changed list, which the caller rebinds. Every mode against every other, the tape
and finite differences; a list another name holds, or one the function returns, stays refused."""

import numpy as np
import pytest

import dualtape
import dualtape.transforms as dt
from dualtape.testing import check_modes
from dualtape.transforms import TransformError


def push(acc, v):
    acc.append(v * 1.0)


def take(acc):
    return acc.pop()


def push_twice(acc, v, scale=2.0):
    acc.append(v)
    acc.append(v * scale)
    return len(acc)


def keep(acc, v):
    acc.append(v)
    return acc


def pushed_and_taken(x, y):
    acc = [np.sin(x)]
    push(acc, y * x)
    s = np.sum(take(acc)) * np.sum(np.stack(acc))
    return s + np.sum(x)


def pushed_in_a_loop(x):
    acc = [x]
    for i in range(3):
        push(acc, acc[-1] * 0.5 + x)
    n = push_twice(acc, x * x)
    return np.sum(np.stack(acc) ** 2) * n


def aliased(x):
    acc = [x]
    other = acc
    push(acc, x * 2.0)
    return np.sum(np.stack(other))


def returned_list(x):
    acc = [x]
    held = keep(acc, x * 2.0)
    return np.sum(np.stack(held))


def into_a_parameter(acc, x):
    push(acc, x * 2.0)
    return np.sum(np.stack(acc))


def read_in_a_loop(x):  # (the checker's shrunk program, seed 2002: every mode gave 0)
    acc = [1.3]
    push(acc, x)
    a = take(acc) * 2.0
    r = 0.0
    for v in np.stack([a, 0.5]):
        r = r + v
    return r


def read_in_a_branch(x):
    acc = [np.where(x > 0.0, 1.3, 0.4)]
    push(acc, x)
    r = 0.0
    if x > 0.0:
        r = r + acc[1] * np.sum(np.stack(acc))
    return r


X, Y = np.array([0.3, 0.5]), np.array([1.2, -0.4])


@pytest.mark.parametrize("f", [read_in_a_loop, read_in_a_branch])
def test_a_list_the_call_changes_is_differentiated_in_the_loops_and_branches_after(f):
    """The loops and branches after `push(acc, x)` read `acc` as differentiated: the call makes
    it so, as `acc = push(acc, x)` would (they were left out of the sweep: a zero gradient)."""
    report = check_modes(f, [0.326])
    assert not report.refused and report.checked, report
    assert dt.grad(f)(0.326) == pytest.approx(dualtape.grad(f)(0.326), rel=1e-12) != 0.0


@pytest.mark.parametrize("f, args", [(pushed_and_taken, [X, Y]), (pushed_in_a_loop, [X])],
                         ids=["pushed_and_taken", "pushed_in_a_loop"])
def test_every_mode_agrees(f, args):
    report = check_modes(f, args)
    assert not report.refused and report.checked, report


def test_gradient_matches_the_tape():
    got = dt.grad(pushed_and_taken, argnums=(0, 1))(X, Y)
    for g, want in zip(got, dualtape.grad(pushed_and_taken, argnums=(0, 1))(X, Y)):
        np.testing.assert_allclose(g, want, rtol=1e-12)
    np.testing.assert_allclose(dt.grad(pushed_in_a_loop)(X), dualtape.grad(pushed_in_a_loop)(X), rtol=1e-12)


def test_the_generated_code_calls_the_version_and_rebinds_the_list():
    source = dt.grad(pushed_and_taken).source
    assert "= push_lists(acc, " in source and "acc = _push_lists_acc[1]" in source
    assert "def push_lists_vjp(acc_given, v, bout=1.0):" in source and "acc = acc_given[:]" in source


@pytest.mark.parametrize("f", [aliased, returned_list])
def test_a_list_another_name_holds_stays_refused(f):
    with pytest.raises(TransformError, match="changes its argument `acc` in place"):
        dt.grad(f)(X)


def test_the_callers_own_parameter_stays_refused():
    with pytest.raises(TransformError, match="changes its argument `acc` in place"):
        dt.grad(into_a_parameter, argnums=1)([X], X)


def test_saved_module_needs_only_numpy(tmp_path):
    path = tmp_path / "saved.py"
    dt.grad(pushed_in_a_loop).save(str(path))
    text = path.read_text()
    assert "import dualtape" not in text and "from dualtape" not in text
    namespace = {}
    exec(compile(text, str(path), "exec"), namespace)
    np.testing.assert_allclose(namespace["pushed_in_a_loop_vjp"](X), dualtape.grad(pushed_in_a_loop)(X), rtol=1e-12)


def taken_in_the_return(x):
    acc = [x, x * 3.0]
    return np.sum(take(acc) * np.stack(acc))


def test_a_call_in_the_returned_expression():
    report = check_modes(taken_in_the_return, [X])
    assert not report.refused and report.checked, report


def push_and_read(acc, other, v):
    acc.append(v)
    return np.sum(np.stack(other))


def passed_twice(x):
    acc = [x]
    s = push_and_read(acc, acc, x * 2.0)
    return s + np.sum(np.stack(acc))


def test_a_list_passed_twice_stays_refused():
    # inside the helper `other` is `acc` itself: it sees the append, a copy would not
    with pytest.raises(TransformError, match="changes its argument `acc` in place"):
        dt.grad(passed_twice)(X)
