"""Dask arrays through every mode: the tape, the functional API and generated adjoints.

A chunked design matrix goes in, a lazy `dask.array` gradient comes out, and nothing is
computed inside dualtape: a scheduler that raises stands guard while the gradient is built.
`.compute()` then equals the NumPy result. Skipped when dask is not installed (an extra),
except under CI, which installs it (`.ci/run`: the `dask` extra) so the cluster test runs.
"""

import os
import pathlib
import pickle
import sys

import numpy as np
import pytest

try:
    import dask
    import dask.array as da
except ImportError:
    if os.environ.get("CI"):
        raise  # CI installs the dask extra (pip install -e ".[test,site,dask]")
    pytest.skip("dask is not installed (pip install -e \".[dask]\")", allow_module_level=True)

import dualtape  # noqa: E402
import dualtape as tf  # noqa: E402
from dualtape import transforms  # noqa: E402
from dualtape.core.errors import RefusalError  # noqa: E402

ROWS, FEATURES, CHUNK = 10_000, 5, 1_000


BENCHMARKS = pathlib.Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))  # as test_benchmarks.py: the workload programs are defined once there

from workloads_src import least_squares, logistic  # noqa: E402


def least_squares_grad(w, X, y):
    return X.T @ (X @ w - y)


def logistic_grad(w, X, y):
    return X.T @ (1.0 / (1.0 + np.exp(-(X @ w))) - y) / X.shape[0]


LOSSES = [(least_squares, least_squares_grad), (logistic, logistic_grad)]
IDS = ["least_squares", "logistic"]


@pytest.fixture
def data():
    rng = np.random.default_rng(14)
    X = rng.standard_normal((ROWS, FEATURES))
    y_ls = rng.standard_normal(ROWS)
    y_log = (rng.random(ROWS) < 0.5).astype(float)
    w = rng.standard_normal(FEATURES) * 0.3
    return w, X, {"least_squares": y_ls, "logistic": y_log}


def lazy(a):
    return da.from_array(a, chunks=(CHUNK,) + a.shape[1:])


class _NoCompute:
    """A dask scheduler that fails the test if anything computes while it is set."""

    def __init__(self):
        self.calls = 0

    def __call__(self, dsk, keys, **kwargs):
        self.calls += 1
        raise AssertionError("dualtape computed a dask array (it must stay lazy)")


@pytest.fixture
def no_compute():
    guard = _NoCompute()
    with dask.config.set(scheduler=guard):
        yield guard
    assert guard.calls == 0


def check(result, expected, rtol=1e-10):
    """`result` is lazy and computes to `expected`."""
    assert isinstance(result, da.Array), type(result)
    np.testing.assert_allclose(result.compute(scheduler="sync"), expected, rtol=rtol, atol=1e-12)


# -- the functional API --------------------------------------------------------------------------

@pytest.mark.parametrize("loss,reference", LOSSES, ids=IDS)
def test_grad_over_dask_data_is_lazy_and_matches_numpy(data, loss, reference, no_compute):
    w, X, ys = data
    y = ys[loss.__name__]
    g = dualtape.grad(loss)(w, lazy(X), lazy(y))
    value, (gw, gX) = dualtape.value_and_grad(loss, argnums=(0, 1))(w, lazy(X), lazy(y))
    with dask.config.set(scheduler="sync"):
        check(g, reference(w, X, y))
        check(gw, reference(w, X, y))
        check(value, loss(w, X, y))
        check(gX, dualtape.grad(loss, argnums=1)(w, X, y))


def test_grad_with_the_data_closed_over(data, no_compute):
    w, X, ys = data
    Xd, yd = lazy(X), lazy(ys["least_squares"])
    g = dualtape.grad(lambda w: least_squares(w, Xd, yd))(w)
    with dask.config.set(scheduler="sync"):
        check(g, least_squares_grad(w, X, ys["least_squares"]))


def test_vjp_jvp_hvp(data, no_compute):
    w, X, ys = data
    y = ys["least_squares"]
    Xd, yd = lazy(X), lazy(y)
    out, vjp_fn = dualtape.vjp(lambda w: Xd @ w, w)
    (gw,) = vjp_fn(yd)
    value, tangent = dualtape.jvp(lambda w: least_squares(w, Xd, yd), (w,), (np.ones(FEATURES),))
    _, tangent_x = dualtape.jvp(lambda X: least_squares(w, X, yd), (Xd,), (Xd,))
    hv = dualtape.hvp(lambda w: least_squares(w, Xd, yd), (w,), (np.ones(FEATURES),))
    with dask.config.set(scheduler="sync"):
        check(out, X @ w)
        check(gw, X.T @ y)
        check(value, least_squares(w, X, y))
        check(tangent, least_squares_grad(w, X, y).sum())
        check(tangent_x, np.sum((X @ w - y) * (X @ w)))
        check(hv, X.T @ (X @ np.ones(FEATURES)))


# -- the tape ------------------------------------------------------------------------------------

def test_gradient_tape_with_numpy_variable_and_dask_data(data, no_compute):
    w, X, ys = data
    y = ys["least_squares"]
    v = tf.Variable(w)
    Xt = tf.constant(lazy(X))  # a constant of dask data stays lazy
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum((Xt @ v - lazy(y)) ** 2) / 2.0
    g = tape.gradient(loss, v)
    assert g.dtype == tf.float64 and "dask.array" in str(g)  # printing computes nothing
    with dask.config.set(scheduler="sync"):
        check(g._value, least_squares_grad(w, X, y))


def test_gradient_tape_keeps_tf_dtype_rules(data, no_compute):
    """A float32 variable: the float64 dask operand converts to float32 (lazily), as TF does
    with a NumPy array, and a Python float takes the tensor's dtype."""
    w, X, ys = data
    y = ys["least_squares"]
    v = tf.Variable(w.astype(np.float32))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum((lazy(X) @ v - lazy(y)) ** 2) / 2.0
    g = tape.gradient(loss, v)
    assert loss.dtype == tf.float32 and g.dtype == tf.float32
    with dask.config.set(scheduler="sync"):
        check(g._value, least_squares_grad(w, X, y), rtol=1e-4)


def test_gradient_tape_with_a_dask_variable(data, no_compute):
    w, X, ys = data
    y = ys["least_squares"]
    Xv = tf.Variable(lazy(X))
    Xv.assign_add(lazy(np.ones_like(X)))  # state updates stay lazy too
    with tf.GradientTape() as tape:
        loss = np.sum((Xv @ w - lazy(y)) ** 2) / 2.0
    g = tape.gradient(loss, Xv)
    with dask.config.set(scheduler="sync"):
        r = (X + 1.0) @ w - y
        check(g._value, np.outer(r, w))


# -- generated adjoints --------------------------------------------------------------------------

@pytest.mark.parametrize("loss,reference", LOSSES, ids=IDS)
def test_transforms_grad_and_vjp(data, loss, reference, no_compute):
    w, X, ys = data
    y = ys[loss.__name__]
    g = transforms.grad(loss)(w, lazy(X), lazy(y))
    gX = transforms.grad(loss, wrt=1)(w, lazy(X), lazy(y))
    gv = transforms.vjp(loss)(w, lazy(X), lazy(y), 2.0)
    with dask.config.set(scheduler="sync"):
        check(g, reference(w, X, y))
        check(gX, dualtape.grad(loss, argnums=1)(w, X, y))
        check(gv, 2.0 * reference(w, X, y))


def _graph_bytes(array):
    return len(pickle.dumps(dict(array.__dask_graph__())))


@pytest.mark.parametrize("loss,reference", LOSSES, ids=IDS)
def test_no_data_sized_numpy_array_enters_the_graph(loss, reference, no_compute):
    """Seeds are lazy scalars: a NumPy 1.0 broadcast by sum's adjoint to (ROWS,) would be
    embedded in the graph whole (8 * ROWS bytes, sent to every worker)."""
    X = da.random.default_rng(0).standard_normal((ROWS, FEATURES), chunks=(CHUNK, FEATURES))
    y = da.random.default_rng(1).random(ROWS, chunks=CHUNK)
    w = np.full(FEATURES, 0.1)
    v = tf.Variable(w)
    with tf.GradientTape() as tape:
        value = loss(v, X, y)
    for g in (dualtape.grad(loss)(w, X, y), dualtape.grad(loss, argnums=1)(w, X, y), tape.gradient(value, v)._value,
              transforms.grad(loss)(w, X, y), transforms.vjp(loss)(w, X, y, 2.0)):
        assert _graph_bytes(g) < 8 * ROWS / 2, _graph_bytes(g)


# -- refusals and a real cluster -----------------------------------------------------------------

def test_escaping_to_numpy_is_refused_not_computed(data, no_compute):
    w, X, ys = data
    Xd = lazy(X)

    def leaky(w):
        return float(np.sum(Xd @ w))  # float() would compute the dask array

    with pytest.raises(RefusalError, match=r"\[grad\]"):
        dualtape.grad(leaky)(w)


def test_slices_and_joins_stay_lazy(data, no_compute):
    w, X, ys = data
    Xd = lazy(X)

    def sliced(w):
        z = Xd @ w
        return np.sum(np.concatenate([z[: ROWS // 2], z[ROWS // 2:] * 2.0]) ** 2)

    g = dualtape.grad(sliced)(w)
    with dask.config.set(scheduler="sync"):
        check(g, dualtape.grad(sliced)(w).compute())
        z = X @ w
        scale = np.where(np.arange(ROWS) < ROWS // 2, 1.0, 2.0)
        check(g, X.T @ (2 * scale ** 2 * z))


@pytest.mark.parametrize("case", ["boolean mask", "tf.where indices", "integer-array index"])
def test_value_dependent_ops_are_refused_not_computed(data, case, no_compute):
    w, X, ys = data
    Xd = lazy(X)
    loss = {"boolean mask": lambda w: np.sum((Xd @ w)[Xd[:, 0] > 0] ** 2),
            "tf.where indices": lambda w: tf.reduce_sum(tf.gather(Xd @ w, tf.where(Xd[:, 0] > 0)[:, 0])),
            "integer-array index": lambda w: np.sum((Xd @ w)[np.array([0, 0, 3])] ** 2)}[case]
    with pytest.raises(RefusalError, match=r"would compute the lazy dask"):
        dualtape.grad(loss)(w)


def test_gradient_on_a_local_cluster(data):
    distributed = pytest.importorskip("dask.distributed")
    w, X, ys = data
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        for loss, reference in LOSSES:
            y = ys[loss.__name__]
            g = dualtape.grad(loss)(w, lazy(X), lazy(y))
            assert isinstance(g, da.Array)
            np.testing.assert_allclose(client.compute(g).result(), reference(w, X, y), rtol=1e-10)
