"""NumPy's own functions (issue 12) called the way users write them (np.hstack([a, b]),
np.roll(x, 1), np.median(x), ...), through every mode by `check_modes`: the tape, the
functional API, dual numbers, the transformer and their mixtures, against each other and
finite differences. The per-op rules are checked by the registry-generated tests; these
check NumPy's dispatch and the transformer's binding of NumPy's signatures. Functions
composed of registry ops (not one op per call) run in the runtime modes only."""

import numpy as np
import pytest

import dualtape as dt
from dualtape.testing import check_modes
from dualtape.testing.check_modes import RUNTIME

X = np.array([[0.3, -1.2, 2.0], [0.7, 1.1, -0.4]])
V = np.array([0.5, -0.9, 1.3])


def f_ufuncs(x):
    return np.sum(np.log2(x * x + 1) + np.hypot(x, 2.0) + np.logaddexp(x, -x) + np.arcsinh(x)
                  + np.sinc(x) + np.degrees(x) + np.fmax(x, 0.5) + np.cbrt(x + 3))


def f_stacks(x):
    return np.sum(np.hstack([x, 2 * x]) ** 2) + np.sum(np.vstack([x, x * x]) * 3) + np.sum(
        np.dstack([x, np.sin(x)]) ** 2) + np.sum(np.column_stack([x[0], x[1]]) ** 3)


def f_shapes(x):
    return (np.sum(np.roll(x, 1, axis=1) * X) + np.sum(np.rot90(x) ** 2 * 0.5) + np.sum(np.fliplr(x) * X)
            + np.sum(np.atleast_3d(x) ** 2) + np.sum(np.append(x, x[0]) ** 2)
            + np.sum(np.rollaxis(x, 1) * X.T))


def f_matrices(x):
    m = x[:, :2]
    return (np.sum(np.tril(x, 1) ** 2) + np.sum(np.triu(x, -1) * X) + np.sum(np.diag(x[0], 1) ** 2)
            + np.sum(np.diag(x, 1) ** 2) + np.sum(np.diagflat(x[1]) * 2) + np.sum(np.kron(m, m))
            + np.sum(np.cross(x, X) ** 2) + np.sum(np.diff(x, axis=1) ** 2)
            + np.vdot(x, X) + np.trace(np.linalg.matrix_power(m, 3)))


def f_statistics(x):
    return (np.median(x) + np.sum(np.quantile(x, [0.2, 0.9], axis=1)) + np.percentile(x, 40)
            + np.sum(np.sort(x, axis=1) * X) + np.sum(np.cumprod(x + 3, axis=1))
            + np.nanmax(x) + np.ptp(x) + np.sum(np.average(x, axis=1, weights=V))
            + np.sum(np.convolve(x[0], x[1]) ** 2) + np.sum(np.interp(x[0], [-2.0, 0.5, 3.0], x[1] * 2 + 1)))


def f_take_along(x):
    return np.sum(np.take_along_axis(x, np.array([[2, 0], [1, 1]]), axis=1) ** 2) + np.sum(
        np.partition(x, 1, axis=1) * X)


@pytest.mark.parametrize("f", [f_ufuncs, f_stacks, f_shapes, f_matrices, f_statistics, f_take_along],
                         ids=lambda f: f.__name__)
def test_numpy_functions_in_every_mode(f):
    check_modes(f, [X])


def f_composed(x):
    a, b = np.hsplit(x, [1])
    return (np.sum(np.cov(x)) + np.sum(np.corrcoef(x)) + np.sum(a * 2) + np.sum(b ** 2)
            + np.sum(np.linalg.multi_dot([x, x.T, x])) + np.sum(np.select([x > 0], [x * 3], default=x))
            + np.sum(np.float_power(x * x + 1, 1.5))
            + np.sum(np.piecewise(x, [x < 0, x > 1], [lambda v: -v, np.log, lambda v: v ** 2])))


def test_composed_functions_in_the_runtime_modes():
    check_modes(f_composed, [X], modes=RUNTIME)


def test_no_derivative_functions_accept_traced_values():
    x = dt.Variable(X)
    with dt.GradientTape() as tape:
        order = np.argsort(x, axis=1)
        where = np.searchsorted(np.sort(x[0]), 0.5)
        close = np.isclose(x, X)
        y = np.sum(x * order) + where + np.sum(np.trunc(x))
    assert np.allclose(tape.gradient(y, x).numpy(), np.argsort(X, axis=1))
    assert np.allclose(x, X) and np.all(np.asarray(close))


def test_conventions_at_ties():
    x = dt.Variable(np.array([1.0, 2.0, 2.0, 0.0]))
    with dt.GradientTape(persistent=True) as tape:
        top = np.nanmax(x)
        fm = np.fmax(x, np.array([1.0, 0.0, 5.0, 0.0]))
        s = np.sort(x)
    assert np.allclose(tape.gradient(top, x).numpy(), [0, 0.5, 0.5, 0])  # tied maxima share
    assert np.allclose(tape.gradient(fm, x).numpy(), [1, 1, 0, 1])  # fmax tie: all to x
    assert np.allclose(tape.gradient(s, x, output_gradients=np.array([1.0, 2.0, 3.0, 4.0])).numpy(),
                       [2, 3, 4, 1])  # stable: the first 2.0 takes the first of the tied slots


def test_empty_diagonal():
    x = dt.Variable(np.ones((2, 3)))
    with dt.GradientTape() as tape:
        d = np.diag(x, 3)
        y = np.sum(d) + np.trace(x, offset=-2)
    assert np.shape(d) == (0,)
    assert np.allclose(tape.gradient(y, x, unconnected_gradients=dt.UnconnectedGradients.ZERO).numpy(), 0)


def test_float32_stays_float32():
    x = dt.Variable(X.astype(np.float32))
    with dt.GradientTape() as tape:
        y = np.quantile(x, 0.3) + np.sum(np.log10(x * x + 1)) + np.sum(np.interp(x, [-2.0, 3.0], np.array([0.0, 1.0], dtype=np.float32)))
    assert np.asarray(y).dtype == np.float32
    assert tape.gradient(y, x).numpy().dtype == np.float32


def f_methods(x):
    return (np.sum(x.cumprod(axis=1)) + x.diagonal().sum() + x.trace(offset=1) + np.sum(x.conj() ** 2)
            + np.sum(x.repeat(2, axis=0) ** 2) + np.sum(np.take_along_axis(x, x.argsort(axis=1), axis=1) * X)
            + x[0, x.argmax()])


def test_more_array_methods_in_every_mode():
    check_modes(f_methods, [X])


def test_array_method_spellings_on_tensors_and_duals():
    x = dt.Variable(X)
    with dt.GradientTape() as tape:
        y = x.real.sum() + x.imag.sum() + x.round().sum() + x.ravel()[x.argmin()] * 0 + x.conjugate().sum()
    assert np.allclose(tape.gradient(y, x).numpy(), 2.0)  # real and conjugate; imag, round: none
    _, tangent = dt.jvp(lambda v: v.cumprod().sum() + v.trace(), (X,), (np.ones_like(X),))
    _, expected = dt.jvp(lambda v: np.sum(np.cumprod(v)) + np.trace(v), (X,), (np.ones_like(X),))
    assert np.allclose(tangent, expected)


def f_einsum_sublist(x):
    return np.sum(np.einsum(x, [0, 1], X, [0, 1], [1])) + np.sum(np.einsum(x, [Ellipsis, 0], x, [Ellipsis, 0]))


def test_einsum_sublist_form_in_the_runtime_modes():
    check_modes(f_einsum_sublist, [X], modes=RUNTIME)


def f_cross_axes(x):
    # np.cross with the vectors of a, of b and of the result on different axes (issue 22: refused before)
    a = np.reshape(np.concatenate([x[0], x[1]]), (3, 2))
    return np.sum(np.cross(a, x, axisa=0, axisb=1, axisc=0) ** 2) + np.sum(np.cross(x, a.T, axisc=0) * X.T)


def test_cross_with_axisa_axisb_axisc_in_every_mode():
    np.testing.assert_allclose(dt.dnp.cross(X.T, X, axisa=0, axisb=1, axisc=0),
                               np.cross(X.T, X, axisa=0, axisb=1, axisc=0))
    check_modes(f_cross_axes, [X])


def f_gradient(x):
    # np.gradient: one Gradient op per axis, a tuple of them for several axes (issue 22: no op before)
    along_rows, along_columns = np.gradient(x * x)
    return (np.sum(along_rows * X) + np.sum(np.sin(along_columns))
            + np.sum(np.gradient(x, 0.5, axis=1, edge_order=2) ** 2))


def test_gradient_in_the_runtime_modes():
    x = np.linspace(0.0, 1.0, 12).reshape(3, 4) ** 2
    for args, kwargs in [((), {}), ((0.5,), {"axis": 1}), ((2.0, 0.5), {"edge_order": 2}), ((), {"axis": (0, -1)})]:
        got, want = dt.dnp.gradient(x, *args, **kwargs), np.gradient(x, *args, **kwargs)
        for g, w in zip(got if isinstance(got, tuple) else [got], want if isinstance(want, tuple) else [want]):
            np.testing.assert_allclose(g, w, rtol=1e-12)
    check_modes(f_gradient, [X], modes=RUNTIME)
    with pytest.raises(TypeError, match=r"\[Gradient\].*spacing"):
        dt.grad(lambda v: np.sum(np.gradient(v, np.array([0.0, 1.0, 3.0]))))(np.ones(3))


def f_gradient_one_axis(x):
    return np.sum(np.gradient(x * x, axis=1) * X)


def f_gradient_all_axes(x):
    a, b = np.gradient(x)
    return np.sum(a * b)


def test_gradient_in_the_transformer_one_axis_at_a_time():
    check_modes(f_gradient_one_axis, [X])
    import dualtape.transforms as transforms  # noqa: PLC0415
    with pytest.raises(TypeError, match=r"\[Gradient\] the derivative of np.gradient is taken one axis at a time"):
        transforms.grad(f_gradient_all_axes)(X)
