"""scipy.stats' and scipy.special's functions added for HIPS autograd's suite (issue 22): chi2,
the survival functions sf / logsf of every location-scale family, dirichlet, the multivariate
normal's entropy, betainc and gammasgn. The registry's generated tests check their rules; these
check the public spellings' values against SciPy, the refusals, and the derivatives autograd's
tests take, in both modes, against finite differences."""

import numpy as np
import pytest

import dualtape

st = pytest.importorskip("scipy.stats")
import scipy.special  # noqa: E402

from dualtape.scipy import special, stats  # noqa: E402

FAMILIES = [("norm", (0.1, 1.3)), ("t", (3.5, 0.1, 1.3)), ("gamma", (2.5, 0.05, 1.2)), ("beta", (2.0, 3.0, -0.5, 4.0)),
            ("chi2", (3.0, 0.1, 1.2))]


def numeric_gradient(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(len(x))])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, params", FAMILIES)
def test_family_values_equal_scipy(name, params, dtype):
    x = np.array([0.3, 1.6, 2.5], dtype=dtype)
    for method in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
        got = getattr(getattr(stats, name), method)(x, *params)
        assert np.asarray(got).dtype == dtype, (name, method)
        np.testing.assert_allclose(got, getattr(getattr(st, name), method)(x, *params),
                                   rtol=1e-5 if dtype == np.float32 else 1e-12, err_msg=f"{name}.{method}")


def test_norm_log_tails_are_accurate_far_out():
    # log(1 - cdf) underflows at x = 40; logsf is computed as SciPy's log_ndtr(-z)
    np.testing.assert_allclose(stats.norm.logsf(40.0), st.norm.logsf(40.0), rtol=1e-14)
    np.testing.assert_allclose(stats.norm.logcdf(-40.0, 0.0, 1.0), st.norm.logcdf(-40.0), rtol=1e-14)


@pytest.mark.parametrize("name, params", FAMILIES)
@pytest.mark.parametrize("method", ["sf", "logsf"])
def test_survival_function_derivatives_in_x_loc_scale(name, params, method):
    x = np.array([0.4, 1.1, 2.2])
    fn = getattr(getattr(stats, name), method)
    *shape, loc, scale = params
    for argnum in range(3):
        def f(v, argnum=argnum):
            args = [x, loc * np.ones(3), scale * np.ones(3)]
            args[argnum] = v
            return np.sum(fn(args[0], *shape, args[1], args[2]))
        at = [x, loc * np.ones(3), scale * np.ones(3)][argnum]
        numeric = numeric_gradient(f, at)
        np.testing.assert_allclose(dualtape.grad(f)(at), numeric, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(dualtape.jacfwd(f)(at), numeric, rtol=1e-6, atol=1e-9)


def test_densities_at_the_support_boundary_equal_scipy():
    # regression: #22, gamma.pdf(0, 1) and beta.pdf(0, 1, b) were 0 (the support's end points were
    # excluded): SciPy gives 1 and b
    for name, args in [("gamma", (0.0, 1.0)), ("gamma", (0.0, 2.0)), ("beta", (0.0, 1.0, 3.0)),
                       ("beta", (1.0, 3.0, 1.0)), ("chi2", (0.0, 2.0)), ("chi2", (0.0, 3.0))]:
        for method in ("pdf", "logpdf"):
            np.testing.assert_allclose(getattr(getattr(stats, name), method)(*args),
                                       getattr(getattr(st, name), method)(*args), err_msg=f"{name}.{method}{args}")


def test_dirichlet_values_and_derivatives():
    alpha = np.array([1.5, 2.0, 3.0])
    x = np.array([0.2, 0.3, 0.5])
    points = np.array([[0.2, 0.1], [0.3, 0.4], [0.5, 0.5]])
    for method in ("logpdf", "pdf"):
        ours, theirs = getattr(stats.dirichlet, method), getattr(st.dirichlet, method)
        np.testing.assert_allclose(ours(x, alpha), theirs(x, alpha), rtol=1e-12)
        np.testing.assert_allclose(ours(points, alpha), theirs(points, alpha), rtol=1e-12)
        np.testing.assert_allclose(ours(x[:2], alpha), theirs(x[:2], alpha), rtol=1e-12)  # the last implied
        f_alpha = lambda a, ours=ours: np.sum(ours(points, a))  # noqa: E731
        numeric = numeric_gradient(f_alpha, alpha)
        np.testing.assert_allclose(dualtape.grad(f_alpha)(alpha), numeric, rtol=1e-6)
        np.testing.assert_allclose(dualtape.jacfwd(f_alpha)(alpha), numeric, rtol=1e-6)
        f_x = lambda v, ours=ours: ours(v, alpha)  # noqa: E731  (K - 1 components: stays on the simplex)
        numeric = numeric_gradient(f_x, x[:2])
        np.testing.assert_allclose(dualtape.grad(f_x)(x[:2]), numeric, rtol=1e-6)
        np.testing.assert_allclose(dualtape.jacfwd(f_x)(x[:2]), numeric, rtol=1e-6)


@pytest.mark.parametrize("x, alpha, match", [
    (np.array([0.2, 0.3, 0.6]), np.ones(3), r"\[DirichletDist\] the points x of shape \(3,\) must lie on the simplex"),
    (np.array([0.5, 0.5]), np.ones(4), r"\[DirichletDist\] x of shape \(2,\) and alpha of shape \(4,\)"),
    (np.array([-0.2, 0.7, 0.5]), np.ones(3), r"entries in \[0, 1\].*Fix"),
])
def test_dirichlet_refuses_what_scipy_refuses(x, alpha, match):
    with pytest.raises(ValueError):
        st.dirichlet.logpdf(x, alpha)
    with pytest.raises(ValueError, match=match):
        stats.dirichlet.logpdf(x, alpha)


def test_mvn_entropy_value_and_derivative_in_cov():
    b = np.array([[1.0, 0.2, 0.0], [0.3, 1.2, 0.1], [0.0, 0.4, 0.9]])
    cov = b @ b.T + np.eye(3)
    np.testing.assert_allclose(stats.multivariate_normal.entropy(np.zeros(3), cov),
                               st.multivariate_normal.entropy(np.zeros(3), cov), rtol=1e-13)
    np.testing.assert_allclose(stats.multivariate_normal.entropy(np.zeros(3), 2.0),
                               st.multivariate_normal.entropy(np.zeros(3), 2.0), rtol=1e-13)
    g = dualtape.grad(lambda c: stats.multivariate_normal.entropy(None, 0.5 * (c + c.T)))(cov)
    np.testing.assert_allclose(g, 0.5 * np.linalg.inv(cov), rtol=1e-12)  # d 0.5 log det C = 0.5 C^-1


def test_betainc_and_gammasgn():
    a, b, x = 2.0, np.array([3.0, 1.5]), np.array([0.3, 0.8])
    np.testing.assert_allclose(special.betainc(a, b, x), scipy.special.betainc(a, b, x))
    density = x ** (a - 1) * (1 - x) ** (b - 1) / scipy.special.beta(a, b)
    np.testing.assert_allclose(dualtape.grad(lambda v: np.sum(special.betainc(a, b, v)))(x), density, rtol=1e-12)
    np.testing.assert_allclose(dualtape.jvp(lambda v: scipy.special.betainc(a, b, v), (x,), (np.ones(2),))[1],
                               density, rtol=1e-12)  # SciPy's own ufunc, on a dual number
    np.testing.assert_array_equal(special.gammasgn(np.array([-0.5, 0.5])), [-1.0, 1.0])
    np.testing.assert_array_equal(dualtape.grad(lambda v: np.sum(scipy.special.gammasgn(v)))(np.array([0.5])), [0.0])


def test_the_transformer_reads_scipys_own_spelling_of_the_new_functions(tmp_path):
    import importlib.util  # noqa: PLC0415
    import dualtape.transforms as dt  # noqa: PLC0415
    path = tmp_path / "scipy_spelling.py"
    path.write_text(
        "import numpy as np\nimport scipy.special\nimport scipy.stats\n\n\n"
        "def f(x):\n"
        "    return (np.sum(scipy.stats.chi2.logpdf(x, 3.0)) + np.sum(scipy.stats.norm.logsf(x, 0.1, 2.0))\n"
        "            + np.sum(scipy.special.betainc(2.0, 3.0, x / 4.0)))\n\n\n"
        "def g(a):\n"
        "    return (scipy.stats.dirichlet.logpdf(np.array([0.2, 0.3]), a)\n"
        "            + scipy.stats.multivariate_normal.entropy(np.zeros(2), np.diag(a[:2])))\n")
    spec = importlib.util.spec_from_file_location("scipy_spelling", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x, a = np.array([0.5, 1.5, 2.5]), np.array([1.5, 2.0, 3.0])
    np.testing.assert_allclose(dt.grad(module.f)(x), numeric_gradient(module.f, x), rtol=1e-6)
    np.testing.assert_allclose(dt.grad(module.g)(a), numeric_gradient(module.g, a), rtol=1e-6)


def test_mvn_allow_singular_as_scipy_and_its_derivatives_in_x_and_mean():
    cov = np.diag([1.0, 2.0, 0.0, 0.0])  # variance only along the first two axes
    mean = np.array([0.1, 0.2, 0.5, -0.3])
    x = np.array([0.3, -0.2, 0.5, -0.3])  # on the support: x - mean in cov's range
    points = np.concatenate([np.random.default_rng(0).standard_normal((4, 2)), np.tile(mean[2:], (4, 1))], axis=1)
    for method in ("logpdf", "pdf"):
        ours, theirs = getattr(stats.multivariate_normal, method), getattr(st.multivariate_normal, method)
        for at in (x, points, x + np.array([0.0, 0.0, 0.1, 0.0])):  # the last off the support: -inf / 0
            np.testing.assert_allclose(ours(at, mean, cov, allow_singular=True),
                                       theirs(at, mean, cov, allow_singular=True), rtol=1e-12)
        # along the support (SciPy's density is on it), in x and in mean, both modes
        f = lambda v, ours=ours: ours(np.concatenate([v, mean[2:]]), mean, cov, allow_singular=True)  # noqa: E731
        numeric = numeric_gradient(f, x[:2])
        np.testing.assert_allclose(dualtape.grad(f)(x[:2]), numeric, rtol=1e-6)
        np.testing.assert_allclose(dualtape.jacfwd(f)(x[:2]), numeric, rtol=1e-6)
    # a nonsingular cov with allow_singular=True: the same values and derivatives as without
    full = np.array([[2.0, 0.3], [0.3, 1.0]])
    g1 = dualtape.grad(lambda c: stats.multivariate_normal.logpdf(x[:2], mean[:2], c, allow_singular=True))(full)
    g2 = dualtape.grad(lambda c: stats.multivariate_normal.logpdf(x[:2], mean[:2], c))(full)
    np.testing.assert_allclose(g1, g2, rtol=1e-12)


def test_mvn_allow_singular_refuses_the_derivative_in_a_singular_cov():
    cov = np.diag([1.0, 2.0, 0.0])
    with pytest.raises(ValueError, match=r"\[MultivariateNormal\] no derivative in cov at a singular covariance"):
        dualtape.grad(lambda c: stats.multivariate_normal.logpdf(np.zeros(3), np.zeros(3), c, allow_singular=True))(cov)
    with pytest.raises(ValueError, match=r"\[MultivariateNormal\] no derivative in cov at a singular covariance"):
        dualtape.jvp(lambda c: stats.multivariate_normal.logpdf(np.zeros(3), np.zeros(3), c, allow_singular=True),
                     (cov,), (np.eye(3),))


@pytest.mark.parametrize("name, f", [
    ("Igamma", lambda a: special.gammainc(a, 1.0)),
    ("Igammac", lambda a: scipy.special.gammaincc(a, 1.0)),  # SciPy's own ufunc on a traced value
    ("Betainc", lambda a: special.betainc(a, 2.0, 0.3)),
    ("Betainc", lambda b: special.betainc(2.0, b, 0.3)),
    ("BesselIv", lambda v: special.iv(v, 2.0)),
    ("BesselIve", lambda v: special.ive(v, 2.0)),
    ("BesselJv", lambda v: special.jv(v, 2.0)),
    ("StudentTCdf", lambda df: stats.t.cdf(0.5, df)),
    ("GammaDistCdf", lambda a: stats.gamma.sf(0.5, a)),
    ("BetaDistCdf", lambda b: stats.beta.logcdf(0.5, 2.0, b)),
    ("Chi2DistCdf", lambda df: stats.chi2.cdf(0.5, df)),
])
def test_a_shape_or_order_parameter_without_a_rule_is_refused_in_every_mode(name, f):
    # regression: #22, the derivative in gammainc's a, a Bessel order v or t.cdf's df was a silent 0
    # (the parameter was declared not differentiable); it exists, and dualtape does not compute it
    for run in (lambda: dualtape.grad(f)(2.0), lambda: dualtape.jvp(f, (2.0,), (1.0,))):
        with pytest.raises(LookupError, match=rf"\[{name}\] has no derivative with respect to .*Fix"):
            run()


def test_the_other_arguments_of_those_functions_stay_differentiable():
    x = np.array([0.4, 1.3])
    for f in (lambda v: special.gammainc(1.5, v), lambda v: special.iv(0.5, v), lambda v: stats.t.cdf(v, 3.5),
              lambda v: special.betainc(1.5, 2.5, v / 2.0)):
        g = dualtape.grad(lambda v: np.sum(f(v)))(x)
        np.testing.assert_allclose(g, numeric_gradient(lambda v: np.sum(f(v)), x), rtol=1e-6)
