"""Jacobians' cotangent rows that stay one-hot (rulekit/batched.py `_rows_product`).

A vectorized jacobian seeds rows of the identity; through elementwise rules they stay one-hot,
and the product with a constant matrix is then one row of it scaled, not a GEMM. It must give
the GEMM's numbers, and fall back to it for dense rows, non-finite matrices and other types.
"""

import numpy as np
import pytest

import dualtape as tf
from dualtape.core.rulekit.batched import _rows_product


def _one_hot(rows, m, dtype, seed=0):
    rng = np.random.default_rng(seed)
    out = np.zeros((rows, m), dtype=dtype)
    out[np.arange(rows), rng.integers(0, m, rows)] = rng.normal(size=rows)
    out[::7] = 0  # rows of zeros too
    return out


@pytest.mark.parametrize("dtypes", [(np.float64, np.float64), (np.float32, np.float32), (np.float32, np.float64)])
def test_one_hot_rows_give_the_gemm_numbers(dtypes):
    rows = _one_hot(300, 200, dtypes[0])
    other = np.random.default_rng(1).normal(size=(200, 40)).astype(dtypes[1])
    got = _rows_product(rows, other)
    want = rows @ other
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_dense_rows_and_non_finite_matrices_take_the_gemm():
    rng = np.random.default_rng(2)
    dense = rng.normal(size=(50, 200))
    other = rng.normal(size=(200, 30))
    np.testing.assert_array_equal(_rows_product(dense, other), dense @ other)
    two = _one_hot(50, 200, np.float64)
    two[3, 5] = two[3, 6] = 1.0  # a row with two nonzeros
    np.testing.assert_array_equal(_rows_product(two, other), two @ other)
    rows = _one_hot(50, 200, np.float64)
    bad = other.copy()
    bad[4, 2] = np.inf  # 0 * inf is NaN in the GEMM: the same NaNs
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(_rows_product(rows, bad), rows @ bad)


def test_dense_jacobian_matches_the_closed_form_and_the_row_loop():
    n = 200
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32)
    b = (rng.standard_normal((n, 1)) * 0.1).astype(np.float32)
    x = tf.constant(rng.standard_normal((n, 1)).astype(np.float32))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.tanh(tf.matmul(w, x) + b)
    vectorized = tape.jacobian(y, x).numpy()
    looped = tape.jacobian(y, x, experimental_use_pfor=False).numpy()
    yv = y.numpy()
    np.testing.assert_allclose(vectorized, ((1 - yv * yv) * w).reshape(n, 1, n, 1), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(vectorized, looped, rtol=1e-6, atol=1e-7)
