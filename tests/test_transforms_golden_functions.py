"""Functions as values in the source transformer: nested functions and closures, lambdas,
function-valued arguments (a version per function passed), variables holding functions.

Goldens: the exact generated source (tests/golden/functions_*.py); regenerate with
`DUALTAPE_UPDATE_GOLDEN=1 pytest tests/test_transforms_golden_functions.py` and review the diff.
Every construct is checked against the tape in every mode and finite differences
(dualtape.testing.check_modes), and by jacfwd, hessian and a saved module.
"""

import functools
import importlib.util
import pathlib

import numpy as np
import pytest

import dualtape
import dualtape.transforms as dt
from test_transforms_golden import assert_golden
from dualtape.testing import check_modes
from dualtape.transforms import TransformError



def relu(v):
    return np.maximum(v, 0.0)


def softplus(v):
    return np.log1p(np.exp(v))


def predict(W, x, nonlinearity=np.tanh):
    return np.sum(nonlinearity(x @ W))


def closure(x):
    w = 2.0 * x
    def g(v):
        return v * w
    return np.sum(g(x))


def closure_in_loop(x):
    acc = 0.0
    for i in range(3):
        s = np.sin(x) * i
        def g(v):
            return v * s + 1.0
        acc = acc + np.sum(g(x))
    return acc


def nested_calls(x):
    a = np.cos(x)
    def h(v):
        return v * a
    def g(v):
        return h(v) * h(v) + v
    return np.sum(g(x))


def lambdas(x):
    g = lambda v: np.sin(v) * 2.0
    return np.sum(g(x)) + np.sum((lambda v: v * v)(x))


def apply(fn, x):
    return fn(x) * 3.0


def lambda_passed(x):
    return np.sum(apply(lambda v: np.exp(v), x)) + np.sum(apply(relu, x))


def aliases(x):
    f = softplus
    g = np.tanh
    h = f
    return np.sum(f(x) + g(x) * h(x))


def default_function(x):
    return predict(np.outer(x, x), x)


def passed_on(x, act):
    return predict(np.outer(x, x), x, act) + np.sum(act(x))


def with_relu(x):
    return passed_on(x, relu) + passed_on(x, np.sin) + default_function(x)


def branch_def(x):
    if np.sum(x) > 0.0:
        def g(v):
            return v * v
        y = g(x)
    else:
        y = x * 3.0
    return np.sum(y)


def scaled(v, a, k=1.0):
    return np.sin(v * a) * k


def partials(x):
    a = np.cos(x)
    p = functools.partial(scaled, a, k=2.0)
    q = functools.partial(np.power, x)
    a = a * 3.0  # (the partial holds the value it was given)
    return np.sum(p(x)) + np.sum(q(2.0))


def choice(x, flag=True):
    act = relu if flag else np.tanh
    return np.sum(act(x))


def choice_by_value(x):
    act = relu if np.sum(x) > 1.0 else np.tanh
    return np.sum(act(x) * x)


def layers(x):
    h = x
    for act in (np.tanh, relu, lambda v: v * v):
        h = act(h) * 1.5
    return np.sum(h * act(h))


def indexed(x):
    acts = (np.tanh, relu)
    return np.sum(acts[0](x) + acts[-1](x))


def mapped(x):
    total = 0.0
    for v in map(relu, [x, x * x]):
        total = total + np.sum(v)
    ys = list(map(np.sin, [x, 2.0 * x]))
    return total + np.sum(ys[0] * ys[1])


def closure_map(x):
    w = np.cos(x)
    def g(v):
        return v * w
    zs = list(map(g, [x, x * 2.0]))
    return np.sum(zs[0]) + np.sum(zs[1])


def scaled_by_closure(bout):
    def g1(v):  # (a closure over the helper's parameter, called twice)
        return v * np.stack([0.25, bout, bout])
    return np.tanh(g1(g1(np.array([0.3, -0.2, 0.5])) * 0.5))


def helper_with_closure(x):
    """The mixed modes run the generated gradient on dual numbers and tensors, with traced copies
    of the helpers it calls for values: their nested functions are called as written, not as the
    lifted versions taking the closed-over names (found by the checker: g1_traced() missing 'bout')."""
    return np.sum(scaled_by_closure(x[0]) * x)


def mapped_in_expressions(x):
    rows = np.stack(list(map(np.sin, [x, 2.0 * x])))  # map inside an expression: a comprehension
    pairs = sum(map(lambda a, b: a * b, x, x[::-1]))   # two iterables: over their zip
    return np.sum(rows[1] * rows[0]) + pairs + sum(map(relu, x))


class Model:
    def __init__(self, scale):
        self.scale = scale

    def act(self, v):
        return np.tanh(v) * self.scale

    def apply(self, W, x):
        return np.sum(self.act(x @ W))

    def __call__(self, W, x):
        return self.apply(W, x) * 2.0


MODEL = Model(1.5)


def method_of_argument(W, x, model):
    return model.apply(W, x) + model(W, x)


def method_of_global(W):
    return MODEL.apply(W, X) + method_of_argument(W, X, MODEL)


def method_of_local(W):
    m = Model(0.5)
    return m.apply(W, X) + m(W, X)


X = np.array([0.1, 0.4, 0.7])
W = np.arange(6.0).reshape(3, 2) / 7 - 0.3

ONE_ARGUMENT = [closure, closure_in_loop, nested_calls, lambdas, lambda_passed, aliases, default_function,
                with_relu, branch_def, partials, choice, choice_by_value, layers, indexed, mapped, closure_map,
                mapped_in_expressions, helper_with_closure]


@pytest.mark.parametrize("fn", ONE_ARGUMENT, ids=lambda f: f.__name__)
def test_every_mode_agrees(fn):
    report = check_modes(fn, [X], raise_on_failure=False)
    assert not report.failures, report.failures
    assert {"transforms.grad", "transforms.vjp", "transforms.jvp", "transforms.jvp_batched",
            "transforms.hvp"} <= set(report.checked)
    assert np.allclose(dt.jacfwd(fn)(X), dualtape.grad(fn)(X), rtol=1e-12, atol=1e-12)
    assert np.allclose(dt.hessian(fn)(X), dualtape.hessian(fn)(X), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("fn", ONE_ARGUMENT + ["method_of_global", "method_of_local"],
                         ids=lambda f: getattr(f, "__name__", f))
def test_saved_module_needs_only_numpy(fn, tmp_path):
    args = (W,) if isinstance(fn, str) else (X,)
    fn = globals()[fn] if isinstance(fn, str) else fn
    df = dt.grad(fn)
    path = df.save(tmp_path / "saved.py")
    spec = importlib.util.spec_from_file_location("saved_functions", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = pathlib.Path(path).read_text()
    assert "import dualtape" not in text
    np.testing.assert_allclose(getattr(module, df.name)(*args), dualtape.grad(fn)(*args), rtol=1e-13)


@pytest.mark.parametrize("act", [relu, softplus, np.tanh, np.sin, lambda v: v ** 3],
                         ids=["relu", "softplus", "np.tanh", "np.sin", "cube_lambda"])  # (the same on every xdist worker)
def test_function_argument_specializes(act):
    df = dt.grad(predict)
    np.testing.assert_allclose(df(W, X, act), dualtape.grad(predict)(W, X, act), rtol=1e-13)
    np.testing.assert_allclose(dt.jvp(predict)(W, X, act, np.ones_like(W))[1],
                               dualtape.jvp(lambda w: predict(w, X, act), (W,), (np.ones_like(W),))[1], rtol=1e-12)
    V = np.ones_like(W) * 0.3
    np.testing.assert_allclose(dt.hvp(predict)(W, X, act, V), dualtape.hvp(lambda w: predict(w, X, act), (W,), (V,)),
                               rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(dt.jacfwd(predict)(W, X, act), dualtape.grad(predict)(W, X, act), rtol=1e-12)


@pytest.mark.parametrize("act", [MODEL.act, Model(-0.5).act, functools.partial(scaled, a=2.0, k=0.5),
                                 functools.partial(scaled, np.array([0.5, -1.0])), functools.partial(np.power, 1.5)],
                         ids=["method", "method_2", "partial_keywords", "partial_array", "partial_numpy"])
def test_method_or_partial_as_argument(act, tmp_path):
    df = dt.grad(predict)
    np.testing.assert_allclose(df(W, X, act), dualtape.grad(predict)(W, X, act), rtol=1e-13)
    V = np.ones_like(W) * 0.3
    np.testing.assert_allclose(dt.hvp(predict)(W, X, act, V), dualtape.hvp(lambda w: predict(w, X, act), (W,), (V,)),
                               rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(dt.jvp(predict)(W, X, act, V)[1],
                               dualtape.jvp(lambda w: predict(w, X, act), (W,), (V,))[1], rtol=1e-12)


def test_each_function_gets_its_own_cached_version():
    df = dt.grad(predict)
    df(W, X, relu)
    df(W, X, np.tanh)
    assert "relu_vjp(" in df.source_for(W, X, relu) and "np.tanh(" not in df.source_for(W, X, relu)
    assert "np.tanh(" in df.source_for(W, X, np.tanh) and "relu" not in df.source_for(W, X, np.tanh)
    np.testing.assert_allclose(df(W, X, relu), dualtape.grad(predict)(W, X, relu), rtol=1e-13)


@pytest.mark.parametrize("fn", [method_of_global, method_of_local], ids=lambda f: f.__name__)
def test_methods_in_every_mode(fn):
    report = check_modes(fn, [W], raise_on_failure=False)
    assert not report.failures, report.failures
    assert {"transforms.grad", "transforms.jvp", "transforms.jvp_batched", "transforms.hvp"} <= set(report.checked)
    np.testing.assert_allclose(dt.hessian(fn)(W), dualtape.hessian(fn)(W), rtol=1e-10, atol=1e-12)


def test_method_of_an_argument():
    for model in (MODEL, Model(-0.5)):
        np.testing.assert_allclose(dt.grad(method_of_argument)(W, X, model),
                                   dualtape.grad(method_of_argument)(W, X, model), rtol=1e-13)
    with pytest.raises(TransformError, match=r"(?s)`model` is an instance of Model.*Leave `model` out of wrt"):
        dt.grad(method_of_argument, wrt=(0, 2))(W, X, MODEL)


def test_function_parameter_in_wrt_is_refused():
    with pytest.raises(TransformError, match="(?s)holds a function.*Leave `nonlinearity` out of wrt"):
        dt.grad(predict, wrt=(0, 2))(W, X, relu)


def recursive(x):
    def g(v, k):
        return v if k == 0 else g(v * 2.0, k - 1)
    return np.sum(g(x, 2))


def writes_nonlocal(x):
    s = x
    def g(v):
        nonlocal s
        s = s + v
        return s
    return np.sum(g(x))


def escapes(x):
    def g(v):
        return v * x
    return g


def rebinds(x):
    g = np.sin
    if np.sum(x) > 0.0:
        g = np.cos
    return np.sum(g(x))


def loop_breaks(x):
    for act in (np.sin, np.cos):
        if np.sum(x) > 10.0:
            break
        x = act(x)
    return np.sum(x)


def indexed_by_value(x, i):
    acts = (np.sin, np.cos)
    return np.sum(acts[i](x))


def generator(x):  # (a generator that ends is accepted: tests/test_transforms_generators.py)
    def g(v):
        while True:
            yield v
    return np.sum(x)


@pytest.mark.parametrize("fn, match", [
    (recursive, r"test_transforms_golden_functions.py:\d+ in recursive: the nested function `g` calls itself"),
    (writes_nonlocal, r"`nonlocal` in the nested function `g` is not supported.*\n  Return the value"),
    (escapes, r"the function value `g` is used other than by calling it"),
    (rebinds, r"`g` is bound to a function and bound again"),
    (generator, r"the nested function `g` is a generator that must run lazily"),
    (loop_breaks, r"`break` / `continue` in a loop over functions"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_refusals_name_construct_line_and_fix(fn, match):
    with pytest.raises(TransformError, match=match):
        dt.grad(fn)(X)


GOLDEN_CASES = {
    "functions_closure": (closure, None),
    "functions_nested_calls": (nested_calls, None),
    "functions_lambdas": (lambdas, None),
    "functions_argument_relu": (predict, (W, X, relu)),
    "functions_default": (predict, None),
    "functions_aliases": (aliases, None),
    "functions_partial": (partials, None),
    "functions_choice": (choice, None),
    "functions_loop_over_functions": (layers, None),
    "functions_map": (mapped, None),
    "functions_map_expressions": (mapped_in_expressions, None),
    "functions_methods": (method_of_argument, (W, X, MODEL)),
    "functions_argument_method": (predict, (W, X, MODEL.act)),
    "functions_argument_partial": (predict, (W, X, functools.partial(scaled, a=2.0, k=0.5))),
}


def test_callee_chosen_by_a_runtime_index_is_refused():
    with pytest.raises(TransformError, match=r"the function value `acts` is used other than by calling it"):
        dt.grad(indexed_by_value)(X, 1)


def test_choice_follows_the_flag():
    np.testing.assert_allclose(dt.grad(choice)(X - 0.3, False), 1 - np.tanh(X - 0.3) ** 2, rtol=1e-14)
    np.testing.assert_allclose(dt.grad(choice)(X - 0.3, True), (X - 0.3 >= 0.0) * 1.0, rtol=1e-14)


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_golden_source(name):
    fn, args = GOLDEN_CASES[name]
    df = dt.grad(fn)
    source = df.source if args is None else df.source_for(*args)
    assert_golden(name, source)


def test_golden_tangent_of_closure():
    source = dt.jvp(closure).source
    assert_golden("functions_jvp_closure", source)


@pytest.mark.parametrize("fn", [closure, nested_calls, lambdas, lambda_passed, layers, partials, choice, indexed],
                         ids=lambda f: f.__name__)
def test_jit_compiles_lifted_functions(fn):
    pytest.importorskip("numba")
    np.testing.assert_allclose(dt.grad(fn, jit=True)(X), dualtape.grad(fn)(X), rtol=1e-12)


def test_jit_fallback_warns_where_numba_cannot():  # (lists built in a loop: not a function value's limit)
    pytest.importorskip("numba")
    with pytest.warns(RuntimeWarning, match="jit='fallback': running the uncompiled"):
        g = dt.grad(mapped, jit="fallback")(X)
    np.testing.assert_allclose(g, dualtape.grad(mapped)(X), rtol=1e-12)
