"""`c += v` decided by the argument types: where `c` may be the caller's array or shared with
another name, NumPy's `+=` writes into that memory, so the version for arrays refuses it; for
Python numbers and NumPy scalars (immutable: `+=` rebinds) and for arrays the function made
itself, it is `c = c + v` in every mode. A tensor or dual number made from a number and one
made from an array are one type but two versions (a version for numbers ran for arrays: a
silently wrong Hessian from check_modes' mixed modes)."""

import numpy as np
import pytest

import dualtape.transforms as dt
from dualtape.testing import check_modes
from dualtape.transforms import TransformError


def rebinds_a_parameter(x, y):
    s = x
    s += y * 2.0
    return np.sum(s * s)


def in_a_loop(x, y):
    s = x
    for i in range(3):
        s += y * i
    return np.sum(s ** 2)


def alias_of_a_fresh_value(x):
    s = x * 1.0
    t = s
    s += x
    return np.sum(t * s)


def fresh_array(x, y):
    s = x * 1.0
    s += y * 2.0
    s *= x
    return np.sum(s)


NUMBERS = [(rebinds_a_parameter, (1.5, 2.0)), (rebinds_a_parameter, (np.float64(1.5), 2.0)),
           (in_a_loop, (1.5, 0.5)), (alias_of_a_fresh_value, (1.5,)), (alias_of_a_fresh_value, (np.float64(0.7),)),
           (fresh_array, (np.array([0.3, 0.7, 1.1]), 2.0)), (fresh_array, (1.5, np.array([0.3, 0.7])))]


@pytest.mark.parametrize("f, args", NUMBERS, ids=[f"{f.__name__}-{type(a[0]).__name__}" for f, a in NUMBERS])
def test_safe_types_accepted_in_every_mode(f, args):
    report = check_modes(f, list(args))
    assert not report.refused and report.checked, report


SHARED = [(rebinds_a_parameter, (np.array([1.5, 0.5]), 2.0), "its binding at line"),
          (rebinds_a_parameter, (np.array(1.5), 2.0), "its binding at line"),  # 0-d: `+=` writes into it
          (in_a_loop, (np.array([1.5, 0.5]), 0.5), "its binding at line"),
          (alias_of_a_fresh_value, (np.array([1.5, 0.5]),), "`t` (line")]


@pytest.mark.parametrize("f, args, why", SHARED, ids=[f"{f.__name__}-{np.ndim(a[0])}d" for f, a, _ in SHARED])
def test_shared_arrays_stay_refused(f, args, why):
    for make in (lambda: dt.grad(f)(*args), lambda: dt.jvp(f)(*args, np.ones_like(args[0])),
                 lambda: dt.hvp(f)(*args, np.ones_like(args[0]))):
        with pytest.raises(TransformError) as info:
            make()
        message = str(info.value)
        assert "writes into `s` in place when it is an array" in message and why in message, message


def test_version_for_traced_numbers_is_not_the_one_for_traced_arrays():
    check_modes(alias_of_a_fresh_value, [1.5])  # compiles the version for dual numbers made from floats
    report = check_modes(alias_of_a_fresh_value, [np.array([1.0, 1.0, 1.0])], raise_on_failure=False)
    assert not report.failures, report.failures
    assert "mixed.jvp_of_generated_grad" in report.refused and "transforms.grad" in report.refused
