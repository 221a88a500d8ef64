"""transforms/optimize/concrete.py: versions compiled for the arguments' shapes and dtypes (issue 13).

Each version must give what the general version (any shapes) gives: same values, shapes and
dtypes; new shapes compile a new version; after MAX_SHAPES of them the general one runs.
"""

import numpy as np
import pytest

import dualtape.transforms as dt
from dualtape.transforms import api


def mlp(w1, b1, w2, b2, x, y):
    h = np.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return np.sum((out - y) ** 2) / x.shape[0]


def broadcasts(x, b, c):
    return np.sum(np.sin(x * b) + c * x)


def _mlp_args(batch, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(5, 4), (4,), (4, 3), (1, 3), (batch, 5), (batch, 3)]
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _general(df, args):
    """The general version (any argument shapes), compiled."""
    return df.module.compile(df.name)(*args)


def _same(got, want, rtol=1e-12):
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w)
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-12)


def test_mlp_specialized_source_has_no_shape_helpers_and_matches_the_general_version():
    df = dt.grad(mlp, wrt=tuple(range(4)))
    args = _mlp_args(6)
    source = df.source_for(*args)
    for helper in ("unbroadcast", "unreduce", "matmul_cotangent", "np.shape"):
        assert helper not in source
    assert "b_add_matmul_x_w1_b1.sum(axis=0)" in source  # b1 (4,) under a (6, 4) sum
    assert "b_sub_out_y.sum(axis=0, keepdims=True)" in source  # b2 (1, 3): a kept axis (bout = b_sub_out_y: aliases.py)
    assert "_sub_out_y ** 2" not in source  # f's value: grad does not return it, nothing computes it
    _same(df(*args), _general(df, args))


def test_new_shapes_compile_a_new_version_and_the_general_one_after_max_shapes():
    df = dt.grad(mlp, wrt=tuple(range(4)))
    for batch in range(1, api.MAX_SHAPES + 3):
        args = _mlp_args(batch, seed=batch)
        _same(df(*args), _general(df, args))
    shaped = [k for k in df._compiled if isinstance(k[-3], tuple)]
    assert len(shaped) == api.MAX_SHAPES
    assert any(k[:6] == tuple([np.ndarray] * 6) and k not in shaped for k in df._compiled)  # then the general one


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtypes_are_those_of_the_general_version(dtype):
    df = dt.grad(mlp, wrt=tuple(range(4)))
    args = _mlp_args(3, dtype)
    _same(df(*args), _general(df, args), rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("shapes", [((3, 4), (4,), ()), ((3, 4), (1,), (3, 1)), ((2, 1, 4), (3, 1), (1,))])
def test_broadcast_operands_are_summed_back_to_their_shapes(shapes):
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s) if s else 0.7 for s in shapes]
    df = dt.grad(broadcasts, wrt=(0, 1, 2))
    _same(df(*args), _general(df, args))


def test_hvp_call_computes_only_the_tangent():
    h = dt.hvp(mlp, wrt=tuple(range(4)))
    args = _mlp_args(4)
    vs = tuple(np.ones_like(a) for a in args[:4])
    source = h.source_for(*args, vs)
    assert "return None, (" in source
    code = [line.strip() for line in source.splitlines() if not line.strip().startswith("#")]
    assert not any(line.startswith("bw1 = ") for line in code)  # the gradient itself is not computed
    assert any(line.startswith("dbw1 = ") for line in code)
    grad, hv = h.value_and_tangent(*args, vs)
    _same(h(*args, vs), hv)
    _same(grad, dt.grad(mlp, wrt=tuple(range(4)))(*args))


def keeps_a_raising_value(x, n):
    k = n // 2  # Python ints: kept, whatever its use
    return np.sum(x * x) + k


def test_python_int_arithmetic_is_never_dropped():
    df = dt.grad(keeps_a_raising_value)
    assert "k = n // 2" in df.source_for(np.ones(3), 4)
    np.testing.assert_allclose(df(np.ones(3), 4), 2 * np.ones(3))


def loop_changes_dtype(x, n):
    y = 1.0
    for _ in range(n):
        y = y * x  # a Python float, then arrays: two values, no shape is assumed
    return np.sum(y)


def test_a_name_holding_values_of_different_kinds_is_not_specialized():
    df = dt.grad(loop_changes_dtype)
    x = np.array([1.5, 2.0])
    np.testing.assert_allclose(df(x, 3), 3 * x ** 2)
    np.testing.assert_allclose(df(x, 0), np.zeros(2))


def test_repeated_hvp_calls_skip_the_checks_only_for_what_was_checked():
    h = dt.hvp(mlp, wrt=tuple(range(4)))
    args = _mlp_args(4)
    vs = tuple(np.full_like(a, 0.5) for a in args[:4])
    first, second = h(*args, vs), h(*args, vs)  # (the second runs the version found by shape_key)
    _same(second, first)
    _same(h(*args, list(vs)), first)
    with pytest.raises(TypeError, match="expected 4 tangents"):
        h(*args, vs[:3])
    with pytest.raises(Exception, match="complex"):
        h(*args, (vs[0] + 1j,) + vs[1:])
    _same(h(*_mlp_args(5), tuple(np.ones_like(a) for a in _mlp_args(5)[:4])),
          h.value_and_tangent(*_mlp_args(5), tuple(np.ones_like(a) for a in _mlp_args(5)[:4]))[1])


def _break_after_float_power(x, y):
    for s1, s2 in zip((x if 1.0 > 0.0 else x), np.float_power(x, 2)):
        if ((ba := s1) * ba) > 0.136:
            break
    return np.outer(x, np.linspace(-0.458, 0.674, 2)) @ np.concatenate([x[1:], x[:1]]) + np.sum(y, axis=0)


def test_a_loop_counter_read_only_by_its_increment_is_kept():
    # the long run (seed 301, program 294): the version for known shapes dropped the loop's
    # `_count1 = 0` as unread, since `_count1 += 1` reads it through a Store-context name
    x, y = np.array([-0.0, -1.224]), np.array([[-1.2, 0.5], [0.0, 1.1]])
    (gx, gy), value = dt.vjp(_break_after_float_power, wrt=(0, 1), preserve_result=True)(x, y, np.ones(2))
    np.testing.assert_allclose(value, _break_after_float_power(x, y))
    np.testing.assert_allclose(gy, np.ones((2, 2)))
