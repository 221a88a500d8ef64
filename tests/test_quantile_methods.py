"""np.quantile / np.percentile with NumPy's methods other than 'linear' (issue 12): each method
mixes the two sorted entries around a position set by n and q alone, so the derivative flows
through the selected elements, in every mode (tape, dual numbers, the functional API and the
source transformer's grad, jvp and hvp). Away from ties the functions are smooth in x, so
central differences are the reference. Unknown methods and weights are refused by name."""

import importlib.util

import numpy as np
import pytest

import dualtape
import dualtape.functional as F
import dualtape.transforms as dt
from dualtape import dnp

METHODS = ["lower", "higher", "nearest", "midpoint", "inverted_cdf", "averaged_inverted_cdf",
           "closest_observation", "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
           "normal_unbiased", "linear"]
SOURCE = '''
import numpy as np


def quantiles(x, method):
    return np.sum(np.sin(np.quantile(x, [0.1, 0.35, 0.5, 0.8], axis=1, method=method)) * W)


def percentiles(x, method):
    return np.sum(np.percentile(x, 40.0, method=method) * x)
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("quantile_methods") / "quantile_methods_example.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    module.W = np.random.default_rng(1).standard_normal((4, 3))
    spec.loader.exec_module(module)
    return module


X = np.random.default_rng(0).permutation(np.linspace(-2.0, 2.0, 21)).reshape(3, 7)  # no ties
U = np.random.default_rng(2).standard_normal((3, 7))


def _numeric_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", ["quantiles", "percentiles"])
def test_quantile_method_in_every_mode(mod, name, method):
    fn = getattr(mod, name)
    f = lambda x: fn(x, method)  # noqa: E731
    want = _numeric_grad(f, X)
    np.testing.assert_allclose(F.grad(f)(X), want, rtol=1e-7, atol=1e-8)             # the tape
    _, tangent = dualtape.jvp(f, (X,), (U,))                                           # dual numbers
    np.testing.assert_allclose(tangent, np.sum(want * U), rtol=1e-7, atol=1e-8)
    x = dualtape.constant(X)
    with dualtape.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(dt.grad(fn)(X, method), want, rtol=1e-7, atol=1e-8)      # the transformer
    _, t = dt.jvp(fn)(X, method, U)
    np.testing.assert_allclose(t, np.sum(want * U), rtol=1e-7, atol=1e-8)
    g = dt.grad(fn)
    hv_fd = (g(X + 1e-6 * U, method) - g(X - 1e-6 * U, method)) / 2e-6
    np.testing.assert_allclose(dt.hvp(fn)(X, method, U), hv_fd, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dualtape.hvp(lambda x: f(x), (X,), (U,)), hv_fd, rtol=1e-5, atol=1e-6)


def test_selected_elements_get_the_gradient():
    x = np.array([3.0, -1.0, 2.0, 0.5, 7.0])  # sorted: -1, 0.5, 2, 3, 7
    grad = lambda method, q: F.grad(lambda v: np.quantile(v, q, method=method))(x)  # noqa: E731
    np.testing.assert_array_equal(grad("lower", 0.6), [0, 0, 1, 0, 0])      # position 2.4 -> 2
    np.testing.assert_array_equal(grad("higher", 0.6), [1, 0, 0, 0, 0])     # -> 3
    np.testing.assert_array_equal(grad("nearest", 0.6), [0, 0, 1, 0, 0])    # -> 2
    np.testing.assert_array_equal(grad("midpoint", 0.6), [0.5, 0, 0.5, 0, 0])
    np.testing.assert_array_equal(grad("lower", 1.0), [0, 0, 0, 0, 1])


@pytest.mark.parametrize("call", [
    lambda x: dnp.quantile(x, 0.5, method="no_such_method"),
    lambda x: dnp.percentile(x, 50.0, method="bogus"),
    lambda x: dnp.quantile(x, 0.5, method="inverted_cdf", weights=np.ones(5)),
])
def test_unknown_methods_and_weights_are_refused_by_name(call):
    x = dualtape.constant(np.arange(5.0))
    with pytest.raises(TypeError, match=r"\[(Quantile|Percentile)\].*method"):
        call(x)
