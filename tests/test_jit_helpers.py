"""jit=True and the runtime helpers generated code calls (transforms/jit/runtime.py, jit/reductions.py).

Every helper of dualtape.transforms.runtime that generated code may call has a numba twin, or
is found before compiling and the uncompiled code runs with a warning naming it. Reductions over
an axis and with keepdims (softmax, log-sum-exp, batch means) compile through twins of their own.
"""

import ast
import warnings

import numpy as np
import pytest

import dualtape
import dualtape.transforms as dt
from dualtape.transforms.frontend.parse import TransformError

numba = pytest.importorskip("numba", reason="numba is an optional extra: pip install 'dualtape[jit]'")


def mlp_xent(W1, b1, W2, b2, x, y):
    h = np.tanh(x @ W1 + b1)
    logits = h @ W2 + b2
    m = np.max(logits, axis=1, keepdims=True)
    z = logits - m
    lse = np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    logp = z - lse
    return -np.mean(np.sum(logp * y, axis=1))


def reductions(x):
    a = np.max(x, axis=0) + np.min(x, axis=0)
    b = np.mean(x, axis=1, keepdims=True) * np.max(x, axis=1, keepdims=True)
    c = np.min(x, axis=-1, keepdims=True) + np.mean(x, axis=0, keepdims=True)
    return np.sum(a) + np.sum(b * c) + np.mean(x) + np.max(x, keepdims=True)[0, 0]


def differenced(x):
    y = np.diff(x * x)
    return np.sum(np.sin(y))


def _problem(seed=0, batch=6):
    rng = np.random.default_rng(seed)
    W1, b1 = rng.normal(size=(5, 8)), rng.normal(size=8)
    W2, b2 = rng.normal(size=(8, 3)), rng.normal(size=3)
    x, y = rng.normal(size=(batch, 5)), np.eye(3)[rng.integers(0, 3, size=batch)]
    return (W1, b1, W2, b2, x, y), tuple(rng.normal(size=a.shape) for a in (W1, b1, W2, b2))


def _compiled(df):
    """Whether the latest call ran numba's code (not the uncompiled fallback)."""
    return df.fallback_reason is None and isinstance(df._last.fn, numba.core.registry.CPUDispatcher)


def test_grad_of_softmax_cross_entropy_compiles():
    args, _ = _problem()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback
        df = dt.grad(mlp_xent, wrt=(0, 1, 2, 3), jit=True)
        got = df(*args)
    assert _compiled(df)
    expected = dualtape.grad(mlp_xent, argnums=(0, 1, 2, 3))(*args)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)


def test_hvp_of_softmax_cross_entropy_compiles():
    args, v = _problem(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = dt.hvp(mlp_xent, wrt=(0, 1, 2, 3), jit=True)
        got = df(*args, v)
    assert _compiled(df)
    expected = dualtape.hvp(lambda *p: mlp_xent(*p, *args[4:]), args[:4], v)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 5), (1, 3), (3, 1)])
def test_reductions_over_an_axis_compile(shape):
    x = np.random.default_rng(2).normal(size=shape)
    df = dt.grad(reductions, jit=True)
    np.testing.assert_allclose(df(x), dualtape.grad(reductions)(x), rtol=1e-12, atol=1e-14)
    assert _compiled(df)
    assert "reduce_max(x, 0)" in df.source and "reduce_mean_kept(x, 1)" in df.source


def test_tied_maxima_share_the_gradient_compiled():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.5, 2.0], [2.0, 0.5, 1.0]])  # ties in rows and in columns
    df = dt.grad(reductions, jit=True)
    np.testing.assert_allclose(df(x), dualtape.grad(reductions)(x), rtol=1e-12, atol=1e-14)
    assert _compiled(df)


def test_twins_of_the_reductions_agree_with_numpy():
    from dualtape.transforms.jit.runtime import KEPT, reduce_max, reduce_mean, reduce_min, reduce_sum
    max_kept, min_kept, mean_kept, sum_kept = (KEPT[name] for name in ("max", "min", "mean", "sum"))

    @numba.njit
    def over(x, k):
        return (reduce_max(x, k), reduce_min(x, k), reduce_mean(x, k), reduce_sum(x, k),
                max_kept(x, k), min_kept(x, k), mean_kept(x, k), sum_kept(x, k))

    rng = np.random.default_rng(3)
    for shape in [(5,), (3, 4), (2, 3, 4)]:
        x = rng.normal(size=shape)
        for k in range(-len(shape), len(shape)):
            got = over(x, k)
            expected = [f(x, axis=k, keepdims=kept) for kept in (False, True)
                        for f in (np.max, np.min, np.mean, np.sum)]
            for g, e in zip(got, expected):
                assert np.shape(g) == np.shape(e)
                np.testing.assert_allclose(g, e, rtol=1e-13)
    x = rng.normal(size=(3, 4))
    x[1, 2] = np.nan
    np.testing.assert_array_equal(over(x, 1)[0], np.max(x, axis=1))  # NaN propagates
    np.testing.assert_array_equal(over(x, 0)[1], np.min(x, axis=0))


def test_a_helper_without_a_twin_is_named_with_every_other():
    x = np.random.default_rng(4).normal(size=6)
    with pytest.raises(TransformError, match="(?s)undiff is a helper.*no compiled twin.*every helper it calls "
                                             "without a compiled twin: undiff\\)"):
        dt.grad(differenced, jit=True)(x)
    df = dt.grad(differenced, jit="fallback")
    with pytest.warns(RuntimeWarning, match="(?s)undiff.*jit='fallback': running the uncompiled generated code"):
        got = df(x)
    np.testing.assert_allclose(got, dt.grad(differenced)(x), rtol=1e-15)
    assert "undiff" in df.fallback_reason


def test_untwinned_helpers_are_named():
    from dualtape.transforms.jit.refusals import untwinned_helpers
    from dualtape.transforms.jit.runtime import NAMES
    tree = ast.parse("def f(x):\n    a = tie_share(x, x, 1, True) + untranspose(x, None) + undiff(x, 1, -1)\n"
                     "    return dnp.sigmoid(a) + unbroadcast(a, (2,)) + np.sum(a) + list_add_adjoint(a, a, a, 0)")
    assert untwinned_helpers(tree.body, NAMES) == ["undiff", "dnp.sigmoid"]


def permuted(x):
    y = np.transpose(x * x, (2, 0, 1))
    return np.sum(np.sin(y) * np.transpose(x).sum())


def test_transposes_compile():
    x = np.random.default_rng(5).normal(size=(2, 3, 4))
    for fn in (permuted,):
        df = dt.grad(fn, jit=True)
        np.testing.assert_allclose(df(x), dualtape.grad(fn)(x), rtol=1e-12)
        assert _compiled(df)
