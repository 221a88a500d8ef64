"""Forward mode and hvp on non-elementwise ops: constants inside LINEAR ops, variadic ops
(concatenate, stack, einsum), adjoint helpers without registry rules (prod_others,
div_no_nan, einsum_vjp_rows), and vector tangents computed in one batched call.

Each function runs through dualtape.transforms.jvp / jacfwd / hvp / hessian and is compared
with the runtime modes (dualtape.functional: dual numbers and the tape) and with central
finite differences of the function or of its source gradient.
"""

import math

import dualtape.functional as F
import dualtape.transforms as dt
import numpy as np
import pytest
from dualtape.transforms import TransformError

C3 = np.array([0.5, -1.0, 2.0])


# regression: LINEAR ops with constant operands differentiated the constant (issue #6 gaps)
def add_call(x):
    return np.sum(np.add(x, 1.5) ** 2) + np.sum(np.subtract(2.0, x) ** 3)


def concat_literal(x):
    return np.sum(np.concatenate([x, [1.0]]) ** 2)


def concat_call_in_list(x):
    return np.sum(np.sin(np.concatenate([x, np.array([1.0, 2.0]), x * x])))


def concat_axis(x):
    m = np.reshape(x, (3, 1))
    return np.sum(np.sin(np.concatenate([m, np.ones((3, 1)) * 2.0, m * m], axis=-1)))


def stack_constant(x):
    return np.sum(np.cos(np.stack([x, C3, x * x], axis=1)))


def where_constant(x):
    return np.sum(np.where(x > 1.0, x, 2.0) ** 2) + np.sum(np.where(x > 1.0, C3, x) ** 3)


def pad_constant(x):
    return np.sum(np.sin(np.pad(x, 1, constant_values=2.0)))


def take_indices(x):
    return np.sum(np.sin(np.take(x, np.array([2, 0, 2])))) + np.sum(x[np.array([1, 1])] ** 3)


def broadcast_constant(x):
    return np.sum(np.sin(np.broadcast_to(x, (2, 3)) * np.arange(6.0).reshape(2, 3)))


def reductions_and_shapes(x):
    m = np.reshape(x, (3, 1)) * np.reshape(x, (1, 3))
    t = np.transpose(m) + np.expand_dims(np.sum(m, axis=0), 0)
    return np.mean(np.tanh(t)) + np.sum(np.sum(m * m, axis=1) ** 2)


def matmuls(x):
    w = np.arange(12.0).reshape(3, 4) / 10.0
    h = np.tanh(x @ w)
    m = np.reshape(x, (3, 1)) @ np.reshape(x, (1, 3))
    return np.sum(h ** 2) + np.sum(m @ x) + (x @ x) * 0.5


def prod_sum(x):
    return np.prod(x) * np.sum(x) + np.sum(np.prod(np.reshape(x, (3, 1)) * C3, axis=0))


def einsum_forms(x):
    m = np.reshape(x, (3, 1)) * C3
    return np.einsum("i,i->", x, x * x) + np.einsum("ij,j", m, x) @ x + np.einsum("ii", m)


def norms(x):
    return np.linalg.norm(x) * np.std(x) + np.var(x * x)


FUNCS = [add_call, concat_literal, concat_call_in_list, concat_axis, stack_constant, where_constant,
         pad_constant, take_indices, broadcast_constant, reductions_and_shapes, matmuls, prod_sum,
         einsum_forms, norms]
X = np.array([0.8, 1.3, 1.1])
U = np.array([0.3, -0.2, 0.5])


def _fd(f, x, u, eps=1e-6):
    return (np.asarray(f(x + eps * u)) - np.asarray(f(x - eps * u))) / (2 * eps)


def _close(a, b, rtol=1e-6, atol=1e-7):
    return np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=rtol, atol=atol)


@pytest.mark.parametrize("fn", FUNCS, ids=lambda f: f.__name__)
def test_jvp_matches_runtime_and_finite_differences(fn):
    value, tangent = dt.jvp(fn)(X.copy(), U)
    assert _close(value, fn(X.copy()), 1e-12)
    assert _close(tangent, _fd(fn, X, U), 1e-5, 1e-6), f"{fn.__name__}: jvp {tangent} vs finite difference"
    try:
        runtime = F.jvp(fn, (X.copy(),), (U,))[1]
    except Exception:  # noqa: BLE001 - the runtime cannot run this program (e.g. literal lists)
        return
    assert _close(tangent, np.asarray(runtime), 1e-9), f"{fn.__name__}: jvp {tangent} vs runtime {runtime}"


@pytest.mark.parametrize("fn", FUNCS, ids=lambda f: f.__name__)
def test_hvp_matches_finite_differences_of_the_gradient(fn):
    df = dt.grad(fn)
    got = dt.hvp(fn)(X.copy(), U)
    assert _close(got, _fd(lambda z: df(z.copy()), X, U), 1e-5, 1e-6), f"{fn.__name__}: hvp {got}"


@pytest.mark.parametrize("fn", FUNCS, ids=lambda f: f.__name__)
def test_hessian_and_jacfwd_in_one_batched_call(fn):
    H = dt.hessian(fn)(X.copy())
    cols = np.stack([dt.hvp(fn)(X.copy(), e) for e in np.eye(3)], axis=1)
    assert _close(H, cols, 1e-9, 1e-10), f"{fn.__name__}: hessian vs hvp columns"
    J = dt.jacfwd(dt.grad(fn).f)(X.copy())
    rows = np.array([dt.jvp(fn)(X.copy(), e)[1] for e in np.eye(3)])
    assert _close(J, rows, 1e-9, 1e-10)


def test_hessian_and_jacfwd_agree_with_the_runtime_modes():
    for fn in (reductions_and_shapes, matmuls, stack_constant, broadcast_constant, prod_sum, norms):
        assert _close(dt.hessian(fn)(X.copy()), np.asarray(F.hessian(fn)(X.copy())), 1e-8), fn.__name__

    def vector_out(x):
        m = np.reshape(x, (3, 1)) @ np.reshape(x, (1, 3))
        return np.concatenate([np.sum(m, axis=0), np.mean(np.transpose(m) * C3, axis=1), [1.0]])

    assert _close(dt.jacfwd(vector_out)(X.copy()), np.asarray(F.jacfwd(vector_out)(X.copy())), 1e-10)


def vector_program(x):
    m = np.reshape(x, (3, 1)) @ np.reshape(x, (1, 3))
    t = np.transpose(m, (1, 0)) + np.broadcast_to(x, (3, 3))
    c = np.concatenate([np.sum(t, axis=0), np.mean(m, axis=1), [2.0]])
    return np.stack([c, c * c], axis=0)


def mlp(w1, b1, w2, x):
    h = np.tanh(x @ w1 + b1)
    return np.mean((h @ w2) ** 2)


def test_common_ops_are_vectorized_not_looped():
    """jacfwd and hessian run one batched pass: no per-direction `each` for these ops."""
    fj = dt.jvp(vector_program)
    source = fj.source_for(X, np.eye(3))
    assert "each(" not in source, source
    rng = np.random.default_rng(0)
    w1, b1, w2, x = rng.standard_normal((4, 5)), rng.standard_normal(5), rng.standard_normal(5), rng.standard_normal((6, 4))
    fh = dt.hvp(mlp)
    source = fh.source_for(w1, b1, w2, x, np.eye(20).reshape(20, 4, 5))
    assert "each(" not in source, source
    H = dt.hessian(mlp)(w1, b1, w2, x)
    ref = np.asarray(F.hessian(lambda w: mlp(w, b1, w2, x))(w1))
    assert _close(H, ref, 1e-9, 1e-10)


def test_prod_hvp_is_exact_at_zeros():
    """prod_others' tangent counts zeros per group, like prod_others itself."""
    def f(x):
        return np.sum(np.prod(x, axis=1))
    df = dt.grad(f)
    for x in (np.array([[0.0, 2.0, 3.0], [1.5, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 2.0, -1.0]]),):
        u = np.arange(12.0).reshape(4, 3) / 7 - 0.8
        got = dt.hvp(f)(x.copy(), u)
        # f is a polynomial: central differences of its gradient are exact up to rounding
        assert _close(got, _fd(lambda z: df(z.copy()), x, u, 1e-3), 1e-8, 1e-9)


def stack_scalars(a):
    v = np.stack([a, 2.0, a * a])
    return np.sum(v ** 2)


def test_stack_of_scalars_with_a_literal():
    _, tangent = dt.jvp(stack_scalars)(0.7, 1.0)
    assert abs(tangent - (2 * 0.7 + 4 * 0.7 ** 3)) < 1e-12
    assert abs(dt.hvp(stack_scalars)(0.7, 1.0) - (2 + 12 * 0.7 ** 2)) < 1e-12


def test_hvp_refusals_name_transforms_hvp():
    # (np.outer, the construct this used to refuse, is supported since issue 9)
    def uses_einsum_of_a_variable(x, subscripts):
        return np.sum(np.einsum(subscripts, x, x))
    with pytest.raises(TransformError, match=r"(?s)^\[transforms\.hvp\].*einsum.*string literal"):
        dt.hvp(uses_einsum_of_a_variable)


def test_concatenate_of_a_variable_list_names_the_problem():
    def f(x):
        parts = [x]
        parts = parts + [x]  # (a list of one display, [x, x], is written out: star_args.py)
        return np.sum(np.concatenate(parts))
    with pytest.raises(TransformError, match="written out as a list"):
        dt.jvp(f)
    assert math.isclose(dt.grad(concat_call_in_list)(X.copy())[0],
                        float(np.cos(X[0]) + 2 * X[0] * np.cos(X[0] ** 2)), rel_tol=1e-12)
