"""Derivatives of the function NumPy computes, where a textbook formula differs (issue 19).

`np.linalg.eigh` / `eigvalsh` read one triangle of their input (UPLO='L': the lower one,
mirrored), and so does `np.linalg.cholesky` (the lower one; upper=True: the upper one, whose
factor it returns), so on a non-symmetric matrix the value and every derivative are those of
that triangle; `x ** 0` is 1 for every x, 0 included, so its slope is 0 there, where the formula
y * x ** (y - 1) reads 0 * inf. Every mode is checked against central differences by
`dualtape.testing.check_modes` (tape, dualtape.grad / jvp / hvp, transforms.grad / jvp / hvp,
and the mixed modes).
"""

import numpy as np
import pytest

import dualtape as dt
import dualtape.transforms as T
from dualtape.core import dnp
from dualtape.testing import check_modes

try:
    import scipy.linalg
    import scipy.stats
except ImportError:  # (the SciPy checks are skipped)
    scipy = None

RNG = np.random.default_rng(19)
NONSYMMETRIC = RNG.standard_normal((3, 3)) + np.diag([0.0, 3.0, 6.0])  # eigenvalues apart
ALL_MODES = {"tape", "functional.grad", "functional.jvp", "functional.hvp", "transforms.grad",
             "transforms.jvp", "transforms.hvp", "mixed.jvp_of_generated_grad"}


def eigvalsh_lower(a):
    return np.sum(np.linalg.eigvalsh(a) ** 3)


def eigvalsh_upper(a):
    return np.sum(np.linalg.eigvalsh(a, UPLO="U") ** 3)


def eigh_vectors_lower(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w * v[0] ** 2) + np.sum(v[:, 1] ** 4)


def eigh_vectors_upper(a):
    w, v = np.linalg.eigh(a, UPLO="U")
    return np.sum(w * v[0] ** 2) + np.sum(v[:, 1] ** 4)


@pytest.mark.parametrize("f", [eigvalsh_lower, eigvalsh_upper, eigh_vectors_lower, eigh_vectors_upper])
def test_eigh_of_a_nonsymmetric_matrix_differentiates_the_triangle_numpy_reads(f):
    # the modes differentiated the symmetric part (a + a^T) / 2: a different value (189.8 vs
    # NumPy's 213.8 for eigvalsh_lower) and a gradient in both triangles
    report = check_modes(f, [NONSYMMETRIC])
    assert ALL_MODES <= set(report.checked)


@pytest.mark.parametrize("uplo,unread", [("L", np.triu_indices(3, 1)), ("U", np.tril_indices(3, -1)),
                                         ("l", np.triu_indices(3, 1))])
def test_eigh_gradient_lives_in_the_read_triangle(uplo, unread):
    def f(a):
        return np.sum(np.linalg.eigvalsh(a, UPLO=uplo) ** 3)

    value = f(NONSYMMETRIC)
    grad = dt.grad(f)(NONSYMMETRIC)
    np.testing.assert_array_equal(grad[unread], 0.0)
    np.testing.assert_allclose(dt.value_and_grad(f)(NONSYMMETRIC)[0], value, rtol=1e-13)
    # the read triangle: the symmetric cotangent folded onto it (off-diagonal entries twice)
    w, v = np.linalg.eigh(NONSYMMETRIC, UPLO=uplo)
    s = v @ np.diag(3 * w ** 2) @ v.T
    folded = 2 * s - np.diag(np.diag(s))
    read = np.tril_indices(3) if uplo.upper() == "L" else np.triu_indices(3)
    np.testing.assert_allclose(grad[read], folded[read], rtol=1e-10)


def test_eigh_refuses_an_unknown_triangle_by_name():
    with pytest.raises(ValueError, match=r"SelfAdjointEig.*UPLO must be 'L' or 'U'.*'X'"):
        dt.grad(lambda a: np.sum(np.linalg.eigvalsh(a, UPLO="X")))(NONSYMMETRIC)


SPD = RNG.standard_normal((3, 3))
SPD = SPD @ SPD.T + 3.0 * np.eye(3)
CHOL_LOWER = np.tril(SPD) + np.triu(RNG.standard_normal((3, 3)), 1)  # the upper triangle is noise NumPy ignores
CHOL_UPPER = np.triu(SPD) + np.tril(RNG.standard_normal((3, 3)), -1)
C3 = RNG.standard_normal((3, 3))


def cholesky_lower(a):
    return np.sum(np.linalg.cholesky(a) ** 3 * C3)


def cholesky_upper(a):
    return np.sum(np.linalg.cholesky(a, upper=True) ** 3 * C3)


def cholesky_upper_false(a):
    return np.sum(np.linalg.cholesky(a, upper=False) * C3) + np.sum(np.log(np.diagonal(np.linalg.cholesky(a))))


@pytest.mark.parametrize("f,a", [(cholesky_lower, CHOL_LOWER), (cholesky_upper, CHOL_UPPER),
                                 (cholesky_upper_false, CHOL_LOWER), (cholesky_lower, SPD), (cholesky_upper, SPD)])
def test_cholesky_of_a_nonsymmetric_matrix_differentiates_the_triangle_numpy_reads(f, a):
    # the modes differentiated the symmetric part (a + a^T) / 2: another value than NumPy's and,
    # along a non-symmetric direction, another derivative; upper=True was refused by the transformer
    report = check_modes(f, [a])
    assert ALL_MODES <= set(report.checked)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_value_and_gradient_live_in_the_read_triangle(upper):
    a = CHOL_UPPER if upper else CHOL_LOWER
    f = cholesky_upper if upper else cholesky_lower
    np.testing.assert_allclose(dnp.linalg_cholesky(a, upper=upper), np.linalg.cholesky(a, upper=upper), rtol=1e-13)
    direction = RNG.standard_normal((3, 3))
    numeric = (f(a + 1e-6 * direction) - f(a - 1e-6 * direction)) / 2e-6
    for grad in (dt.grad(f)(a), T.grad(f)(a)):
        np.testing.assert_array_equal(grad[np.tril_indices(3, -1) if upper else np.triu_indices(3, 1)], 0.0)
        np.testing.assert_allclose(np.sum(grad * direction), numeric, rtol=1e-7)
    for tangent in (dt.jvp(f, (a,), (direction,))[1], T.jvp(f)(a, direction)[1]):
        np.testing.assert_allclose(tangent, numeric, rtol=1e-7)


def solve_triangular_modes(a, b):
    from dualtape.scipy import linalg  # noqa: PLC0415
    return (np.sum(linalg.solve_triangular(a, b, lower=True) ** 2)
            + np.sum(linalg.solve_triangular(a, b, trans=1) ** 3)
            + np.sum(linalg.solve_triangular(a, b, lower=True, unit_diagonal=True)))


def solve_triangular_scipy(a, b):  # the transformer maps SciPy's spelling
    return (np.sum(scipy.linalg.solve_triangular(a, b, lower=True) ** 2)
            + np.sum(scipy.linalg.solve_triangular(a, b, trans=1) ** 3)
            + np.sum(scipy.linalg.solve_triangular(a, b, lower=True, unit_diagonal=True)))


def scipy_cholesky_modes(a):
    from dualtape.scipy import linalg  # noqa: PLC0415
    return np.sum(linalg.cholesky(a) ** 3 * C3) + np.sum(linalg.cholesky(a.T, lower=True) * C3)


def test_scipy_ops_that_read_one_triangle_differentiate_the_triangle_they_read():
    if scipy is None:
        pytest.skip("needs SciPy")
    full = RNG.standard_normal((3, 3)) + 3.0 * np.eye(3)  # neither triangular nor symmetric
    b = RNG.standard_normal(3)
    check_modes(solve_triangular_modes, [full, b], modes=("tape", "functional.grad", "functional.jvp",
                                                          "functional.hvp"))
    report = check_modes(solve_triangular_scipy, [full, b], modes=("transforms.grad", "transforms.jvp",
                                                                   "transforms.hvp"))
    assert report.checked == ["transforms.grad", "transforms.jvp", "transforms.hvp"]
    # scipy.linalg.cholesky reads the upper triangle (lower=True: the lower one)
    np.testing.assert_allclose(scipy_cholesky_modes(CHOL_UPPER), np.sum(scipy.linalg.cholesky(CHOL_UPPER) ** 3 * C3)
                               + np.sum(scipy.linalg.cholesky(CHOL_UPPER.T, lower=True) * C3), rtol=1e-12)
    check_modes(scipy_cholesky_modes, [CHOL_UPPER], modes=("tape", "functional.grad", "functional.jvp",
                                                           "functional.hvp"))


MVN_X = RNG.standard_normal((4, 3))


def mvn_logpdf(x, mean, cov):
    from dualtape.scipy.stats import multivariate_normal  # noqa: PLC0415
    return np.sum(multivariate_normal.logpdf(x, mean, cov))


def mvn_logpdf_scipy(x, mean, cov):  # the transformer maps SciPy's spelling
    return np.sum(scipy.stats.multivariate_normal.logpdf(x, mean, cov))


def test_multivariate_normal_reads_the_lower_triangle_of_cov_as_scipy():
    # scipy.stats.multivariate_normal factors cov by scipy.linalg.eigh(cov, lower=True): its
    # upper triangle is never read; the op read the symmetric part (-5.0048 vs SciPy's -5.0000)
    if scipy is None:
        pytest.skip("needs SciPy")
    mean = RNG.standard_normal(3)
    np.testing.assert_allclose(mvn_logpdf(MVN_X, mean, CHOL_LOWER),
                               np.sum(scipy.stats.multivariate_normal.logpdf(MVN_X, mean, CHOL_LOWER)), rtol=1e-12)
    report = check_modes(mvn_logpdf, [MVN_X, mean, CHOL_LOWER], modes=("tape", "functional.grad", "functional.jvp",
                                                                        "functional.hvp"))
    assert len(report.checked) == 4
    report = check_modes(mvn_logpdf_scipy, [MVN_X, mean, CHOL_LOWER], modes=("transforms.grad", "transforms.jvp",
                                                                              "transforms.hvp"))
    assert len(report.checked) == 3
    grad = dt.grad(mvn_logpdf, argnums=2)(MVN_X, mean, CHOL_LOWER)
    np.testing.assert_array_equal(grad[np.triu_indices(3, 1)], 0.0)


def power_zero_exponents(x):
    return np.sum(x ** 0 * x) + np.sum(np.power(x, 0) * np.sin(x)) + np.sum(x ** 0.0 + np.power(x, 0.0))


def power_array_exponent(x, y):
    return np.sum(np.power(x, y) * np.cos(y))


def power_zero(x):
    return np.sum(x ** 0)


def power_three_and_zero(x):
    return np.sum(x ** 3 + x ** 0)


def test_power_with_a_zero_exponent_has_slope_zero_at_zero():
    # d(x ** 0)/dx is 0 everywhere; the rule's 0 * 0 ** -1 gave NaN at x = 0 in every mode
    x = np.array([0.0, 1.5, -2.0])
    report = check_modes(power_zero_exponents, [x])
    assert ALL_MODES <= set(report.checked)
    np.testing.assert_array_equal(dt.grad(lambda x: np.sum(np.power(x, 0.0)))(x), 0.0)
    np.testing.assert_array_equal(T.grad(power_zero)(x), 0.0)
    _, tangent = dt.jvp(lambda x: x ** 0.0, (x,), (np.ones(3),))
    np.testing.assert_array_equal(tangent, 0.0)


def test_power_with_an_array_exponent_at_zero_base():
    # x == y == 0: slope 0 in x (x ** 0 == 1), and 0 in y where x == 0 (TF's, JAX's and
    # autograd's convention: docs/numerics.md); x = 0 with y > 0 as the formula gives
    x, y = np.array([0.0, 0.0, 1.5, 2.0]), np.array([0.0, 2.0, 0.0, 1.3])
    report = check_modes(power_array_exponent, [x, y])
    assert ALL_MODES <= set(report.checked)
    gx, gy = dt.grad(lambda x, y: np.sum(np.power(x, y)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx[:3], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(gy[:2], [0.0, 0.0])


def test_power_slope_keeps_float32():
    x = np.array([0.0, 2.0], dtype=np.float32)
    g = dt.grad(lambda x: np.sum(np.power(x, np.float32(0.0)) + x ** 2))(x)
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g, [0.0, 4.0])


def test_generated_code_keeps_the_plain_slope_for_a_nonzero_literal_exponent():
    source = T.grad(power_three_and_zero).source
    assert "(3 * x ** 2)" in source and "power_slope(x, 0)" in source
