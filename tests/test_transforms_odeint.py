"""scipy.integrate.odeint (and dualtape.scipy.integrate.odeint) in the source transformer
(issue 12): grad / vjp solve the adjoint ODE with the transformer's own adjoint of `func`,
jvp the forward sensitivity equations with its tangent function. Compared with the runtime's
odeint (the tape, lib/custom/odeint.py) and with central differences; what cannot work
(hvp, jacfwd, a lambda func, args not written out) is refused by name."""

import importlib.util
import pathlib

import numpy as np
import pytest

pytest.importorskip("scipy.integrate")

import dualtape.functional as F  # noqa: E402
import dualtape.transforms as dt  # noqa: E402

SOURCE = '''
import numpy as np
import scipy.integrate
from scipy.integrate import odeint
import dualtape.scipy.integrate as dsi

T = np.linspace(0.0, 1.0, 5)


def rhs(y, t, k, c):
    return -k * y + c * np.sin(t)


def oscillator(y, t, w):
    return [y[1], -w * w * y[0]]


def decay(y, t):
    return -0.5 * y


def scipy_version(y0, k, c):
    ys = odeint(rhs, y0, T, args=(k, c), rtol=1e-11, atol=1e-11)
    return np.sum(ys ** 2)


def runtime_version(y0, k, c):
    ys = dsi.odeint(rhs, y0, T, args=(k, c), rtol=1e-11, atol=1e-11)
    return np.sum(ys ** 2)


def times(ts, w):
    ys = scipy.integrate.odeint(oscillator, np.array([1.0, 0.0]), ts, args=(w,), rtol=1e-11, atol=1e-11)
    return np.sum(ys[:, 0] * ys[:, 1]) + w


def scalar_state(y0):
    ys = dsi.odeint(decay, y0, np.array([0.0, 0.5, 2.0]), rtol=1e-11, atol=1e-11)
    return np.sum(np.sin(ys))


def in_a_loop(y0, k):
    total = 0.0
    y = y0
    for i in range(2):
        ys = dsi.odeint(rhs, y, np.array([0.0, 0.5]), args=(k, 0.1), rtol=1e-11, atol=1e-11)
        y = ys[-1]
        total = total + np.sum(y * y)
    return total


def with_lambda(y0):
    return np.sum(odeint(lambda y, t: -y, y0, T))


def args_not_written_out(y0, k):
    extra = (k, 0.1)
    return np.sum(odeint(rhs, y0, T, args=extra))


def full_output(y0, k):
    return np.sum(odeint(rhs, y0, T, args=(k, 0.1), full_output=1)[0])


def varied_tolerance(y0, k):
    return np.sum(odeint(rhs, y0, T, args=(k, 0.1), rtol=np.sum(k) * 1e-8))


def neural_field(y, t, layers, scale):
    h = y
    for W, b in layers[:-1]:
        h = np.tanh(h @ W + b)
    W, b = layers[-1]
    return scale["out"] * (h @ W + b) - 0.1 * y


def neural_scipy(layers, y0):
    ys = odeint(neural_field, y0, T, args=(layers, {"out": 0.9}), rtol=1e-11, atol=1e-11)
    return np.sum(ys ** 2)


def neural_runtime(layers, y0):
    ys = dsi.odeint(neural_field, y0, T, args=(layers, {"out": 0.9}), rtol=1e-11, atol=1e-11)
    return np.sum(ys ** 2)
'''

Y0, K, C = np.array([1.0, 0.5]), np.array([0.7, 1.2]), 0.3


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("odeint") / "transforms_odeint_example.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _differences(f, args, eps=1e-5):
    grads = []
    for i, a in enumerate(args):
        x = np.asarray(a, float)
        g = np.zeros_like(x)
        for j in np.ndindex(x.shape):
            e = np.zeros_like(x)
            e[j] = eps
            up, down = list(args), list(args)
            up[i], down[i] = x + e, x - e
            g[j] = (f(*up) - f(*down)) / (2 * eps)
        grads.append(g)
    return grads


@pytest.mark.parametrize("name", ["scipy_version", "runtime_version"])
def test_grad_and_vjp_match_the_runtime_and_differences(mod, name):
    f = getattr(mod, name)
    got = dt.grad(f, wrt=(0, 1, 2))(Y0, K, C)
    runtime = F.grad(mod.runtime_version, argnums=(0, 1, 2))(Y0, K, C)
    for g, r, d in zip(got, runtime, _differences(f, (Y0, K, C))):
        np.testing.assert_allclose(g, r, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(g, d, rtol=1e-6, atol=1e-8)
    by0, bk, bc = dt.vjp(f, wrt=(0, 1, 2))(Y0, K, C, 2.0)
    # (the adjoint solve is adaptive: a scaled cotangent takes other steps, within its tolerance)
    np.testing.assert_allclose(by0, 2 * got[0], rtol=1e-8)
    np.testing.assert_allclose(bc, 2 * got[2], rtol=1e-8)


@pytest.mark.parametrize("name, args", [
    ("times", (np.array([0.0, 0.4, 1.1]), 1.3)),     # t differentiated, func returns a list
    ("scalar_state", (0.8,)),                          # a scalar y0, no args
    ("in_a_loop", (Y0, K)),                            # two solves, the second from the first's end
])
def test_grad_and_jvp_agree_with_differences(mod, name, args):
    f = getattr(mod, name)
    wrt = tuple(range(len(args)))
    grads = dt.grad(f, wrt=wrt)(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for g, d in zip(grads, _differences(f, args)):
        np.testing.assert_allclose(g, d, rtol=1e-6, atol=1e-8)
    tangents = tuple(np.random.default_rng(3).standard_normal(np.shape(a)) + 0.0 for a in args)
    value, jv = dt.jvp(f, wrt=wrt)(*args, tangents)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    np.testing.assert_allclose(jv, sum(np.sum(g * t) for g, t in zip(grads, tangents)), rtol=1e-7, atol=1e-9)


def test_jvp_of_the_scipy_spelling(mod):
    grads = dt.grad(mod.scipy_version, wrt=(0, 1, 2))(Y0, K, C)
    tangents = (np.array([0.3, -1.0]), np.array([0.5, 0.2]), -0.7)
    _, jv = dt.jvp(mod.scipy_version, wrt=(0, 1, 2))(Y0, K, C, tangents)
    np.testing.assert_allclose(jv, sum(np.sum(g * t) for g, t in zip(grads, tangents)), rtol=1e-7)


@pytest.mark.parametrize("name, call, match", [
    ("args_not_written_out", lambda f: dt.grad(f)(Y0, K), "odeint's args is not written out"),
    ("full_output", lambda f: dt.grad(f, wrt=1)(Y0, K), "odeint with full_output=1"),
    ("varied_tolerance", lambda f: dt.grad(f, wrt=1)(Y0, K), "odeint's option `rtol` depends on a differentiated"),
    ("scipy_version", lambda f: dt.hvp(f)(Y0, K, C, Y0), "Hessian of odeint"),
    ("scipy_version", lambda f: dt.jacfwd(f)(Y0, K, C), "odeint with a batch of tangents"),
])
def test_what_cannot_work_is_refused_by_name(mod, name, call, match):
    with pytest.raises(dt.TransformError, match=match):
        call(getattr(mod, name))


def test_a_lambda_right_hand_side(mod):  # lifted as a function of its own (frontend/functions.py)
    np.testing.assert_allclose(dt.grad(mod.with_lambda)(Y0), _differences(mod.with_lambda, (Y0,))[0], rtol=1e-6)


def test_save_imports_scipys_odeint(mod, tmp_path):
    # df.save copied SciPy's odeint source and refused on its `_msgs` global; an installed
    # package's function is imported, as the user's module did
    import subprocess
    import sys
    df = dt.grad(mod.scipy_version, (0, 1, 2))
    args = (np.array([1.0, 0.5]), 0.7, 0.3)
    expected = np.concatenate([np.ravel(g) for g in df(*args)])
    text = pathlib.Path(df.save(tmp_path / "saved_odeint.py")).read_text()
    assert "from scipy.integrate import odeint" in text
    script = (f"import sys; sys.modules['dualtape'] = None; sys.path.insert(0, {str(tmp_path)!r})\n"
              "import numpy as np, saved_odeint as m\n"
              f"got = m.{df.name}(np.array([1.0, 0.5]), 0.7, 0.3)\n"
              "print(repr(np.concatenate([np.ravel(g) for g in got]).tolist()))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    np.testing.assert_allclose(eval(out), expected, rtol=1e-9)


_RNG = np.random.default_rng(19)
LAYERS = [(0.4 * _RNG.standard_normal((2, 3)), 0.1 * _RNG.standard_normal(3)),
          (0.4 * _RNG.standard_normal((3, 2)), 0.1 * _RNG.standard_normal(2))]


def _neural_differences(f, layers, y0, eps=1e-4):
    """Central differences of f in every leaf of layers, in layers' structure, and in y0."""
    leaves = [a for pair in layers for a in pair]

    def at(flat_leaves):
        it = iter(flat_leaves)
        return f([(next(it), next(it)) for _ in layers], y0)
    grads = []
    for i, a in enumerate(leaves):
        g = np.zeros_like(a)
        for j in np.ndindex(a.shape):
            up, down = [x.copy() for x in leaves], [x.copy() for x in leaves]
            up[i][j] += eps
            down[i][j] -= eps
            g[j] = (at(up) - at(down)) / (2 * eps)
        grads.append(g)
    by_layer = [(grads[2 * k], grads[2 * k + 1]) for k in range(len(layers))]
    return by_layer, _differences(lambda y: f(layers, y), (y0,))[0]


@pytest.mark.parametrize("name", ["neural_scipy", "neural_runtime"])
def test_args_holding_a_list_of_weight_pairs(mod, name):
    # a neural ODE's parameters, args=([(W, b), ...], {"out": s}): odeint raised a RefusalError
    # from dualtape's own code (np.shape of the list) and the transformer's adjoint a ValueError
    # (np.asarray of the list's adjoint); the gradient has the list's structure
    f = getattr(mod, name)
    expected, expected_y0 = _neural_differences(f, LAYERS, Y0)
    runs = {"transforms.grad": dt.grad(f, wrt=(0, 1))(LAYERS, Y0)}
    if name == "neural_runtime":  # the runtime's odeint: dualtape.grad and the tape
        runs["dualtape.grad"] = F.grad(f, argnums=(0, 1))(LAYERS, Y0)
        import dualtape as tf  # noqa: PLC0415
        watched = [(tf.Variable(W), tf.Variable(b)) for W, b in LAYERS]
        with tf.GradientTape() as tape:
            loss = f(watched, tf.constant(Y0))
        runs["tape"] = (tape.gradient(loss, watched), F.grad(f, argnums=1)(LAYERS, Y0))
    for mode, (g_layers, g_y0) in runs.items():
        assert len(g_layers) == len(LAYERS), mode
        for (gw, gb), (ew, eb) in zip(g_layers, expected):
            np.testing.assert_allclose(np.asarray(gw), ew, rtol=1e-6, atol=1e-8, err_msg=mode)
            np.testing.assert_allclose(np.asarray(gb), eb, rtol=1e-6, atol=1e-8, err_msg=mode)
        np.testing.assert_allclose(g_y0, expected_y0, rtol=1e-6, atol=1e-8, err_msg=mode)
    if "dualtape.grad" in runs:
        assert all(isinstance(pair, tuple) for pair in runs["dualtape.grad"][0])  # the structure of LAYERS
