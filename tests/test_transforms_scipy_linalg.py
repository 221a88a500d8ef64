"""scipy.linalg under the source transformer (issue 19).

dualtape has ops for some of SciPy's linear algebra (scipy.linalg.expm, sqrtm,
solve_triangular: opmap maps them by name); for the others the transformer read SciPy's own
source and refused deep inside it (`scipy/_lib/_util.py:547 in eigh: the call of
get_lapack_funcs ...`), naming neither the user's line nor the function. The refusal is now
at the user's call, names the SciPy function and, where dualtape differentiates a NumPy twin
(np.linalg.eigh(a, UPLO='L') for scipy.linalg.eigh), says to call it. Each twin is checked
right in every mode, as are the mapped functions.
"""

import numpy as np
import pytest
import scipy.linalg

import dualtape.transforms as dt

A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, -0.2], [0.5, -0.2, 2.0]])
V = np.array([[0.3, -1.0, 0.2], [-1.0, 0.5, 0.7], [0.2, 0.7, -0.4]])  # symmetric: eigh's directions
B = np.array([1.0, -2.0, 0.5])


def eigh(a):
    w, v = scipy.linalg.eigh(a)
    return np.sum(w ** 3) + np.sum(v[:, 0] ** 2 * w[0])


def eigh_values(a):
    return np.sum(scipy.linalg.eigh(a, eigvals_only=True) ** 3)


def eigvalsh(a):
    return np.sum(scipy.linalg.eigvalsh(a) ** 3)


def inv(a):
    return np.sum(scipy.linalg.inv(a) ** 2)


def det(a):
    return scipy.linalg.det(a)


def solve(a):
    return np.sum(scipy.linalg.solve(a, B) ** 2)


def svd(a):
    return np.sum(scipy.linalg.svd(a, compute_uv=False) ** 2)


def norm(a):
    return scipy.linalg.norm(a)


def pinv(a):
    return np.sum(scipy.linalg.pinv(a) ** 2)


def lstsq(a):
    return np.sum(scipy.linalg.lstsq(a, B)[0] ** 2)


def cholesky(a):
    return np.sum(scipy.linalg.cholesky(a, lower=True))


def lu_factor(a):
    return np.sum(scipy.linalg.lu_factor(a)[0])


def qr(a):
    return np.sum(scipy.linalg.qr(a)[1])


TWINS = {  # the NumPy spelling the refusal names, and f written with it
    eigh: ("np.linalg.eigh(a, UPLO='L')", lambda a: np.sum(np.linalg.eigh(a, UPLO="L")[0] ** 3)
           + np.sum(np.linalg.eigh(a, UPLO="L")[1][:, 0] ** 2 * np.linalg.eigh(a, UPLO="L")[0][0])),
    eigh_values: ("eigvals_only=True: np.linalg.eigvalsh", lambda a: np.sum(np.linalg.eigvalsh(a, UPLO="L") ** 3)),
    eigvalsh: ("np.linalg.eigvalsh(a, UPLO='L')", lambda a: np.sum(np.linalg.eigvalsh(a, UPLO="L") ** 3)),
    inv: ("np.linalg.inv(a)", lambda a: np.sum(np.linalg.inv(a) ** 2)),
    det: ("np.linalg.det(a)", lambda a: np.linalg.det(a)),
    solve: ("np.linalg.solve(a, b)", lambda a: np.sum(np.linalg.solve(a, B) ** 2)),
    svd: ("np.linalg.svd(a)", lambda a: np.sum(np.linalg.svd(a, compute_uv=False) ** 2)),
    norm: ("np.linalg.norm(a)", lambda a: np.linalg.norm(a)),
    pinv: ("np.linalg.pinv(a)", lambda a: np.sum(np.linalg.pinv(a) ** 2)),
    lstsq: ("np.linalg.lstsq(a, b, rcond=None)", lambda a: np.sum(np.linalg.lstsq(a, B, rcond=None)[0] ** 2)),
}
NO_TWIN = (cholesky, lu_factor, qr)
MODES = ("grad", "vjp", "jvp", "jvp batched", "hvp", "jacfwd", "hessian")


def _run(mode, f, jit=False):
    options = {"jit": True} if jit else {}
    if mode == "grad":
        return dt.grad(f, **options)(A)
    if mode == "vjp":
        return dt.vjp(f, **options)(A, 1.0)
    if mode == "jvp":
        return dt.jvp(f, **options)(A, V)
    if mode == "jvp batched":
        return dt.jvp(f)(A, np.stack([V, V.T @ V]))
    if mode == "hvp":
        return dt.hvp(f, **options)(A, V)
    if mode == "jacfwd":
        return dt.jacfwd(f)(A)
    return dt.hessian(f)(A)


@pytest.mark.parametrize("mode", MODES + ("jit grad",))
@pytest.mark.parametrize("f", list(TWINS) + list(NO_TWIN), ids=lambda f: f.__name__)
def test_a_scipy_function_without_an_op_is_refused_at_the_users_call(f, mode):
    jit = mode == "jit grad"
    if jit:
        pytest.importorskip("numba")
    with pytest.raises(dt.TransformError) as info:
        _run("grad" if jit else mode, f, jit)
    message = str(info.value)
    name = "eigh" if f is eigh_values else f.__name__
    assert f"{__file__}:{f.__code__.co_firstlineno + 1} in {f.__name__}: scipy.linalg.{name} " in message
    if f in TWINS:
        assert "Call np.linalg." in message and TWINS[f][0] in message
    else:
        assert "dualtape.custom_gradient" in message


def _fd(f, a, v, h=1e-6):
    return (f(a + h * v) - f(a - h * v)) / (2 * h)


@pytest.mark.parametrize("f", list(TWINS), ids=lambda f: f.__name__)
def test_the_numpy_twin_is_scipys_value_and_differentiates_in_every_mode(f):
    twin = TWINS[f][1]
    np.testing.assert_allclose(twin(A), f(A), rtol=1e-12)
    slope = _fd(twin, A, V)
    grad = dt.grad(twin)(A)
    np.testing.assert_allclose(np.sum(grad * V), slope, rtol=1e-6)
    np.testing.assert_allclose(np.sum(dt.vjp(twin)(A, 1.0) * V), slope, rtol=1e-6)
    np.testing.assert_allclose(dt.jvp(twin)(A, V)[1], slope, rtol=1e-6)
    np.testing.assert_allclose(np.sum(dt.jacfwd(twin)(A) * V), slope, rtol=1e-6)
    hv = _fd(lambda a: np.sum(dt.grad(twin)(a) * V), A, V, 1e-4)
    np.testing.assert_allclose(np.sum(dt.hvp(twin)(A, V) * V), hv, rtol=1e-5)
    np.testing.assert_allclose(np.einsum("ij,ijkl,kl->", V, dt.hessian(twin)(A), V), hv, rtol=1e-5)


MAPPED = {  # scipy.linalg functions dualtape has ops for
    "expm": lambda a: np.sum(scipy.linalg.expm(0.3 * a) ** 2),
    "sqrtm": lambda a: np.sum(scipy.linalg.sqrtm(a)),
    "solve_triangular": lambda a: np.sum(scipy.linalg.solve_triangular(a, B, lower=True) ** 2),
}


@pytest.mark.parametrize("name", MAPPED)
def test_the_scipy_functions_with_ops_differentiate_in_every_mode(name):
    f = MAPPED[name]
    slope = _fd(f, A, V)
    np.testing.assert_allclose(np.sum(dt.grad(f)(A) * V), slope, rtol=1e-6)
    np.testing.assert_allclose(dt.jvp(f)(A, V)[1], slope, rtol=1e-6)
    hv = _fd(lambda a: np.sum(dt.grad(f)(a) * V), A, V, 1e-4)
    np.testing.assert_allclose(np.sum(dt.hvp(f)(A, V) * V), hv, rtol=1e-5)
