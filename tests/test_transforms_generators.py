"""User generator functions that f calls (transforms/calls/generators.py): read as versions that
return the list of what they yield, in every mode, against the tape and finite differences;
generators whose values depend on being run lazily stay refused by name."""

import importlib.util
import warnings

import numpy as np
import pytest

import dualtape
import dualtape.transforms as dt
from dualtape.testing import check_modes
from dualtape.transforms import TransformError

from test_transforms_golden import assert_golden


def squares(xs):
    for v in xs:
        yield v * v
    yield xs[0]


def pairs(xs, scale=2.0):
    for i in range(len(xs) - 1):
        if xs[i] > -10.0:
            yield xs[i] * scale, np.sin(xs[i + 1])


def make_layers(shapes):
    def unpack_layers(weights):  # (autograd's bayesian_neural_net: a closure over `shapes`)
        for m, n in shapes:
            yield weights[: m * n].reshape((m, n)), weights[m * n: m * n + n]
            weights = weights[(m + 1) * n:]

    def predict(weights, inputs):
        for W, b in unpack_layers(weights):
            inputs = np.tanh(inputs @ W + b)
        return np.sum(inputs ** 2)
    return predict


predict = make_layers([(2, 3), (3, 1)])


def summed(x):
    return sum(squares(x)) + np.sum(np.stack(list(squares(x * 0.5))))


def looped_pairs(x):
    total = 0.0
    for a, b in pairs(x):
        total = total + a * b
    for a, (c, d) in zip(squares(x), pairs(x, 0.5)):
        total = total + a * c - d
    return total


def layers(w):
    return predict(w, np.array([[0.3, -0.4], [0.5, 0.1]]))


X = np.array([0.3, -0.5, 0.8])
W = np.linspace(-0.6, 0.7, 13)


@pytest.mark.parametrize("f, x", [(summed, X), (looped_pairs, X), (layers, W)], ids=["summed", "looped_pairs", "layers"])
def test_every_mode_agrees(f, x):
    report = check_modes(f, [x])
    assert not report.refused and not report.failures and report.checked, report
    np.testing.assert_allclose(dt.grad(f)(x), dualtape.grad(f)(x), rtol=1e-12)
    np.testing.assert_allclose(dt.hessian(f)(x), dualtape.hessian(f)(x), rtol=1e-9, atol=1e-12)


def test_golden_source():
    assert_golden("generators_squares", dt.grad(summed).source)


def test_saved_module_needs_only_numpy(tmp_path):
    path = tmp_path / "summed_grad.py"
    dt.grad(looped_pairs).save(path)
    spec = importlib.util.spec_from_file_location("summed_grad", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    np.testing.assert_allclose(module.looped_pairs_vjp(X), dualtape.grad(looped_pairs)(X), rtol=1e-12)


def test_jit_runs_the_list_code_with_a_warning():
    pytest.importorskip("numba")
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        got = dt.grad(summed, jit=True)(X)
    np.testing.assert_allclose(got, dualtape.grad(summed)(X), rtol=1e-12)


def endless(x):
    while True:
        yield x
        x = x * 0.5


def receiving(x):
    y = yield x
    yield y


def delegating(x):
    yield from squares(x)


def returning(x):
    yield x
    return 2.0


def stopping(x):
    for v in x:
        if v > 10.0:
            return
        yield v


def take_two(gen_fn):
    def f(x):
        total = 0.0
        for k, v in enumerate(gen_fn(x)):
            if k == 2:
                break
            total = total + np.sum(v)
        return total
    return f


@pytest.mark.parametrize("gen_fn", [endless, receiving, delegating, returning, stopping], ids=lambda g: g.__name__)
def test_generators_that_need_to_run_lazily_stay_refused(gen_fn):
    with pytest.raises(TransformError, match="`yield`|`yield from`") as info:
        dt.grad(take_two(gen_fn))(X)
    assert "test_transforms_generators.py" in str(info.value)


def test_a_generator_f_itself_stays_refused():
    with pytest.raises(TransformError, match="`yield`"):
        dt.grad(squares)(X)


def nested_generator(x):
    w = np.cos(x)

    def scaled(xs):  # (a generator defined in f, closing over w: lifted as the list version)
        for k in range(len(xs)):
            yield xs[k] * w[k]

    return sum(v * v for v in scaled(x)) + np.sum(np.stack(list(scaled(x * 2.0))))


def test_a_nested_generator_in_every_mode():
    report = check_modes(nested_generator, [X])
    assert not report.refused and not report.failures and report.checked, report
    np.testing.assert_allclose(dt.grad(nested_generator)(X), dualtape.grad(nested_generator)(X), rtol=1e-12)


def nested_endless(x):
    def forever(v):
        while True:
            yield v
            v = v * 0.5

    total = 0.0
    for k, v in enumerate(forever(x)):
        if k == 3:
            break
        total = total + np.sum(v)
    return total


def test_a_nested_generator_without_an_end_stays_refused():
    with pytest.raises(TransformError, match=r"test_transforms_generators.py:\d+.*`forever` is a generator that must run lazily"):
        dt.grad(nested_endless)(X)
