"""Reductions and nn primitives: rules vs finite differences, VJP/JVP adjointness, dtypes,
tapes, ties, zeros, stability at +-1000, and NumPy's signatures."""

import numpy as np
import pytest

import dualtape as tf
from dualtape import dnp
from dualtape.core.apply_rules import jvp_output, vjp_parts
from dualtape.ops import nn, reductions
from dualtape.registry import NOT_DIFFERENTIABLE

OPS = [op for module in (reductions, nn) for op in vars(module).values()
       if isinstance(op, type(reductions.SUM)) and op.has_rules]
CASES = [(op, sample) for op in OPS for sample in op.samples]
IDS = [f"{op.name}-{sample.__name__}" for op, sample in CASES]


def _draw(sample, seed=0):
    args, static = sample(np.random.default_rng(seed))
    return [np.asarray(a, dtype=np.float64) for a in args], static


def _jvp(op, args, static, tangents):
    ans = op.impl(*args, **static)
    out = jvp_output(op, tangents, ans, args, static)
    return np.zeros_like(ans) if out is None else np.asarray(out)


def _vjp(op, args, static, g):
    ans = op.impl(*args, **static)
    parts = vjp_parts(op, g, ans, args, static, list(range(len(args))))
    return [np.zeros_like(a) if p is None else np.asarray(p) for a, p in zip(args, parts)]


def _central(op, args, static, tangents, eps=1e-6):
    plus = op.impl(*[a + eps * t for a, t in zip(args, tangents)], **static)
    minus = op.impl(*[a - eps * t for a, t in zip(args, tangents)], **static)
    return (plus - minus) / (2 * eps)


@pytest.mark.parametrize("op,sample", CASES, ids=IDS)
def test_jvp_matches_central_difference(op, sample):
    args, static = _draw(sample)
    rng = np.random.default_rng(1)
    tangents = [rng.standard_normal(np.shape(a)) for a in args]
    numeric = _central(op, args, static, tangents)
    exact = _jvp(op, args, static, tangents)
    assert exact.shape == np.shape(numeric)
    np.testing.assert_allclose(exact, numeric, rtol=1e-6, atol=1e-6, err_msg=op.name)


@pytest.mark.parametrize("op,sample", CASES, ids=IDS)
def test_vjp_is_adjoint_of_jvp(op, sample):
    args, static = _draw(sample)
    rng = np.random.default_rng(2)
    tangents = [rng.standard_normal(np.shape(a)) for a in args]
    v = rng.standard_normal(np.shape(op.impl(*args, **static)))
    cotangents = _vjp(op, args, static, v)
    for a, c in zip(args, cotangents):
        assert c.shape == np.shape(a)
    lhs = np.sum(v * _jvp(op, args, static, tangents))
    rhs = sum(np.sum(t * c) for t, c in zip(tangents, cotangents))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-8, atol=1e-10, err_msg=op.name)


@pytest.mark.parametrize("op,sample", CASES, ids=IDS)
def test_float32_is_preserved(op, sample):
    args, static = _draw(sample)
    args = [a.astype(np.float32) for a in args]
    ans = op.impl(*args, **static)
    assert ans.dtype == np.float32, op.name
    g = np.ones(np.shape(ans), np.float32)
    for a, part in zip(args, vjp_parts(op, g, ans, args, static, list(range(len(args))))):
        assert np.asarray(part).dtype == np.float32 and np.shape(part) == a.shape, op.name
    out = jvp_output(op, [np.ones_like(a) for a in args], ans, args, static)
    assert np.asarray(out).dtype == np.float32, op.name
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(ans)), op.name


@pytest.mark.parametrize("op,sample", CASES, ids=IDS)
def test_tape_gradient_matches_vjp(op, sample):
    args, static = _draw(sample)
    tensors = [tf.constant(a) for a in args]
    with tf.GradientTape() as tape:
        for t in tensors:
            tape.watch(t)
        y = dnp.sum(op(*tensors, **static))
    grads = tape.gradient(y, tensors)
    expected = _vjp(op, args, static, np.ones(np.shape(op.impl(*args, **static))))
    for grad, e in zip(grads, expected):
        np.testing.assert_allclose(grad.numpy(), e, rtol=1e-12, atol=1e-12, err_msg=op.name)


# -- second order through nested tapes ---------------------------------------------------------

def _hessian_vector(fn, x, u, eps=1e-5):
    """(grad f(x + eps u) - grad f(x - eps u)) / 2 eps, with grads from a tape."""
    def grad(v):
        t = tf.constant(v)
        with tf.GradientTape() as tape:
            tape.watch(t)
            y = fn(t)
        return tape.gradient(y, t).numpy()
    return (grad(x + eps * u) - grad(x - eps * u)) / (2 * eps)


def _nested_hessian_vector(fn, x, u):
    t = tf.constant(x)
    with tf.GradientTape() as outer:
        outer.watch(t)
        with tf.GradientTape() as inner:
            inner.watch(t)
            y = fn(t)
        g = inner.gradient(y, t)
        gu = dnp.sum(g * tf.constant(u))
    return outer.gradient(gu, t).numpy()


SECOND_ORDER = {
    "prod": lambda t: dnp.sum(dnp.prod(t, axis=1) ** 2),
    "logsumexp": lambda t: dnp.sum(dnp.sin(dnp.logsumexp(t, axis=(0, 2)))),
    "softmax": lambda t: dnp.sum(dnp.softmax(t, axis=1) ** 3),
    "log_softmax": lambda t: dnp.sum(dnp.sin(dnp.log_softmax(t))),
    "var": lambda t: dnp.sum(dnp.var(t, axis=-1, ddof=1) ** 2),
    "std": lambda t: dnp.sum(dnp.exp(dnp.std(t, axis=0))),
    "norm": lambda t: dnp.sum(dnp.norm(t, axis=(1, 2)) ** 3),
    "max": lambda t: dnp.sum(dnp.max(t, axis=1) ** 2),
    "cumsum": lambda t: dnp.sum(dnp.sin(dnp.cumsum(t, axis=1, exclusive=True))),
    "mean": lambda t: dnp.sum(dnp.mean(t, axis=(0, -1), keepdims=True) ** 3),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_order_nested_tapes(name):
    rng = np.random.default_rng(3)
    x, u = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    fn = SECOND_ORDER[name]
    np.testing.assert_allclose(_nested_hessian_vector(fn, x, u), _hessian_vector(fn, x, u),
                               rtol=1e-5, atol=1e-6)


# -- max / min ties: the gradient is split evenly, as TF's reduce_max --------------------------

def _grad(fn, x):
    t = tf.constant(np.asarray(x, dtype=np.float64))
    with tf.GradientTape() as tape:
        tape.watch(t)
        y = fn(t)
    return tape.gradient(y, t).numpy()


def test_max_ties_split_evenly():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    expected = np.array([[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    np.testing.assert_allclose(_grad(lambda t: dnp.sum(dnp.max(t, axis=1)), x), expected)
    np.testing.assert_allclose(_grad(lambda t: dnp.sum(dnp.amax(t, axis=-1, keepdims=True)), x), expected)
    np.testing.assert_allclose(_grad(lambda t: dnp.max(t), x), [[0, 0.5, 0.5], [0, 0, 0]])
    np.testing.assert_allclose(_grad(lambda t: np.max(t, axis=(0, 1)), x), [[0, 0.5, 0.5], [0, 0, 0]])


def test_min_ties_split_evenly():
    x = np.array([[1.0, 1.0, 3.0], [2.0, 2.0, 2.0]])
    np.testing.assert_allclose(_grad(lambda t: dnp.sum(dnp.min(t, axis=1)), x),
                               [[0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3]])
    np.testing.assert_allclose(_grad(lambda t: dnp.sum(dnp.amin(t, axis=0) * [1.0, 2.0, 3.0]), x),
                               [[1, 2, 0], [0, 0, 3]])
    # the JVP uses the same shares: d min = mean of the tied tangents
    ans = reductions.MIN.impl(x, axis=1)
    dx = np.array([[5.0, 1.0, 3.0], [3.0, 6.0, 9.0]])
    np.testing.assert_allclose(jvp_output(reductions.MIN, [dx], ans, [x], {"axis": 1}), [3.0, 6.0])


# -- prod at zeros --------------------------------------------------------------------------------

def _others(x):
    return np.array([np.prod(np.delete(x, i)) for i in range(x.size)])


@pytest.mark.parametrize("zeros", [[], [1], [1, 3], [0, 2, 3]])
def test_prod_gradient_and_hessian_at_zeros(zeros):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(5) + 2.0
    x[zeros] = 0.0
    grad = _grad(lambda t: dnp.prod(t), x)
    np.testing.assert_allclose(grad, _others(x), atol=1e-14)
    hessian = np.array([[np.prod(np.delete(x, [i, j])) if i != j else 0.0 for j in range(5)]
                        for i in range(5)])
    for j in range(5):
        np.testing.assert_allclose(_nested_hessian_vector(lambda t: dnp.prod(t), x, np.eye(5)[j]),
                                   hessian[j], atol=1e-14)


def test_prod_zeros_with_axes_and_float32():
    x = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 4.0]], dtype=np.float32)
    grad = _grad(lambda t: dnp.sum(dnp.prod(t, axis=-1)), x.astype(np.float64))
    np.testing.assert_allclose(grad, [[6, 0, 0], [0, 0, 0]])
    ans = reductions.PROD.impl(x, axis=(0,), keepdims=True)
    part, = vjp_parts(reductions.PROD, np.ones_like(ans), ans, [x], {"axis": (0,), "keepdims": True}, [0])
    assert part.dtype == np.float32
    np.testing.assert_allclose(part, [[0, 0, 4], [0, 2, 3]])


# -- stability and NaN-free conventions --------------------------------------------------------

@pytest.mark.parametrize("fn", [lambda t: dnp.logsumexp(t, axis=-1), lambda t: dnp.softmax(t),
                                lambda t: dnp.log_softmax(t), lambda t: dnp.logsumexp(t)])
def test_stable_at_plus_minus_1000(fn):
    x = np.array([[1000.0, -1000.0, 999.0], [-1000.0, -1000.0, -1001.0]])
    for dtype in (np.float64, np.float32):
        t = tf.constant(x.astype(dtype))
        with tf.GradientTape() as tape:
            tape.watch(t)
            y = dnp.sum(dnp.sin(fn(t)))
        grad = tape.gradient(y, t).numpy()
        assert np.all(np.isfinite(y.numpy())) and np.all(np.isfinite(grad))
        assert grad.dtype == dtype


def test_logsumexp_values():
    x = np.array([[1000.0, 1000.0], [-1000.0, -np.inf]])
    np.testing.assert_allclose(dnp.logsumexp(x, axis=1), [1000 + np.log(2), -1000.0])
    assert dnp.logsumexp(np.full(3, -np.inf)) == -np.inf
    np.testing.assert_allclose(dnp.softmax(np.array([1000.0, 1000.0])), [0.5, 0.5])


def test_norm_and_std_at_zero_give_subgradient_zero():
    zero = np.zeros((2, 3))
    assert np.array_equal(_grad(lambda t: dnp.norm(t), zero), zero)
    assert np.array_equal(_grad(lambda t: dnp.sum(dnp.norm(t, axis=1)), zero), zero)
    assert np.array_equal(_grad(lambda t: dnp.sum(dnp.std(t, axis=0)), np.ones((2, 3))), zero)
    np.testing.assert_allclose(_grad(lambda t: dnp.norm(t), np.array([3.0, 4.0])), [0.6, 0.8])


def test_sigmoid_cross_entropy_matches_definition():
    labels, logits = np.array([0.0, 1.0, 0.3]), np.array([-2.0, 0.5, 3.0])
    s = 1 / (1 + np.exp(-logits))
    np.testing.assert_allclose(dnp.sigmoid_cross_entropy_with_logits(labels, logits),
                               -labels * np.log(s) - (1 - labels) * np.log(1 - s))


# -- NumPy's signatures and dispatch -----------------------------------------------------------

def test_numpy_signatures_and_values():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 4))
    for name in ("sum", "mean", "prod", "max", "min", "amax", "amin", "any", "all"):
        for axis in (None, 1, -1, (0, 2)):
            np.testing.assert_allclose(getattr(dnp, name)(x, axis, keepdims=True),
                                       getattr(np, name)(x, axis, keepdims=True))
    np.testing.assert_allclose(dnp.std(x, 1, ddof=1), np.std(x, 1, ddof=1))
    np.testing.assert_allclose(dnp.var(x, axis=(0, 1), ddof=1, keepdims=True),
                               np.var(x, axis=(0, 1), ddof=1, keepdims=True))
    np.testing.assert_allclose(dnp.cumsum(x, 1), np.cumsum(x, 1))
    np.testing.assert_allclose(dnp.cumsum(x), np.cumsum(x))
    np.testing.assert_allclose(dnp.norm(x[0]), np.linalg.norm(x[0]))
    np.testing.assert_allclose(dnp.norm(x, axis=-1, keepdims=True), np.linalg.norm(x, axis=-1, keepdims=True))
    np.testing.assert_allclose(dnp.norm(x[0], "fro", axis=(0, 1)), np.linalg.norm(x[0], "fro", axis=(0, 1)))
    np.testing.assert_array_equal(dnp.argmax(x, axis=1), np.argmax(x, axis=1))
    np.testing.assert_array_equal(dnp.argmin(x, -1, keepdims=True), np.argmin(x, -1, keepdims=True))
    np.testing.assert_array_equal(dnp.count_nonzero(x > 0, axis=(0, 1)), np.count_nonzero(x > 0, axis=(0, 1)))
    with pytest.raises(TypeError, match=r"\[max\] where="):
        dnp.max(x, where=x > 0)
    with pytest.raises(NotImplementedError, match=r"\[norm\] ord=1"):
        dnp.norm(x[0], 1)


def test_numpy_functions_on_tensors_are_recorded():
    x = np.array([[1.0, 2.0], [3.0, 5.0]])
    grad = _grad(lambda t: np.max(t, axis=0)[1] + np.std(t, ddof=1) + np.prod(t) + np.sum(np.cumsum(t, axis=1)), x)
    numeric = np.zeros_like(x)
    f = lambda v: np.max(v, axis=0)[1] + np.std(v, ddof=1) + np.prod(v) + np.sum(np.cumsum(v, axis=1))  # noqa: E731
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = 1e-6
        numeric[i] = (f(x + e) - f(x - e)) / 2e-6
    np.testing.assert_allclose(grad, numeric, rtol=1e-6)


def test_not_differentiable_ops():
    for op in (reductions.ANY, reductions.ALL, reductions.ARGMAX, reductions.ARGMIN,
               reductions.COUNT_NONZERO):
        assert op.vjp is NOT_DIFFERENTIABLE and op.jvp is NOT_DIFFERENTIABLE
    t = tf.constant([1.0, 3.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(t)
        index = dnp.argmax(t)
        y = dnp.sum(t) * 0 + dnp.max(t)
    assert int(index.numpy()) == 1
    np.testing.assert_allclose(tape.gradient(y, t).numpy(), [0, 1, 0])


# -- forward mode: dual numbers, and forward-over-forward for second order ---------------------

def _dual(x, u, tag=None):
    from dualtape.forward.dual import Dual, new_tag
    return Dual(x, u, new_tag() if tag is None else tag)


@pytest.mark.parametrize("op,sample", CASES, ids=IDS)
def test_dual_numbers_match_jvp(op, sample):
    args, static = _draw(sample)
    rng = np.random.default_rng(6)
    tangents = [rng.standard_normal(np.shape(a)) for a in args]
    out = op(*[_dual(a, t) if i == 0 else a for i, (a, t) in enumerate(zip(args, tangents))], **static)
    expected = _jvp(op, args, static, [tangents[0]] + [None] * (len(args) - 1))
    np.testing.assert_allclose(np.asarray(out.tangent), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(out.primal), op.impl(*args, **static))


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_order_forward_over_forward(name):
    rng = np.random.default_rng(7)
    x, u = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    fn = SECOND_ORDER[name]
    from dualtape.forward.dual import new_tag
    inner_tag, outer_tag = new_tag(), new_tag()
    # d/dt d/ds f(x + s u + t u) at 0 = u^T H u: the outer tangent's inner tangent
    y = fn(_dual(_dual(x, u, inner_tag), _dual(u, np.zeros_like(u), inner_tag), outer_tag))
    second = np.asarray(y.tangent.tangent)
    numeric = np.sum(_hessian_vector(fn, x, u) * u)
    np.testing.assert_allclose(second, numeric, rtol=1e-5, atol=1e-6)


def _clip_equal_bounds(x, a):
    return np.sum(np.clip(x, a, a) * x) + np.sum(np.clip(x, 0.5, 0.2))


def test_clip_with_equal_or_crossed_bounds_follows_hi():
    # np.clip(x, a, a) is a for every x: derivative 0 in x (the inclusive-bounds convention gave
    # 1 at x == a: the long run, seed 302, programs 685 and 2566), 1 in a; lo > hi: hi everywhere
    from dualtape.testing import check_modes
    report = check_modes(_clip_equal_bounds, [np.array([0.1, 0.3, 0.7]), 0.3])
    assert "transforms.grad" in report.checked
    g = tf.grad(lambda x: np.sum(np.clip(x, 0.3, 0.3)))(np.array([0.1, 0.3, 0.7]))
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(tf.grad(lambda a: np.sum(np.clip(np.array([0.1, 0.3, 0.7]), a, a)))(0.3), 3.0)
