"""Augmented assignment `c op= v`: Python floats rebind, NumPy arrays are written in place.

The transformer differentiates `c += v` as `c = c + v`. That is exactly NumPy's result when no
other variable shares `c`'s memory (a fresh array); where one may, the call is refused (see
test_transforms_errors.py). These tests check that every specialisation that runs computes
what NumPy computes: values, gradients (grad, vjp, jvp, hvp against finite differences of the
original function run on copies), and the caller's arrays left as NumPy leaves them.
"""

import numpy as np
import pytest

import dualtape.transforms as dt
from dualtape.transforms import TransformError
from test_transforms_corpus_functions import augmented

X = np.array([0.7, 1.3, 2.1])
B = np.array([0.4, -0.9, 1.6])
U = np.array([0.3, -1.0, 0.5])


def _copies(args):
    return [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]


def fd_grad(f, args, i, eps=1e-6):
    """Central differences of f (run on copies, so in-place writes cannot leak) w.r.t. args[i]."""
    x = args[i]
    if not isinstance(x, np.ndarray):
        hi, lo = _copies(args), _copies(args)
        hi[i], lo[i] = x + eps, x - eps
        return (np.asarray(f(*hi)) - np.asarray(f(*lo))) / (2 * eps)
    out = np.zeros(np.shape(f(*_copies(args))) + x.shape)
    for idx in np.ndindex(x.shape):
        hi, lo = _copies(args), _copies(args)
        hi[i][idx] += eps
        lo[i][idx] -= eps
        out[(Ellipsis,) + idx] = (np.asarray(f(*hi)) - np.asarray(f(*lo))) / (2 * eps)
    return out


def check_all_modes(f, args, i=0):
    """grad, vjp, jvp and hvp of a scalar f w.r.t. args[i] against finite differences; the
    caller's arrays stay untouched (NumPy leaves them alone: nothing in f shares them)."""
    before = _copies(args)
    g = fd_grad(f, args, i)
    u = U if isinstance(args[i], np.ndarray) else 0.7
    got = dt.grad(f, wrt=i)(*args)
    assert np.allclose(got, g, rtol=1e-6, atol=1e-6), (got, g)
    assert np.allclose(dt.vjp(f, wrt=i)(*args, 2.0), 2.0 * g, rtol=1e-6, atol=1e-6)
    value, tangent = dt.jvp(f, wrt=i)(*args, u)
    assert np.isclose(value, f(*_copies(args)))
    assert np.isclose(tangent, np.sum(g * u), rtol=1e-6, atol=1e-6)
    hv = dt.hvp(f, wrt=i)(*args, u)
    dg = dt.grad(f, wrt=i)

    def shifted(s):
        return dg(*[a + s * u if k == i else a for k, a in enumerate(_copies(args))])

    assert np.allclose(hv, (shifted(1e-6) - shifted(-1e-6)) / 2e-6, rtol=1e-4, atol=1e-5)
    for a, b in zip(args, before):
        assert np.array_equal(a, b), "the generated code changed the caller's array"


def _in_place_lines(source):
    """Generated lines (not comments) that write in place: `x += ...`, `x *= ...`, ..."""
    return [line for line in source.splitlines() if not line.strip().startswith("#")
            and any(f" {op}= " in line for op in "+-*/")]


# -- floats: `+=` rebinds (the corpus function `augmented`) ----------------------------------------
def test_augmented_on_floats_keeps_rebinding_semantics():
    for i in (0, 1):
        check_all_modes(augmented, [1.3, 0.8], i)
    source = dt.grad(augmented, wrt=(0, 1)).source_for(1.3, 0.8)
    assert "c = a" in source and not _in_place_lines(source)


def test_augmented_with_a_float_and_an_array_is_numpys_answer():
    """`c = a` (a float) then `c += b` (an array): a new array, so nothing is shared."""
    before = B.copy()
    value, tangent = dt.jvp(augmented, wrt=1)(1.3, B, U)
    assert np.allclose(value, augmented(1.3, B.copy()))
    assert np.allclose(tangent, fd_grad(augmented, [1.3, B], 1) @ U, rtol=1e-6, atol=1e-6)
    dy = np.array([1.0, -2.0, 0.5])
    assert np.allclose(dt.vjp(augmented, wrt=1)(1.3, B, dy), dy @ fd_grad(augmented, [1.3, B], 1),
                       rtol=1e-6, atol=1e-6)
    assert np.isclose(dt.vjp(augmented, wrt=0)(1.3, B, dy), dy @ fd_grad(augmented, [1.3, B], 0), rtol=1e-6)
    assert np.array_equal(B, before)


@pytest.mark.parametrize("api", ["grad", "vjp", "jvp", "hvp"])
def test_augmented_on_arrays_is_refused_and_changes_nothing(api):
    """NumPy would write `c += b` into the caller's `a`: refused, naming `c = a` and the fix."""
    a, b = X.copy(), B.copy()
    extra = {"grad": (), "vjp": (np.ones(3),), "jvp": (U,), "hvp": (U,)}[api]
    f = getattr(dt, api)(lambda_free_sum if api in ("grad", "hvp") else augmented, wrt=0)
    with pytest.raises(TransformError, match=r"`c \+= b` writes into `c` in place.*`c = a`.*\n.*c = a.copy\(\)"):
        f(a, b, *extra)
    assert np.array_equal(a, X) and np.array_equal(b, B)


def lambda_free_sum(a, b):
    c = a
    c += b
    c *= a
    c -= 0.5 * b
    c /= 1.0 + b
    return np.sum(c)


# -- the example of the bug report: `z = y; y += x` -------------------------------------------------
def shared_then_aug(x):
    y = x * 1.0
    z = y
    y += x
    return np.sum(z * z)


def test_shared_then_aug_floats_rebind_and_arrays_are_refused():
    check_all_modes(shared_then_aug, [1.3])  # floats: z stays x, the gradient is 2x
    assert np.isclose(dt.grad(shared_then_aug)(1.3), 2.6)
    for api, extra in (("grad", ()), ("vjp", (1.0,)), ("jvp", (U,)), ("hvp", (U,))):
        with pytest.raises(TransformError, match=r"`z` \(line \d+: `z = y`\) may share memory with `y`"):
            getattr(dt, api)(shared_then_aug)(X.copy(), *extra)  # NumPy: z is 2x, gradient 8x


# -- fresh arrays: allowed everywhere, and the generated code writes into nothing else -------------
def fresh_aug(a, b):
    c = a * 1.0
    c += b
    c *= a
    c -= 0.5 * b
    c /= 1.0 + b * b
    return np.sum(c * a)


def fresh_aug_loop(x):
    c = x * 1.0
    s = 0.0
    for i in range(3):
        c += x
        s += c * x
    return np.sum(s)


def fresh_aug_unpacked(a, b):
    c, d = a * b, a + b
    c += d
    d *= c
    return np.sum(c * d)


def scalar_or_fresh(x, flag):
    if flag:
        c = 2.0
    else:
        c = x * 1.0
    c += x
    return np.sum(c * x)


def reduction_then_aug(x):
    c = np.sum(x)
    d = c
    c += 1.0
    return c * d


@pytest.mark.parametrize("f, args, i", [
    (fresh_aug, [X, B], 0), (fresh_aug, [X, B], 1), (fresh_aug, [1.3, 0.8], 0),
    (fresh_aug_loop, [X], 0), (fresh_aug_unpacked, [X, B], 0), (fresh_aug_unpacked, [X, B], 1),
    (scalar_or_fresh, [X, True], 0), (scalar_or_fresh, [X, False], 0), (reduction_then_aug, [X], 0),
], ids=lambda v: getattr(v, "__name__", None))
def test_aug_on_fresh_values_matches_finite_differences(f, args, i):
    check_all_modes(f, args, i)


def test_fresh_aug_generated_code_writes_in_place_nowhere():
    source = dt.grad(fresh_aug, wrt=(0, 1)).source
    assert "c = a * 1.0" in source and not _in_place_lines(source)


# -- inactive arrays: `c += 1.0` must not change the value the backward sweep saved -----------------
def inactive_aug(x):
    c = np.ones(3)
    r = np.sum(x * c)
    c += 1.0
    return r + np.sum(x * c)


def inactive_aug_loop(x):
    c = np.ones(3)
    s = 0.0
    for i in range(3):
        s = s + np.sum(x * c)
        c *= 2.0
    return s


def inactive_subscript_aug(x):
    a = np.ones(3)
    r = np.sum(x * a)
    a[0] += 1.0
    return r + np.sum(a * x)


@pytest.mark.parametrize("f", [inactive_aug, inactive_aug_loop, inactive_subscript_aug],
                         ids=lambda f: f.__name__)
def test_inactive_aug_is_not_read_back_modified(f):
    check_all_modes(f, [X])


# -- `s = x; s += y` on scalar arguments, in every mode (issue 19) ----------------------------------
# The versions per argument type decide it from the argument types: Python floats and NumPy
# scalars rebind, so it runs in grad, vjp, jvp, batched jvp and hvp. The mixed modes (dualtape.jvp
# or a functional tape of the generated gradient) pass dual numbers or tensors for those floats:
# they were read as arrays and refused (`v += v` writes into `v` in place when it is an array, ...),
# though the functional API rebinds a number argument too (lib/forward/inplace.py); such a
# value is now a "traced number". An array argument, traced or not, stays refused.
def rebound_sum(x, y):
    s = x
    s += y
    return s * s


def rebound_in_a_loop(x, y):
    s = x
    t = s
    for i in range(3):
        s *= y
        s -= 0.1 * x
    return s * t


def rebound_in_a_branch(x, y):
    s = x
    if y > 0:
        s += y * y
    else:
        s /= y
    return np.sin(s) * x


def _plus(a, b):
    s = a
    s += b
    return s


def rebound_in_a_helper(x, y):
    return _plus(x, y) * x


REBOUND = [rebound_sum, rebound_in_a_loop, rebound_in_a_branch, rebound_in_a_helper]
SOURCE_MODES = ("transforms.grad", "transforms.vjp", "transforms.jvp", "transforms.jvp_batched", "transforms.hvp")


@pytest.mark.parametrize("f", REBOUND, ids=[f.__name__ for f in REBOUND])
@pytest.mark.parametrize("args", [[1.3, 0.8], [np.float64(0.6), np.float64(-1.7)]], ids=["float", "float64"])
def test_aug_on_scalar_arguments_runs_in_every_mode(f, args):
    from dualtape.testing import check_modes
    report = check_modes(f, args)  # raises on a wrong number or a crash in any mode
    assert report.refused == {}, report.refused
    assert set(SOURCE_MODES) | {"mixed.jvp_of_generated_grad", "mixed.tape_of_generated_grad"} <= set(report.checked)


def test_aug_on_an_array_argument_stays_refused():
    import dualtape.functional as F
    with pytest.raises(TransformError, match=r"`s \+= y` writes into `s` in place when it is an array"):
        dt.grad(rebound_sum, argnums=1)(X.copy(), 0.8)  # s is the caller's array: NumPy changes it
    dg = dt.grad(shared_then_aug)
    with pytest.raises(TransformError, match=r"`z` \(line \d+: `z = y`\) may share memory with `y`"):
        F.jvp(dg, (X.copy(),), (U,))  # dual numbers holding an array: NumPy's z would change


# -- a loop that surely runs rebinds (issue 19, the program checker, seed 11) -------------------------
# `dx = vv1; for t in range(2): dx = dx + ...; dx **= 2`: after a loop of constant positive length
# with no break, dx holds the last pass's fresh array, never vv1 (the closure's), so `**=` is safe;
# the check joined the entry state as if the loop might not run and refused.
def _closing_over(vv1):
    def f(x):
        dx = vv1
        for t in range(2):
            dx = dx + 0.164 * np.sin(dx) * x
        dx **= 2
        return np.sum(dx) * x
    return f


def _closing_over_no_pass(vv1):
    def f(x):
        dx = vv1
        for t in range(0):
            dx = dx + 0.164 * np.sin(dx) * x
        dx **= 2
        return np.sum(dx) * x
    return f


def _closing_over_with_break(vv1):
    def f(x):
        dx = vv1
        for t in range(2):
            if x > 0.0:
                break
            dx = dx + 0.164 * np.sin(dx) * x
        dx **= 2
        return np.sum(dx) * x
    return f


RUNS_TWICE = _closing_over(np.array([-0.5, 0.7]))


def test_aug_after_a_loop_that_surely_runs_in_every_mode():
    from dualtape.testing import check_modes
    report = check_modes(RUNS_TWICE, [0.3])
    assert report.refused == {}, report.refused


@pytest.mark.parametrize("f", [_closing_over_no_pass(np.array([-0.5, 0.7])), _closing_over_with_break(np.array([-0.5, 0.7]))],
                         ids=["no_pass", "break"])
def test_aug_after_a_loop_that_may_not_rebind_stays_refused(f):
    with pytest.raises(TransformError, match=r"`dx \*\*= 2` writes into `dx` in place when it is an array"):
        dt.grad(f)(0.3)  # NumPy would square the closure's array
