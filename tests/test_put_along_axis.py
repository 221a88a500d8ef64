"""put_along_axis (issue 12): NumPy's np.put_along_axis writes in place, so on traced values it
is refused with the functional spelling as the fix; `dnp.put_along_axis(arr, indices, values,
axis)` returns a new array, differentiable w.r.t. arr and values in every mode (the registry
tests sweep its samples; here: the refusals, repeated positions, and the transformer)."""

import importlib.util

import numpy as np
import pytest

import dualtape
import dualtape.functional as F
import dualtape.transforms as dt
from dualtape import dnp

IDX = np.array([[0, 1, 2, 0], [0, 0, 1, 2]])  # column 0 writes row 0 twice: the second write stays
X = np.random.default_rng(0).standard_normal((3, 4))
V = np.array([[0.7], [-1.3]])

SOURCE = '''
import numpy as np
from dualtape import dnp

IDX = np.array([[0, 1, 2, 0], [0, 0, 1, 2]])


def functional(x, v):
    out = dnp.put_along_axis(x, IDX, v, axis=0)
    return np.sum(np.sin(out) * out)


def in_place(v):
    buf = np.zeros((3, 4))
    np.put_along_axis(buf, IDX, v, axis=0)
    return np.sum(buf ** 2)


def copy_in(v):
    buf = np.zeros((2, 1))
    np.copyto(buf, v)
    return np.sum(buf)
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("put_along_axis") / "put_along_axis_example.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_functional_spelling_returns_a_new_array_and_leaves_arr_alone():
    x = X.copy()
    out = dnp.put_along_axis(x, IDX, V, axis=0)
    want = X.copy()
    np.put_along_axis(want, IDX, V, axis=0)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(x, X)


def test_repeated_positions_the_last_write_gets_the_gradient():
    f = lambda x, v: dnp.sum(dnp.put_along_axis(x, IDX, v, axis=0) ** 2)  # noqa: E731
    gx, gv = F.grad(f, argnums=(0, 1))(X, V)
    written = np.zeros((3, 4), bool)
    np.put_along_axis(written, IDX, True, axis=0)
    np.testing.assert_array_equal(gx, np.where(written, 0.0, 2 * X))
    # v[0] stays at 3 positions (its write to (0, 0) is overwritten by v[1]), v[1] at all 4
    np.testing.assert_allclose(gv, [[2 * 0.7 * 3], [2 * -1.3 * 4]])


def test_numpy_in_place_write_on_traced_values_is_refused():
    x = dualtape.constant(X)
    with pytest.raises(TypeError, match=r"\[PutAlongAxis\].*in place.*dnp.put_along_axis"):
        np.put_along_axis(x, IDX, V, axis=0)
    with pytest.raises(TypeError, match=r"\[PutAlongAxis\].*in place"):  # a plain array receiving a tensor
        np.put_along_axis(X.copy(), IDX, dualtape.constant(V), axis=0)
    with pytest.raises(TypeError, match=r"\[PutAlongAxis\].*in place"):  # dual numbers
        dualtape.jvp(lambda x: np.put_along_axis(x, IDX, V, axis=0), (X,), (X,))
    with pytest.raises(TypeError, match=r"inplace=False"):
        dnp.put_along_axis(x, IDX, V, 0, inplace=True)


def test_transformer_differentiates_the_functional_spelling(mod):
    args, tangents = (X, V), (np.ones_like(X), np.ones_like(V))
    want = F.grad(mod.functional, argnums=(0, 1))(*args)
    for got, w in zip(dt.grad(mod.functional, wrt=(0, 1))(*args), want):
        np.testing.assert_allclose(got, w, rtol=1e-12)
    _, tangent = dt.jvp(mod.functional, wrt=(0, 1))(*args, tangents)
    np.testing.assert_allclose(tangent, sum(np.sum(w * t) for w, t in zip(want, tangents)), rtol=1e-12)
    for got, w in zip(dt.hvp(mod.functional, wrt=(0, 1))(*args, tangents), F.hvp(mod.functional, args, tangents)):
        np.testing.assert_allclose(got, w, rtol=1e-10)


@pytest.mark.parametrize("name, what", [("in_place", "np.put_along_axis"), ("copy_in", "np.copyto")])
def test_transformer_refuses_numpy_in_place_writes_of_differentiated_values(mod, name, what):
    with pytest.raises(dt.TransformError, match=rf"`{what}` writes into its first argument in place"):
        dt.grad(getattr(mod, name))(V)
