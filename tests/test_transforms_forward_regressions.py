"""Regressions of issue 9 in forward mode, hvp and mixed mode (generated code on tensors and
dual numbers): each was a wrong number or a crash. Every mode is compared with central
finite differences of the original function (run on copies) or of its checked gradient.
"""

import math

import numpy as np
import pytest

import dualtape
import dualtape.functional as F
import dualtape.transforms as dt
from dualtape.transforms import TransformError

RNG = np.random.default_rng(9)
U6 = RNG.uniform(0.0, 1.0, 6)
A3 = RNG.uniform(-1.0, 1.0, (3, 3)) + 3.0 * np.eye(3)


def _copies(args):
    return [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]


def _with(args, i, value):
    args = _copies(args)
    args[i] = value
    return args


def fd_directional(f, args, i, u, eps=1e-6):
    """(f(x + eps u) - f(x - eps u)) / 2 eps along u in args[i]."""
    hi = f(*_with(args, i, args[i] + eps * u))
    lo = f(*_with(args, i, args[i] - eps * u))
    return (np.asarray(hi, dtype=float) - np.asarray(lo, dtype=float)) / (2 * eps)


def _direction(x, seed=1):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, np.shape(x)) if isinstance(x, np.ndarray) else 0.7


def _close(got, expected, rtol=1e-6, atol=1e-6):
    got = np.asarray(got, dtype=float)
    assert got.shape == np.shape(expected), (got.shape, np.shape(expected))
    assert np.allclose(got, expected, rtol=rtol, atol=atol), (got, expected)


def check_forward(f, args, i=0):
    """transforms.jvp with one and with two directions against finite differences of f."""
    u = _direction(args[i])
    expected = fd_directional(f, args, i, u)
    value, tangent = dt.jvp(f, wrt=i)(*_copies(args), u)
    _close(value, f(*_copies(args)), 1e-12)
    _close(tangent, expected)
    if isinstance(args[i], np.ndarray) or not isinstance(args[i], float):
        us = np.stack([u, -2.0 * np.asarray(u)])
    else:
        us = np.array([u, -2.0 * u])
    _, tangents = dt.jvp(f, wrt=i)(*_copies(args), us)
    _close(np.asarray(tangents)[1], -2.0 * expected)


def check_hvp(f, args, i=0):
    """The gradient against finite differences of f, then transforms.hvp against finite
    differences of that gradient."""
    g = dt.grad(f, wrt=i)
    x = args[i]
    if isinstance(x, np.ndarray):
        numeric = np.array([fd_directional(f, args, i, e.reshape(x.shape)) for e in np.eye(x.size)]).reshape(x.shape)
    else:
        numeric = fd_directional(f, args, i, 1.0)
    _close(g(*_copies(args)), numeric, 1e-5)
    u = _direction(x)
    _close(dt.hvp(f, wrt=i)(*_copies(args), u), fd_directional(g, args, i, u), 1e-5)


def check_mixed(f, args, i=0):
    """The generated gradient run on dual numbers (dualtape.jvp) and recorded by a
    GradientTape: both give the Hessian along u, as finite differences of the gradient."""
    g = dt.grad(f, wrt=i)
    u = _direction(args[i])
    expected = fd_directional(g, args, i, u)
    _, over = F.jvp(lambda xi: g(*_with(args, i, xi)), (args[i],), (u,))
    _close(over, expected, 1e-5)
    t = dualtape.constant(np.asarray(args[i], dtype=float))
    with dualtape.GradientTape() as tape:
        tape.watch(t)
        gv = g(*_with(args, i, t))
        s = dualtape.reduce_sum(gv * u)
    recorded = tape.gradient(s, t)  # None: unconnected (as in TF), a zero Hessian along u
    _close(np.zeros(np.shape(args[i])) if recorded is None else recorded, expected, 1e-5)


def check_all(f, args, i=0):
    check_forward(f, args, i)
    check_hvp(f, args, i)
    check_mixed(f, args, i)


# -- issue 9: explicit finite-difference schemes (a copy every outer step, u[i] = ... inside) --

def heat_copy_read(u0, nu):
    u = u0.copy()
    for t in range(3):
        v = u.copy()
        for i in range(1, len(u0) - 1):
            u[i] = v[i] + nu * (v[i + 1] - 2.0 * v[i] + v[i - 1]) + 0.1 * v[i] ** 2
    return np.sum(u ** 2)


def heat_shifted_copy(u0, nu):
    u = u0.copy()
    for t in range(3):
        v = u + 0.0
        for i in range(1, len(u0) - 1):
            u[i] = v[i] + nu * (v[i + 1] - 2.0 * v[i] + v[i - 1]) + 0.1 * v[i] ** 2
    return np.sum(u ** 2)


def heat_copy_back(u0, nu):
    u = u0.copy()
    for t in range(3):
        un = u.copy()
        for i in range(1, len(u0) - 1):
            un[i] = u[i] + nu * (u[i + 1] - 2.0 * u[i] + u[i - 1]) + 0.1 * u[i] ** 2
        u = un.copy()
    return np.sum(u ** 2)


def heat_canonical(u0, nu):
    u = u0.copy()
    for t in range(3):
        un = u.copy()
        for i in range(1, len(u0) - 1):
            un[i] = u[i] + nu * (u[i + 1] - 2.0 * u[i] + u[i - 1]) + 0.1 * u[i] ** 2
        u = un
    return np.sum(u ** 2)


def heat_zeros_buffer(u0, nu):
    u = u0.copy()
    for t in range(3):
        un = np.zeros(len(u0))
        for i in range(1, len(u0) - 1):
            un[i] = u[i] + nu * (u[i + 1] - 2.0 * u[i] + u[i - 1])
        un[0] = u[0]
        un[len(u0) - 1] = u[len(u0) - 1] * u[0]
        u = un
    return np.sum(u ** 3)


@pytest.mark.parametrize("f", [heat_copy_read, heat_shifted_copy, heat_copy_back, heat_canonical, heat_zeros_buffer])
@pytest.mark.parametrize("i", [0, 1])
def test_explicit_scheme(f, i):
    # issue 9: `v = u.copy()` gave `dv = du`, so `du[i] = ...` changed dv too (jvp and hvp wrong)
    check_all(f, [U6, 0.2], i)


# -- issue 9: a return inside a nested loop --------------------------------------------------

def nested_return(x):
    s = 0.0
    for i in range(3):
        for j in range(3):
            s = s + x * (i + j)
            if s > 2.0:
                return s * x
    return s


def nested_return_while(x):
    s = 0.0
    k = 0
    while k < 4:
        for j in range(3):
            s = s + x * math.sin(j + k)
            if s > 1.5:
                return s * s
        k = k + 1
    return s


@pytest.mark.parametrize("f, x", [(nested_return, 0.3), (nested_return, 2.5), (nested_return, 0.05),
                                  (nested_return_while, 0.8)])
def test_return_in_nested_loop(f, x):
    # issue 9: the return only left the inner loop; the outer one ran on (and returned again)
    check_all(f, [x])


# -- issue 9: np.array of traced scalars, list literals in array arithmetic -----------------

def array_of_scalars(x1):
    a = np.array([x1, x1 * x1])
    return np.sum(a * a)


def array_nested(x):
    m = np.array([[x[0], x[1]], [x[1] * x[0], 2.0]])
    return np.sum(np.sin(m @ m))


def list_times_array(x):
    return np.sum(x * [x[0], 2.0])


def list_in_ufunc(a):
    return np.sum(np.multiply([a, 1.0], [2.0, a]) + [a, a * a])


def list_nested_times(x):
    return np.sum(np.stack([x, x]) * [[1.0], [x[0]]])


def list_concatenation(a):
    # Python's list operators stay what they are
    y = [a, 2.0] + [a * a]
    z = [a] * 2
    return y[0] * y[2] + z[1]


@pytest.mark.parametrize("f, x", [(array_of_scalars, 0.4), (array_nested, np.array([0.3, -0.6])),
                                  (list_times_array, np.array([0.3, 0.9])), (list_in_ufunc, 0.6),
                                  (list_nested_times, np.array([0.2, -0.5]))])
def test_list_literals_as_arrays(f, x):
    # issue 9: crashes (jvp/hvp), wrong batched tangents, and 0 through a tape
    check_all(f, [x])


def test_list_operators_stay_list_operators():
    check_forward(list_concatenation, [0.7])


def named_list(x):
    y = [x[0], x[1] * 2.0]
    return np.sum(np.sin(y) * x) + np.sum(y) * np.mean([y, x])


def test_named_list_as_array_operand():
    # issue 9: with k tangent directions the list of the items' (k,) tangents was read by NumPy
    # as a (2, k) array: the batch axis in the wrong place, a silently wrong Jacobian
    check_forward(named_list, [np.array([0.3, 0.9])])
    check_hvp(named_list, [np.array([0.3, 0.9])])
    # and on tensors NumPy's reading of a list of tensors as an array dropped the gradient (0.0):
    # a name bound only to literals of L items is stacked from its items, y[0], ..., y[L-1]
    check_mixed(named_list, [np.array([0.3, 0.9])])
    J = dt.jacfwd(named_list)(np.array([0.3, 0.9]))
    numeric = [fd_directional(named_list, [np.array([0.3, 0.9])], 0, e) for e in np.eye(2)]
    _close(J, numeric)


# -- issue 9: mixed mode, parameters rebound to other shapes and writes into buffers ----------

def rebind_row(x):
    x = x[1]
    return x * x


def rebind_matmul(x, k):
    x = np.dot(x, k)
    return np.sum(np.sin(x))


def buffer_writes(x):
    y = np.zeros(3)
    y[0] = x[0] * x[1]
    y[1:] = x[1:] ** 2
    return np.sum(y * y)


@pytest.mark.parametrize("f, args", [(rebind_row, [np.array([0.2, 0.7, 1.1])]),
                                     (rebind_matmul, [np.array([0.2, 0.7, 1.1]), A3[:, :2]]),
                                     (buffer_writes, [np.array([0.2, 0.7, 1.1])])])
def test_mixed_mode_writes_and_rebinding(f, args):
    # issue 9: `add_at` on a float, reshape errors, writes into tensors, and a tape recording
    # writes into NumPy buffers silently gave 0
    check_all(f, args)


def unused_argument(x, y):
    return np.sum(x * x)


def test_zero_gradient_has_the_arguments_shape():
    # issue 9: a generated gradient on tensors returned 0.0 of shape () for y
    g = dt.grad(unused_argument, wrt=(0, 1))
    x, y = np.array([0.5, 1.5]), np.array([[1.0, 2.0, 3.0]])
    gx, gy = g(dualtape.constant(x), dualtape.constant(y))
    assert np.shape(gy) == y.shape and not np.any(np.asarray(gy))
    _, (dgx, dgy) = F.jvp(lambda a: g(a, y), (x,), (np.ones(2),))
    assert np.shape(dgy) == y.shape and not np.any(np.asarray(dgy))
    _close(dgx, 2.0 * np.ones(2))


# -- issue 9: a name rebound to a value of constants, in forward mode ----------------------

def tuple_then_rebind(x0, k):
    s, w = (x0, k)
    x0 = w @ w
    return np.sum(x0 * s)


def test_active_name_rebound_to_constants():
    # issue 9: `x0 = w @ w` (no operand carries a tangent) crashed forward mode (IndexError)
    check_all(tuple_then_rebind, [RNG.uniform(0, 1, (2, 2)), RNG.uniform(0, 1, (2, 2))])


# -- issue 9: hvp of a non-scalar output ---------------------------------------------------

def scaled(x, y):
    return x * y


def elementwise_square(x):
    return x * x


def test_hvp_refuses_a_non_scalar_output():
    # issue 9: hvp of x * y (y an array) returned 0.0, the Hessian of the sum, without a word
    with pytest.raises(ValueError, match=r"\[transforms.hvp\] scaled returned a value of shape \(2,\); .*scalar"):
        dt.hvp(scaled)(1.0, np.ones(2), 1.0)
    with pytest.raises(ValueError, match=r"elementwise_square returned a value of shape \(3,\)"):
        dt.hvp(elementwise_square)(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        dt.hessian(elementwise_square)(np.ones(3))
    # scalar outputs are unchanged
    assert dt.hvp(scaled)(1.5, 2.0, 1.0) == 0.0
    assert dt.hvp(elementwise_square)(1.5, 1.0) == 2.0


# -- issue 9: np.linalg under forward mode, hvp and mixed mode ----------------------------

def solve_vector(a, b):
    return np.sum(np.linalg.solve(a, b) ** 2)


def solve_matrix(a, b):
    return np.sum(np.sin(np.linalg.solve(a, b)))


def solve_stacked(a, b):
    return np.sum(np.linalg.solve(a, b) ** 2)


def inverse(a):
    return np.sum(np.linalg.inv(a) ** 2)


def determinant(a):
    return np.linalg.det(a) ** 2


def determinant_stacked(a):
    return np.sum(np.linalg.det(a) ** 2)


def log_determinant(a):
    s, l = np.linalg.slogdet(a)
    return l * l + s


def log_determinant_index(a):
    return np.linalg.slogdet(a @ a.T + np.eye(3))[1] * np.sum(a)


def cholesky(a):
    lower = np.linalg.cholesky(a @ a.T + 3.0 * np.eye(3))
    return np.sum(lower ** 3)


B3 = RNG.uniform(-1.0, 1.0, 3)
LINALG = [(solve_vector, [A3, B3], 0), (solve_vector, [A3, B3], 1),
          (solve_matrix, [A3, RNG.uniform(-1.0, 1.0, (3, 2))], 0),
          (solve_stacked, [np.stack([A3, A3.T]), RNG.uniform(-1.0, 1.0, (2, 3, 2))], 0),
          (inverse, [A3], 0), (determinant, [A3], 0), (determinant_stacked, [np.stack([A3, A3.T])], 0),
          (log_determinant, [A3], 0), (log_determinant_index, [A3], 0), (cholesky, [A3], 0)]


@pytest.mark.parametrize("f, args, i", LINALG, ids=[f"{c[0].__name__}-{c[2]}" for c in LINALG])
def test_linalg(f, args, i):
    # issue 9: solve with a vector b failed with a reshape error (the op's rules are for
    # matrices), det and cholesky under hvp met adjoint helpers without forward rules
    # (matrix_scalar, lower_half_diagonal), slogdet was refused in every mode
    check_all(f, args, i)


# -- issue 9: np.outer, np.tensordot, np.trace, np.diagonal and einsum with '...' ---------

def outer(x, y):
    return np.sum(np.outer(x, y) ** 2)


def outer_of_a_matrix(a, b):
    return np.sum(np.outer(a, b) ** 2)


def tensordot(x, y):
    return np.sum(np.tensordot(x, y, axes=1) ** 2)


def tensordot_pairs(x, y):
    return np.sum(np.tensordot(x, y, axes=([0, 1], [1, 0])) ** 2) + np.sum(np.tensordot(x, x, 0))


def trace(a):
    return np.trace(a @ a) ** 2


def trace_offsets(a):
    return np.trace(a[:, :2] * a[:, :2], 1) + np.trace(a, offset=-1) ** 2


def diagonal(a):
    return np.sum(np.diagonal(a @ a) ** 2)


def diagonal_axes(t):
    return np.sum(np.sin(np.diagonal(t, 0, 2, 0))) * np.sum(np.diagonal(t, axis1=1, axis2=2) ** 2)


def einsum_ellipsis(a, b):
    return np.sum(np.einsum('...ij,...jk->...ik', a, b) ** 2)


def einsum_ellipsis_implicit(a, b):
    return np.sum(np.einsum('...i,...i', a, b) ** 2)


EINSUMS = [(outer, [RNG.uniform(0, 1, 3), RNG.uniform(0, 1, 2)]),
           (outer_of_a_matrix, [RNG.uniform(-1, 1, (2, 2)), RNG.uniform(-1, 1, 3)]),
           (tensordot, [RNG.uniform(0, 1, (2, 3)), RNG.uniform(0, 1, (3, 2))]),
           (tensordot_pairs, [RNG.uniform(-1, 1, (2, 3)), RNG.uniform(-1, 1, (3, 2))]),
           (trace, [A3]), (trace_offsets, [A3]), (diagonal, [A3]),
           (diagonal_axes, [RNG.uniform(-1, 1, (2, 3, 2))]),
           (einsum_ellipsis, [RNG.uniform(0, 1, (2, 2, 3)), RNG.uniform(0, 1, (2, 3, 2))]),
           (einsum_ellipsis_implicit, [RNG.uniform(-1, 1, (2, 3)), RNG.uniform(-1, 1, 3)])]


@pytest.mark.parametrize("f, args", EINSUMS, ids=[c[0].__name__ for c in EINSUMS])
@pytest.mark.parametrize("i", [0, 1])
def test_einsum_family(f, args, i):
    # issue 9: all of these were refused in every mode
    if i < len(args):
        check_all(f, args, i)


# -- issue 9: for over a list of tuples of arrays ------------------------------------------

W2 = np.array([[0.5, -0.2], [0.1, 0.3]])


def layers_from_a_list_of_tuples(x, w):
    for W, b in [(w, x), (w.T, x * 2.0)]:
        x = np.tanh(W @ x + b)
    return np.sum(x ** 2)


@pytest.mark.parametrize("i", [0, 1])
def test_loop_over_a_list_of_tuples(i):
    # issue 9: the adjoint of the list of tuples added a tuple's adjoint to the list item by
    # list concatenation (runtime.add_at), so every mode built on the gradient was wrong
    check_all(layers_from_a_list_of_tuples, [np.array([0.3, 0.6]), W2], i)


# -- issue 9: generated code on tensors and duals calling user helpers that copy and write --

def copies_and_writes(v):
    w = v.copy()
    w[0] = w[0] * w[1]
    return w


def scaled_cosine(a, b):
    return a * np.cos(b)


def calls_helpers(x):
    u = copies_and_writes(x)
    return np.sum(u * scaled_cosine(u, x))


def test_mixed_mode_through_helpers_that_copy_and_write():
    # issue 9: the generated gradient's forward sweep called the user's helper on tensors and
    # dual numbers, which have no .copy() and cannot be written into (AttributeError)
    check_all(calls_helpers, [np.array([0.3, 0.6])])


# -- issue 10 (findings/programs.md, from H4): complex values in the transformer -----------
# refused until issue 22 designed them: now differentiated where every op has complex rules

def complex_scale(x):
    return np.abs(x * (1 + 2j))


def complex_maximum(x):
    return np.abs(np.maximum(x, 0.0) * (1 + 2j))


def sum_of_squares(x):
    return np.sum(x * x)


def test_complex_literal_differentiated():
    # the generated code gave (-1.34+1.79j) for a derivative whose true value is 2.236
    _close(dt.grad(complex_scale)(1.0), np.sqrt(5.0))
    assert isinstance(dt.grad(complex_scale)(1.0), float) or np.asarray(dt.grad(complex_scale)(1.0)).dtype == np.float64
    _close(dt.jvp(complex_scale)(1.0, 1.0)[1], np.sqrt(5.0))


@pytest.mark.parametrize("transform", [dt.grad, dt.jvp])
def test_complex_literal_meeting_an_op_without_complex_rules_refused(transform):
    with pytest.raises(TransformError, match=r"(?s)complex_maximum.*complex value `2j` is differentiated along with the op Maximum"):
        transform(complex_maximum)


def _helper_with_maximum(y):
    return np.maximum(np.real(y), 0.0) + np.imag(y)


def complex_into_helper(x):
    return _helper_with_maximum(x * (1 + 2j)) * x


def test_complex_literal_reaching_a_called_function_without_complex_rules_refused():
    # the literal in f, the op without complex rules in the function it calls
    with pytest.raises(TransformError, match=r"(?s)complex value `2j` is differentiated along with the op Maximum"):
        dt.grad(complex_into_helper)(1.5)


def test_hvp_refuses_complex_values():
    # forward over source reverse reads adjoint helpers whose tangents are declared for reals
    with pytest.raises(TransformError, match=r"complex value `2j`"):
        dt.hvp(complex_scale)(1.0, 1.0)
    with pytest.raises(TypeError, match=r"\[abs_cotangent\] .*complex"):
        dt.hvp(lambda z: np.abs(z) ** 2)(1.0 + 1.0j, 1.0 + 0j)


def holomorphic_poly(z):
    return z * z + np.exp(z)


def test_jacfwd_complex_as_jax():
    z = np.array([1 + 1j, 0.5 - 2j])
    np.testing.assert_allclose(dt.jacfwd(holomorphic_poly, holomorphic=True)(z), np.diag(2 * z + np.exp(z)),
                               rtol=1e-14)
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs"):
        dt.jacfwd(holomorphic_poly)(z)
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with complex dtype"):
        dt.jacfwd(holomorphic_poly, holomorphic=True)(z.real)
    with pytest.raises(TypeError, match=r"\[transforms.jvp\] the tangent of `z` is real but `z` is complex"):
        dt.jvp(holomorphic_poly)(z, np.ones(2))


def _long_sum(n_terms, last="x"):
    """A module-level `f(x) = x * 1 + ... + <last> * n` of n_terms terms, from a file."""
    import importlib.util
    import pathlib
    import tempfile
    terms = [f"x * {k}" for k in range(1, n_terms)] + [f"{last} * {n_terms}"]
    path = pathlib.Path(tempfile.mkdtemp()) / f"long_sum_{n_terms}.py"
    path.write_text("def f(x):\n    return (" + " + ".join(terms) + ")\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


def test_complex_literal_check_looks_at_each_node_once(monkeypatch):
    # issue 9: the check walked every operand's whole subtree at every BinOp, quadratic in
    # the length of an expression (a 300-term sum's jvp took seconds more to build); each node
    # is now looked at once, and a complex literal deep in a long expression is still found
    from dualtape.transforms.frontend import normalize_expr
    counts = []
    seen = [0]

    def counting(node, resolve):
        seen[0] += 1
        return original(node, resolve)

    original = normalize_expr._is_complex
    monkeypatch.setattr(normalize_expr, "_is_complex", counting)
    for n_terms in (100, 200):
        seen[0] = 0
        value, tangent = dt.jvp(_long_sum(n_terms))(1.3, 1.0)
        assert np.isclose(tangent, n_terms * (n_terms + 1) / 2)
        counts.append(seen[0])
    assert counts[1] < 2.5 * counts[0], counts  # linear, not quadratic (4x)
    value, tangent = dt.jvp(_long_sum(200, last="(x * 3j)"))(1.3, 1.0)  # every op has complex rules
    assert np.isclose(tangent, 199 * 200 / 2 + 600j)


def test_complex_arguments():
    z = np.array([1 + 1j, 2.0])
    np.testing.assert_allclose(dt.grad(lambda z: np.real(np.sum(z * np.conj(z))))(z), 2 * np.conj(z))  # JAX's convention
    np.testing.assert_allclose(dt.vjp(sum_of_squares)(z, 1.0 + 0j), 2 * z)
    np.testing.assert_allclose(dt.jvp(sum_of_squares)(z, np.array([1j, 0.0]))[1], 2j * z[0])
    with pytest.raises(TypeError, match=r"\[transforms.jvp\] the tangent of `x` is complex but `x` is real"):
        dt.jvp(sum_of_squares)(np.ones(2), np.array([1j, 0.0]))
    np.testing.assert_allclose(dt.grad(sum_of_squares)(np.ones(2)), [2.0, 2.0])


def _hessian_fd(f, args):
    g = dt.grad(f)
    x = args[0]
    rows = [fd_directional(g, args, 0, e.reshape(np.shape(x))) for e in np.eye(np.size(x))]
    return np.moveaxis(np.reshape(rows, (np.size(x),) + np.shape(x)), 0, -1).reshape(np.shape(x) * 2)


@pytest.mark.parametrize("f, args", [(layers_from_a_list_of_tuples, [np.array([0.3, 0.6]), W2]),
                                     (heat_copy_read, [U6, 0.2]), (buffer_writes, [np.array([0.2, 0.7, 1.1])]),
                                     (named_list, [np.array([0.3, 0.9])]), (cholesky, [A3]),
                                     (calls_helpers, [np.array([0.3, 0.6])])],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_hessian_in_one_batched_call(f, args):
    # issue 9: the vector tangent of a list of tuples' adjoint (zeros_batch, each) was one
    # array, which a list of differently shaped items cannot be
    _close(dt.hessian(f)(*args), _hessian_fd(f, args), 1e-5)


# -- issue 9: writes at array indices, with vector tangents and on tensors ----------------

PICK = np.array([0, 2])


def fancy_writes(x):
    y = np.zeros(3)
    y[PICK] = x[:2] * x[2]
    y[[1]] = x[1] ** 2
    return np.sum(np.sin(y) * x)


def test_writes_at_array_indices():
    # with k directions `dy[:, [1]] = d` needed d lined up as (k, 1); on tensors the write was
    # refused (set_item now writes an index array that picks each element once)
    check_all(fancy_writes, [np.array([0.3, 0.6, 0.9])])
