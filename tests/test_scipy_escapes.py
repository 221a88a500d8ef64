"""SciPy's own spelling on traced values (issue 12): scipy.stats' methods and SciPy's Python
functions convert their arguments with np.asarray, which no library can intercept, so under
the functional API and in dual numbers the conversion is refused; the refusal names the SciPy
call and its differentiable spelling (`dualtape.scipy.stats.norm.logpdf`, the same arguments),
or, where dualtape has none, says so and lists what dualtape.scipy.stats has. The supported
spelling it names then works. (A recording GradientTape refuses too, issue 19.)"""

import numpy as np
import pytest

import dualtape
import dualtape as tf
from dualtape import dnp
from dualtape.core.errors import RefusalError

st = pytest.importorskip("scipy.stats")
import scipy.integrate  # noqa: E402
import scipy.linalg  # noqa: E402
import scipy.signal  # noqa: E402
import scipy.special  # noqa: E402

from dualtape.scipy import stats as dstats  # noqa: E402

X = np.array([0.3, 0.7])

# (distribution, method) -> f(module, method, x) calling module.<dist>.<method> with x traced
ARGS = {
    "norm": lambda m, x: m(x, 0.2, 1.5),
    "t": lambda m, x: m(x, 3.0, 0.1, 1.2),
    "gamma": lambda m, x: m(x + 1.0, 2.5, 0.0, 1.5),
    "beta": lambda m, x: m(x, 2.0, 3.0),
    "chi2": lambda m, x: m(x + 1.0, 3.0, 0.1, 1.2),
    "dirichlet": lambda m, x: m(0.5 * x, np.array([1.5, 2.0, 3.0])),  # K - 1 components: the last implied
    "poisson": lambda m, x: m(np.array([2.0, 3.0]), x + 1.0),  # differentiable in mu
    "multivariate_normal": lambda m, x: m(x, np.zeros(2), np.array([[2.0, 0.3], [0.3, 1.0]])),
}
# a method whose arguments differ from its distribution's others
METHOD_ARGS = {("multivariate_normal", "entropy"): lambda m, x: m(np.zeros(2), np.diag(x + 1.0))}
SUPPORTED = [(kind[:-len("_gen")], method) for kind, method in dnp.METHOD_DISPATCH if kind.endswith("_gen")]


def _refusal(f):
    """The refusal messages of f under grad and under jvp (they must be the same)."""
    messages = []
    for run in (lambda: dualtape.grad(f)(X), lambda: dualtape.jvp(f, (X,), (np.ones(2),))):
        with pytest.raises(RefusalError) as info:
            run()
        messages.append(str(info.value))
    assert messages[0].replace("[jvp]", "[grad]") == messages[1].replace("[jvp]", "[grad]")
    return messages[0]


def test_every_supported_method_is_named_and_the_named_spelling_works():
    assert len(SUPPORTED) == 39 and {d for d, _ in SUPPORTED} == set(ARGS)
    for dist, method in SUPPORTED:
        scipy_method = getattr(getattr(st, dist), method)
        call = METHOD_ARGS.get((dist, method), ARGS[dist])
        message = _refusal(lambda x: np.sum(call(scipy_method, x)))
        assert (f"Here scipy.stats.{dist}.{method} converted it (SciPy calls np.asarray). Call "
                f"dualtape.scipy.stats.{dist}.{method} instead (`from dualtape.scipy.stats import {dist}`), "
                "with the same arguments") in message, message
        ours = getattr(getattr(dstats, dist), method)
        value, g = dualtape.value_and_grad(lambda x: np.sum(call(ours, x)))(X)
        np.testing.assert_allclose(value, np.sum(call(scipy_method, X)), rtol=1e-10)
        assert np.all(np.isfinite(g)) and np.any(g != 0)


@pytest.mark.parametrize("call, name", [
    (lambda x: st.laplace.logpdf(x), "scipy.stats.laplace.logpdf"),
    (lambda x: st.norm.ppf(0.5 * x, 0.0, 2.0), "scipy.stats.norm.ppf"),
])
def test_an_unsupported_method_is_refused_listing_what_dualtape_has(call, name):
    message = _refusal(lambda x: np.sum(call(x)))
    assert f"Here {name} converted it" in message
    assert (f"dualtape has no derivative of {name}. dualtape.scipy.stats has: norm (logpdf, pdf, cdf, logcdf, sf, "
            "logsf); t (logpdf, pdf, cdf, logcdf, sf, logsf); gamma (logpdf, pdf, cdf, logcdf, sf, logsf); "
            "beta (logpdf, pdf, cdf, logcdf, sf, logsf); chi2 (logpdf, pdf, cdf, logcdf, sf, logsf); "
            "poisson (logpmf, pmf, cdf, logcdf); dirichlet (logpdf, pdf); "
            "multivariate_normal (logpdf, pdf, entropy).") in message


def test_a_frozen_distribution_names_the_method_and_its_parameters():
    message = _refusal(lambda x: np.sum(st.norm(0.0, 2.0).logpdf(x)))
    assert "Here scipy.stats.norm(...).logpdf converted it" in message
    assert "Call dualtape.scipy.stats.norm.logpdf instead" in message
    assert "Pass it the frozen distribution's parameters too" in message


@pytest.mark.parametrize("call, name, fix", [
    (lambda x: scipy.special.logsumexp(x), "scipy.special.logsumexp", "dualtape.scipy.special.logsumexp"),
    (lambda x: np.sum(scipy.special.softmax(x) * x), "scipy.special.softmax", "dualtape.scipy.special.softmax"),
    (lambda x: np.sum(scipy.linalg.expm(np.outer(x, x))), "scipy.linalg.expm", "dualtape.scipy.linalg.expm"),
    (lambda x: np.sum(scipy.signal.convolve(x, x)), "scipy.signal.convolve", "dualtape.scipy.signal.convolve"),
])
def test_scipy_functions_name_their_dualtape_spelling(call, name, fix):
    message = _refusal(call)
    assert f"Here {name} converted it (SciPy calls np.asarray). Call {fix} instead" in message


@pytest.mark.parametrize("call, name, fix", [
    (lambda x: np.sum(scipy.linalg.eigh(np.outer(x, x) + np.eye(2))[0]), "scipy.linalg.eigh",
     "np.linalg.eigh(a, UPLO='L') (SciPy's lower=True; UPLO='U' for lower=False"),
    (lambda x: np.sum(scipy.linalg.eigvalsh(np.outer(x, x))), "scipy.linalg.eigvalsh",
     "np.linalg.eigvalsh(a, UPLO='L')"),
    (lambda x: np.sum(scipy.linalg.inv(np.outer(x, x) + np.eye(2))), "scipy.linalg.inv", "np.linalg.inv(a)"),
])
def test_scipy_functions_with_a_numpy_twin_name_it(call, name, fix):
    # scipy.linalg.eigh runs inside scipy._lib's `wrapper`: the hint read "Here scipy.wrapper
    # converted it; dualtape has no derivative of it" (issue 19)
    message = _refusal(call)
    assert f"Here {name} converted it (SciPy calls np.asarray). Call {fix}" in message


def test_a_wrapped_scipy_function_is_named_by_its_own_name():
    message = _refusal(lambda x: st.entropy(x))  # called through scipy's axis_nan_policy wrapper
    assert "Here scipy.stats.entropy converted it (SciPy calls np.asarray); dualtape has no derivative" in message


def test_no_scipy_hint_where_scipy_did_not_convert():
    assert "Here " not in _refusal(lambda x: np.sum(np.asarray(x)))
    # SciPy further up the stack (a quad integrand) did not make the conversion
    messages = []

    def integrand(t):
        messages.append(_refusal(lambda x: np.sum(np.asarray(x) * t)))
        return t

    scipy.integrate.quad(integrand, 0.0, 1.0)
    assert messages and all("Here " not in m and "scipy.integrate" not in m for m in messages)


def test_a_recording_gradient_tape_refuses_and_names_the_spelling():
    # TF lets the value leave (gradient None); a recording tape refuses it (issue 19)
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(RefusalError) as info:
            np.sum(st.norm.logpdf(x))  # marker: the user's line
        y = np.sum(dualtape.scipy.stats.norm.logpdf(x))
        with tape.stop_recording():
            plain = np.sum(st.norm.logpdf(x))  # on purpose: a constant
    message = str(info.value)
    assert message.startswith("[GradientTape]") and "# marker: the user's line" in message
    assert "Call dualtape.scipy.stats.norm.logpdf instead" in message
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), -X)
    assert np.isclose(plain, y.numpy())
