"""np.linalg's decompositions and SciPy's functions as users call them (issue 12).

The registry-generated tests check each op's rules; these check the public spellings: NumPy's
and SciPy's own functions on tensors and dual numbers, `dualtape.scipy`, the source
transformer reading SciPy's names, the values against NumPy / SciPy, and the refusals.
The SciPy tests skip where SciPy (the `scipy` extra) is not installed.
"""

import subprocess
import sys

import numpy as np
import pytest

import dualtape
import dualtape as tf
import dualtape.transforms as dt
from dualtape.core.errors import RefusalError

try:
    import scipy.signal
    import scipy.special
    import scipy.stats

    from dualtape.scipy import signal as dsignal
except ImportError:  # the scipy extra is optional
    scipy = dsignal = None

needs_scipy = pytest.mark.skipif(scipy is None, reason="SciPy is not installed (the scipy extra)")


# -- np.linalg --------------------------------------------------------------------------------

@pytest.mark.parametrize("ord_, axis", [(None, None), (1, None), (np.inf, None), (-np.inf, None), (3.5, None),
                                        (0, None), ("fro", (0, 1)), ("nuc", (0, 1)), (2, (0, 1)),
                                        (-2, (1, 0)), (1, (0, 1)), (-1, (0, 1)), (np.inf, (0, 1)),
                                        (-np.inf, (0, 1)), (2, 1), (1, 0)])
def test_norm_values_and_gradients_for_every_ord(ord_, axis):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4)) if axis is not None else rng.standard_normal(5)
    want = np.linalg.norm(x, ord_, axis)

    def f(x):
        return np.sum(np.linalg.norm(x, ord_, axis))

    value, grad = dualtape.value_and_grad(f)(x)
    np.testing.assert_allclose(value, np.sum(want), rtol=1e-12)
    eps = 1e-6
    numeric = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        numeric[i] = (f(x + e) - f(x - e)) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)


def test_decompositions_on_tensors_match_numpy_and_reconstruct():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((5, 3))
    t = tf.constant(a)
    u, s, vh = np.linalg.svd(t, full_matrices=False)
    np.testing.assert_allclose(np.asarray(u) * np.asarray(s) @ np.asarray(vh), a, atol=1e-12)
    np.testing.assert_allclose(np.asarray(np.linalg.svd(t, compute_uv=False)), np.linalg.svd(a, compute_uv=False))
    q, r = np.linalg.qr(t)
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), a, atol=1e-12)
    sym = a.T @ a
    w, v = np.linalg.eigh(tf.constant(sym))
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(sym), rtol=1e-12)
    b = rng.standard_normal(5)
    x, residuals, rank, sv = np.linalg.lstsq(tf.constant(a), tf.constant(b))
    want = np.linalg.lstsq(a, b)
    np.testing.assert_allclose(np.asarray(x), want[0], rtol=1e-10)
    np.testing.assert_allclose(np.asarray(residuals), want[1], rtol=1e-10)
    assert rank == want[2] == np.linalg.matrix_rank(tf.constant(a))
    np.testing.assert_allclose(np.asarray(np.linalg.pinv(t)), np.linalg.pinv(a), atol=1e-12)


def test_lstsq_gradient_matches_finite_differences():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((6, 3)), rng.standard_normal(6)

    def f(a):
        return np.sum(np.linalg.lstsq(a, b)[0] ** 2)

    grad = dualtape.grad(f)(a)
    eps = 1e-6
    numeric = np.array([(f(a + eps * e.reshape(a.shape)) - f(a - eps * e.reshape(a.shape))) / (2 * eps)
                        for e in np.eye(a.size)]).reshape(a.shape)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8)


def test_basis_invariant_functions_are_exact_at_repeated_eigenvalues():
    a = np.diag([1.0, 1.0, 4.0])
    np.testing.assert_allclose(dualtape.grad(lambda a: np.sum(np.linalg.eigvalsh(a) ** 3))(a), 3 * a @ a)
    # the projector onto the repeated eigenspace, built from its (arbitrary) eigenvectors
    v = dualtape.grad(lambda a: np.sum(np.linalg.eigh(a)[1][:, :2] @ np.linalg.eigh(a)[1][:, :2].T))(a)
    assert np.all(np.isfinite(v))
    # sum of singular values (nuclear norm) at a tie: U Vh
    np.testing.assert_allclose(dualtape.grad(lambda a: np.sum(np.linalg.svd(a, compute_uv=False)))(np.eye(3)),
                               np.eye(3), atol=1e-12)


def test_full_matrices_svd_of_a_non_square_matrix_is_refused():
    with pytest.raises(RefusalError, match=r"\[Svd\] full_matrices=True .* full_matrices=False"):
        dualtape.grad(lambda a: np.sum(np.linalg.svd(a)[0]))(np.ones((3, 2)))


def svd_loss(a):  # the transformer maps single-output functions (svd / eigh / qr return tuples)
    return np.sum(np.linalg.svdvals(a) ** 2) + np.sum(np.linalg.eigvalsh(a.T @ a)) + np.sum(np.linalg.pinv(a))


def one_norm(x):
    return np.linalg.norm(x, 1)


def test_transformer_maps_linalg_ops():
    a = np.random.default_rng(3).standard_normal((4, 3))
    np.testing.assert_allclose(dt.grad(svd_loss)(a), dualtape.grad(svd_loss)(a), rtol=1e-10)
    with pytest.raises(Exception, match=r"np.linalg.norm. with an .ord. other than None"):
        dt.grad(one_norm)  # never the Euclidean gradient in its place


# -- SciPy ------------------------------------------------------------------------------------

def scipy_model(x, mu, s):
    return (np.sum(scipy.stats.norm.logpdf(x, mu, s)) + np.sum(scipy.special.gammaln(s + x * x))
            + scipy.special.logsumexp(x, b=0.5) + np.sum(scipy.stats.t.logcdf(x, 4.0, mu, s)))


def dualtape_model(x, mu, s):
    from dualtape.scipy import special, stats  # noqa: PLC0415 - the module imports only where SciPy is
    return (np.sum(stats.norm.logpdf(x, mu, s)) + np.sum(special.gammaln(s + x * x))
            + special.logsumexp(x, b=0.5) + np.sum(stats.t.logcdf(x, 4.0, mu, s)))


@needs_scipy
def test_scipy_spelling_in_the_transformer_equals_dualtape_scipy_on_the_tape():
    x, mu, s = np.array([0.3, -1.2, 2.0]), 0.4, np.array([1.5, 0.7, 1.1])
    np.testing.assert_allclose(dualtape_model(x, mu, s), scipy_model(x, mu, s), rtol=1e-12)
    want = dualtape.grad(dualtape_model, argnums=(0, 2))(x, mu, s)
    got = dt.grad(scipy_model, wrt=(0, 2))(x, mu, s)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10)
    _, tangent = dualtape.jvp(lambda x: dualtape_model(x, mu, s), (x,), (np.ones(3),))
    np.testing.assert_allclose(tangent, np.sum(want[0]), rtol=1e-10)


@needs_scipy
def test_scipy_ufuncs_work_on_tensors_and_scipy_stats_is_refused_clearly():
    x = tf.Variable(np.array([0.5, 1.5]))
    with tf.GradientTape() as tape:
        y = np.sum(scipy.special.gammaln(x) * scipy.special.expit(x))
    want = scipy.special.digamma(x.numpy()) * scipy.special.expit(x.numpy()) + scipy.special.gammaln(
        x.numpy()) * scipy.special.expit(x.numpy()) * (1 - scipy.special.expit(x.numpy()))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want, rtol=1e-12)
    with pytest.raises(RefusalError, match="SciPy"):
        dualtape.grad(lambda x: np.sum(scipy.stats.norm.logpdf(x)))(np.array([0.5]))


@needs_scipy
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dualtape_scipy_values_equal_scipy(dtype):
    from dualtape.scipy import special, stats  # noqa: PLC0415
    x = np.array([0.2, 0.6, 0.9], dtype=dtype)
    cases = [("norm", (0.1, 1.3)), ("t", (3.5, 0.1, 1.3)), ("gamma", (2.5, 0.05, 1.2)), ("beta", (2.0, 3.0))]
    for name, params in cases:
        for method in ("logpdf", "pdf", "cdf", "logcdf"):
            got = getattr(getattr(stats, name), method)(x, *params)
            assert np.asarray(got).dtype == dtype, (name, method)
            np.testing.assert_allclose(got, getattr(getattr(scipy.stats, name), method)(x, *params),
                                       rtol=1e-5 if dtype == np.float32 else 1e-12)
    k = np.array([0.0, 2.0, 5.0])
    for method in ("logpmf", "pmf", "cdf", "logcdf"):
        np.testing.assert_allclose(getattr(stats.poisson, method)(k, 2.5), getattr(scipy.stats.poisson, method)(k, 2.5))
    pts, cov = np.array([[0.1, 0.2], [1.0, -0.5]]), np.array([[2.0, 0.3], [0.3, 1.0]])
    np.testing.assert_allclose(stats.multivariate_normal.logpdf(pts, np.zeros(2), cov),
                               scipy.stats.multivariate_normal.logpdf(pts, np.zeros(2), cov), rtol=1e-12)
    a = np.array([[0.5, 1.0], [2.0, -1.0]])
    np.testing.assert_allclose(special.logsumexp(a, axis=1, b=np.array([1.0, 2.0])),
                               scipy.special.logsumexp(a, axis=1, b=np.array([1.0, 2.0])))
    np.testing.assert_allclose(special.softmax(a), scipy.special.softmax(a))
    np.testing.assert_allclose(special.polygamma(2, x), scipy.special.polygamma(2, x), rtol=1e-5)
    np.testing.assert_allclose(special.multigammaln(3.5, 3), scipy.special.multigammaln(3.5, 3))


def test_import_dualtape_never_needs_scipy():
    code = ("import sys; sys.modules['scipy'] = None\n"
            "import dualtape, numpy as np\n"
            "assert dualtape.grad(lambda a: np.linalg.norm(a, 1))(np.array([1.0, -2.0])).tolist() == [1.0, -1.0]\n"
            "try:\n    import dualtape.scipy\nexcept ImportError:\n    print('refused')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "refused"


def scipy_linalg_model(a, b):
    return (np.sum(scipy.linalg.expm(a)) + np.sum(scipy.linalg.solve_triangular(a, b, lower=True))
            + np.sum(scipy.linalg.sqrtm(a @ a.T + 3.0 * np.eye(3))))


def dualtape_linalg_model(a, b):
    from dualtape.scipy import linalg  # noqa: PLC0415
    return (np.sum(linalg.expm(a)) + np.sum(linalg.solve_triangular(a, b, lower=True))
            + np.sum(linalg.sqrtm(a @ a.T + 3.0 * np.eye(3))))


@needs_scipy
def test_scipy_linalg_in_every_mode():
    import scipy.linalg  # noqa: PLC0415, F401 - the transformer reads the module's `scipy.linalg`
    rng = np.random.default_rng(4)
    a, b = 0.3 * rng.standard_normal((3, 3)) + 2.0 * np.eye(3), rng.standard_normal(3)
    np.testing.assert_allclose(dualtape_linalg_model(a, b), scipy_linalg_model(a, b), rtol=1e-10)
    want = dualtape.grad(dualtape_linalg_model)(a, b)
    np.testing.assert_allclose(dt.grad(scipy_linalg_model)(a, b), want, rtol=1e-9)
    eps = 1e-6
    numeric = np.array([(scipy_linalg_model(a + eps * e.reshape(3, 3), b)
                         - scipy_linalg_model(a - eps * e.reshape(3, 3), b)) / (2 * eps) for e in np.eye(9)])
    np.testing.assert_allclose(want, numeric.reshape(3, 3), rtol=1e-5, atol=1e-7)
    from dualtape.scipy import linalg  # noqa: PLC0415
    spd = a @ a.T
    np.testing.assert_allclose(linalg.cholesky(spd), scipy.linalg.cholesky(spd), atol=1e-12)


def _oscillator(y, t, a, b):
    return np.stack([y[1], -a * y[0] - b * y[1] * t])


@needs_scipy
def test_odeint_gradient_by_the_adjoint_ode_matches_finite_differences():
    from dualtape.scipy.integrate import odeint  # noqa: PLC0415

    def loss(y0, t, a, b):
        return np.sum(odeint(_oscillator, y0, t, (a, b), rtol=1e-10, atol=1e-10) ** 2)

    y0, t, a, b = np.array([1.0, 0.5]), np.linspace(0.0, 2.0, 5), np.array(1.3), np.array(0.2)
    args = [y0, t, a, b]
    grads = dualtape.grad(loss, argnums=(0, 1, 2, 3))(*args)
    eps = 1e-5
    for i, g in enumerate(grads):
        numeric = np.zeros(np.shape(args[i]))
        for j in np.ndindex(numeric.shape):
            step = np.zeros(numeric.shape)
            step[j] = eps
            plus, minus = list(args), list(args)
            plus[i], minus[i] = args[i] + step, args[i] - step
            numeric[j] = (loss(*plus) - loss(*minus)) / (2 * eps)
        np.testing.assert_allclose(g, numeric, rtol=1e-5, atol=1e-7)
    y = tf.Variable(y0)
    with tf.GradientTape() as tape:
        out = loss(y, t, a, b)
    np.testing.assert_allclose(tape.gradient(out, y).numpy(), grads[0], rtol=1e-12)


def scipy_signal_model(x, k):
    return np.sum(scipy.signal.convolve(x, k, mode="same") ** 2)


@needs_scipy
def test_scipy_signal_convolve_in_every_mode():
    import scipy.signal  # noqa: PLC0415, F401 - the transformer reads the module's `scipy.signal`
    from dualtape.scipy import signal  # noqa: PLC0415
    rng = np.random.default_rng(5)
    x, k = rng.standard_normal((5, 6)), rng.standard_normal((3, 2))
    np.testing.assert_allclose(signal.convolve(x, k, "valid"), scipy.signal.convolve(x, k, "valid"), atol=1e-12)
    want = dualtape.grad(lambda x, k: np.sum(signal.convolve(x, k, mode="same") ** 2), argnums=(0, 1))(x, k)
    got = dt.grad(scipy_signal_model, wrt=(0, 1))(x, k)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10)


def convolve_along_rows(x, k):  # a batch of signals (rows) and one kernel broadcast over them
    return np.sum(np.sin(dsignal.convolve(x, k, mode="same", axes=-1)) ** 2)


def fftconvolve_valid(x, k):
    return np.sum(np.sin(scipy.signal.fftconvolve(x, k, mode="valid", axes=[0, 2])) ** 2)


@needs_scipy
@pytest.mark.parametrize("f, shapes", [(convolve_along_rows, ((3, 6), (1, 3))),
                                       (fftconvolve_valid, ((5, 2, 4), (2, 1, 3)))])
def test_convolve_along_axes_in_every_mode(f, shapes):
    # dualtape.scipy.signal.convolve(..., axes=) raised TypeError; the axes not convolved are
    # elementwise and broadcast, as scipy.signal.fftconvolve's (the VJP sums where an input was
    # broadcast); every mode against central differences, SciPy's own spelling in the transformer
    import scipy.signal  # noqa: PLC0415, F401
    from dualtape.scipy import signal  # noqa: PLC0415
    from dualtape.testing import check_modes  # noqa: PLC0415
    rng = np.random.default_rng(19)
    x, k = (rng.standard_normal(s) for s in shapes)
    report = check_modes(f, [x, k])
    assert {"transforms.grad", "transforms.jvp", "transforms.hvp"} <= set(report.checked), report.refused
    if f is convolve_along_rows:
        assert {"tape", "functional.grad", "functional.jvp", "functional.hvp"} <= set(report.checked)
        np.testing.assert_allclose(signal.convolve(x, k, mode="same", axes=-1),
                                   scipy.signal.fftconvolve(x, k, mode="same", axes=-1), rtol=1e-12, atol=1e-12)
    else:
        got = dualtape.grad(lambda x, k: np.sum(np.sin(signal.fftconvolve(x, k, "valid", [0, 2])) ** 2),
                            argnums=(0, 1))(x, k)
        for g, w in zip(got, dt.grad(f, wrt=(0, 1))(x, k)):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


@needs_scipy
@pytest.mark.parametrize("shapes, axes, match", [
    (((3, 4), (3, 2)), ([1], [1]), "autograd's convention.*autograd_convolve"),
    (((3, 4), (2,)), [1], "same number of dimensions"),
    (((3, 4), (2, 2)), [1], "do not broadcast on axis 0"),
    (((3, 4), (3, 2)), [1, -1], "unique"),
    (((3, 4), (3, 2)), [2], r"ints in \[-2, 2\)"),
])
def test_convolve_axes_refusals_name_the_op_and_shapes(shapes, axes, match):
    from dualtape.scipy import signal  # noqa: PLC0415
    x, k = (np.ones(s) for s in shapes)
    with pytest.raises(ValueError, match=r"\[ScipyConvolve\].*" + match):
        dualtape.grad(lambda x: np.sum(signal.convolve(x, k, axes=axes)))(x)


@needs_scipy
def test_sqrtm_of_a_matrix_with_a_complex_root_is_refused():
    # regression: #22, sqrtm returned the real part of SciPy's complex root of a symmetric matrix
    # with a negative eigenvalue (autograd's test_sqrtm: every mode's derivative was off by 1e15)
    from dualtape.scipy import linalg  # noqa: PLC0415
    a = np.diag([2.0, -1.0, 3.0]) + 0.1
    with pytest.raises(ValueError, match=r"\[MatrixSquareRoot\].*\(3, 3\) float64.*complex.*Fix"):
        linalg.sqrtm(a)
    with pytest.raises(ValueError, match=r"MatrixSquareRoot.*negative real axis"):
        dualtape.jvp(linalg.sqrtm, (a,), (np.eye(3),))
    with pytest.raises(ValueError, match=r"MatrixSquareRoot.*negative real axis"):
        dualtape.grad(lambda a: np.sum(linalg.sqrtm(a)))(a)
    b = a @ a.T + np.eye(3)  # a real root: unchanged
    np.testing.assert_allclose(linalg.sqrtm(b) @ linalg.sqrtm(b), b, rtol=1e-10)


@needs_scipy
@pytest.mark.parametrize("shapes, axes, dot_axes, match", [
    (((3, 4), (3, 2)), ([1], [0, 1]), None, "as many axes of in1"),
    (((3, 4), (3, 2)), ([1], [1]), ([1], [0]), "no axis being both convolved and dotted"),
    (((3, 4), (2, 2)), ([1], [1]), ([0], [0]), "dot_axes=.*different lengths"),
    (((3, 4), (3, 2)), ([2], [1]), None, "distinct axes of an input of shape"),
    (((3, 4, 2), (3, 5, 1)), ([1, 2], [1, 2]), None, "mode='valid' needs one input at least as large"),
])
def test_autograd_convolve_refusals_name_the_op_and_shapes(shapes, axes, dot_axes, match):
    from dualtape.scipy import signal  # noqa: PLC0415
    x, k = (np.ones(s) for s in shapes)
    with pytest.raises(ValueError, match=r"\[ScipyConvolve\].*" + match):
        signal.autograd_convolve(x, k, axes=axes, dot_axes=dot_axes, mode="valid")


@needs_scipy
@pytest.mark.parametrize("mode", ["full", "valid", "same"])
@pytest.mark.parametrize("shapes, axes, dot_axes", [
    (((4, 3), (3, 2)), ([0], [1]), None),
    (((4, 3), (3, 2)), ([1, 0], [1, 0]), None),
    (((3, 3, 2), (3, 2, 3)), ([1], [1]), ([0], [2])),
    (((3, 5), (3, 4, 2)), ([1], [1]), ([0], [0])),
])
def test_autograd_convolve_in_every_mode(shapes, axes, dot_axes, mode):
    # autograd's convolve(A, B, axes=(axes_A, axes_B), dot_axes=...): the result has A's other axes,
    # B's, then the convolved ones; dot axes summed over (issue 22)
    from dualtape.scipy import signal  # noqa: PLC0415
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    out = signal.autograd_convolve(a, b, axes=axes, dot_axes=dot_axes, mode=mode)
    # the definition, one pair of slices at a time: move the convolved and dotted axes last
    conv_a, conv_b = axes
    dot_a, dot_b = dot_axes or ([], [])
    other_a = [i for i in range(a.ndim) if i not in conv_a + dot_a]
    other_b = [j for j in range(b.ndim) if j not in conv_b + dot_b]
    a_t = np.transpose(a, other_a + dot_a + conv_a)
    b_t = np.transpose(b, other_b + dot_b + conv_b)
    for ia in np.ndindex(*a_t.shape[:len(other_a)]):
        for ib in np.ndindex(*b_t.shape[:len(other_b)]):
            want = sum(scipy.signal.convolve(a_t[ia][d], b_t[ib][d], mode) for d in np.ndindex(*a_t[ia].shape[:len(dot_a)]))
            np.testing.assert_allclose(out[ia + ib], want, rtol=1e-10, atol=1e-12)
    w = rng.standard_normal(out.shape)
    f = lambda a, b: np.sum(w * signal.autograd_convolve(a, b, axes=axes, dot_axes=dot_axes, mode=mode))  # noqa: E731
    ga, gb = dualtape.grad(f, argnums=(0, 1))(a, b)
    da, db = rng.standard_normal(a.shape), rng.standard_normal(b.shape)
    eps = 1e-6
    numeric = (f(a + eps * da, b + eps * db) - f(a - eps * da, b - eps * db)) / (2 * eps)
    np.testing.assert_allclose(np.sum(ga * da) + np.sum(gb * db), numeric, rtol=1e-7)
    _, tangent = dualtape.jvp(f, (a, b), (da, db))
    np.testing.assert_allclose(tangent, numeric, rtol=1e-7)
