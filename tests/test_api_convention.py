"""One API convention (issue 14, item 4): `argnums=` everywhere (the transformer keeps `wrt=`
as an alias), `has_aux=` on grad, value_and_grad, vjp, jvp, jacfwd and jacrev (aux returned
as f returned it, as in JAX), keyword arguments through every transform, JAX-style pytrees
(dataclasses, registered classes, None as an empty subtree), and the CLI reading a function
already decorated with a transform."""

import dataclasses
import importlib.util
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dualtape
import dualtape.transforms as dt

SOURCE = textwrap.dedent('''
    import numpy as np
    import dualtape.transforms as dt


    def f(x, y, s=1.0, *, scale=1.0):
        return np.sum(np.sin(x) * y ** 2) * s * scale


    def vec(x, y, s=1.0):
        return np.sin(x) * y * s


    @dt.grad(argnums=1)
    def decorated(x, y):
        return np.sum(x * y ** 2)


    @dt.hvp
    def decorated_hvp(x):
        return np.sum(np.sin(x))
''')

X, Y = np.array([0.3, -0.7, 1.1]), np.array([1.5, 0.2, -0.4])


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("convention") / "convention_fns.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("convention_fns", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["convention_fns"] = module
    spec.loader.exec_module(module)
    module.PATH = path
    return module


def _df_dx(x, y, s):
    return np.cos(x) * y ** 2 * s


def _df_dy(x, y, s):
    return np.sin(x) * 2 * y * s


# -- argnums / wrt ---------------------------------------------------------------------------------

def test_transformer_takes_argnums_and_wrt_as_alias(mod):
    for grad in (dt.grad(mod.f, argnums=1), dt.grad(mod.f, wrt=1), dt.grad(mod.f, 1)):
        np.testing.assert_allclose(grad(X, Y), _df_dy(X, Y, 1.0), rtol=1e-12)
    gx, gy = dt.grad(mod.f, argnums=(0, 1))(X, Y)
    np.testing.assert_allclose(gx, _df_dx(X, Y, 1.0), rtol=1e-12)
    _, (bx, by) = None, dt.vjp(mod.vec, argnums=(0, 1))(X, Y, np.ones(3))
    np.testing.assert_allclose(by, np.sin(X), rtol=1e-12)
    _, tangent = dt.jvp(mod.f, argnums=1)(X, Y, np.ones(3))
    np.testing.assert_allclose(tangent, np.sum(_df_dy(X, Y, 1.0)), rtol=1e-12)
    np.testing.assert_allclose(dt.hvp(mod.f, argnums=1)(X, Y, np.ones(3)), 2 * np.sin(X), rtol=1e-12)
    np.testing.assert_allclose(dt.jacfwd(mod.vec, argnums=1)(X, Y), np.diag(np.sin(X)), rtol=1e-12)
    np.testing.assert_allclose(dt.hessian(mod.f, argnums=1)(X, Y), np.diag(2 * np.sin(X)), rtol=1e-12)
    np.testing.assert_allclose(dt.jacfwd(mod.vec, wrt=1)(X, Y), np.diag(np.sin(X)), rtol=1e-12)


@pytest.mark.parametrize("transform", [dt.grad, dt.vjp, dt.jvp, dt.hvp, dt.jacfwd, dt.hessian])
def test_argnums_and_wrt_together_is_a_type_error(mod, transform):
    with pytest.raises(TypeError, match=r"both argnums=0 and wrt=1.*alias"):
        transform(mod.f, argnums=0, wrt=1)


def test_functional_api_takes_argnums():
    f = lambda x, y: np.sum(np.sin(x) * y ** 2)  # noqa: E731
    np.testing.assert_allclose(dualtape.grad(f, argnums=1)(X, Y), _df_dy(X, Y, 1.0), rtol=1e-12)
    np.testing.assert_allclose(dualtape.jacrev(f, argnums=1)(X, Y), _df_dy(X, Y, 1.0), rtol=1e-12)


# -- has_aux ------------------------------------------------------------------------------------

def _loss_aux(aux_kind):
    def f(x):
        value = np.sum(np.sin(x) ** 2)
        aux = "a note" if aux_kind == "string" else {"double": 2.0 * x, "tag": "t", "n": 3}
        return value, aux
    return f


def _vector_aux(aux_kind):
    def f(x):
        return np.sin(x), ("a note" if aux_kind == "string" else {"double": 2.0 * x, "tag": "t", "n": 3})
    return f


def _check_aux(aux, aux_kind):
    if aux_kind == "string":
        assert aux == "a note" and type(aux) is str
    else:
        assert set(aux) == {"double", "tag", "n"} and aux["tag"] == "t" and aux["n"] == 3 and type(aux["n"]) is int
        assert type(aux["double"]) is np.ndarray  # a plain array: no tensor or dual number left
        np.testing.assert_allclose(aux["double"], 2.0 * X)


@pytest.mark.parametrize("aux_kind", ["string", "array"])
def test_has_aux_returns_aux_unchanged(aux_kind):
    grad_x = 2 * np.sin(X) * np.cos(X)
    g, aux = dualtape.grad(_loss_aux(aux_kind), has_aux=True)(X)
    np.testing.assert_allclose(g, grad_x, rtol=1e-12)
    _check_aux(aux, aux_kind)
    (value, aux), g = dualtape.value_and_grad(_loss_aux(aux_kind), has_aux=True)(X)
    assert np.isclose(value, np.sum(np.sin(X) ** 2))
    _check_aux(aux, aux_kind)
    out, vjp_fn, aux = dualtape.vjp(_vector_aux(aux_kind), X, has_aux=True)
    np.testing.assert_allclose(vjp_fn(np.ones(3))[0], np.cos(X), rtol=1e-12)
    _check_aux(aux, aux_kind)
    out, tangent, aux = dualtape.jvp(_vector_aux(aux_kind), (X,), (np.ones(3),), has_aux=True)
    np.testing.assert_allclose(tangent, np.cos(X), rtol=1e-12)
    _check_aux(aux, aux_kind)
    for jac in (dualtape.jacfwd, dualtape.jacrev):
        j, aux = jac(_vector_aux(aux_kind), has_aux=True)(X)
        np.testing.assert_allclose(j, np.diag(np.cos(X)), rtol=1e-12)
        _check_aux(aux, aux_kind)


def test_has_aux_needs_a_pair():
    with pytest.raises(TypeError, match=r"\[vjp\] has_aux=True needs f to return a pair"):
        dualtape.vjp(np.sin, X, has_aux=True)


# -- keyword arguments --------------------------------------------------------------------------

def test_keyword_arguments_reach_f_in_the_functional_api():
    f = lambda x, s=1.0: np.sum(np.sin(x)) * s  # noqa: E731
    v = lambda x, s=1.0: np.sin(x) * s  # noqa: E731
    np.testing.assert_allclose(dualtape.grad(f)(X, s=2.0), 2 * np.cos(X), rtol=1e-12)
    value, g = dualtape.value_and_grad(f)(X, s=2.0)
    assert np.isclose(value, 2 * np.sum(np.sin(X)))
    np.testing.assert_allclose(dualtape.jacfwd(v)(X, s=2.0), np.diag(2 * np.cos(X)), rtol=1e-12)
    np.testing.assert_allclose(dualtape.jacrev(v)(X, s=2.0), np.diag(2 * np.cos(X)), rtol=1e-12)
    np.testing.assert_allclose(dualtape.jacobian(v)(X, s=2.0), np.diag(2 * np.cos(X)), rtol=1e-12)
    np.testing.assert_allclose(dualtape.hessian(f)(X, s=2.0), np.diag(-2 * np.sin(X)), rtol=1e-12)


def test_keyword_arguments_reach_f_in_the_transformer(mod):
    want = _df_dx(X, Y, 2.0) * 3.0
    np.testing.assert_allclose(dt.grad(mod.f)(X, Y, s=2.0, scale=3.0), want, rtol=1e-12)
    np.testing.assert_allclose(dt.vjp(mod.vec)(X, Y, np.ones(3), s=2.0), np.cos(X) * Y * 2.0, rtol=1e-12)
    _, tangent = dt.jvp(mod.f)(X, Y, np.ones(3), s=2.0, scale=3.0)
    np.testing.assert_allclose(tangent, np.sum(want), rtol=1e-12)
    np.testing.assert_allclose(dt.hvp(mod.f)(X, Y, np.ones(3), s=2.0), -np.sin(X) * Y ** 2 * 2.0, rtol=1e-12)
    np.testing.assert_allclose(dt.jacfwd(mod.vec)(X, Y, s=2.0), np.diag(np.cos(X) * Y * 2.0), rtol=1e-12)
    np.testing.assert_allclose(dt.hessian(mod.f)(X, Y, s=2.0), np.diag(-np.sin(X) * Y ** 2 * 2.0), rtol=1e-12)


# -- pytrees ------------------------------------------------------------------------------------

@dataclasses.dataclass
class Params:
    w: np.ndarray
    b: float


class Pair:
    def __init__(self, first, second):
        self.first, self.second = first, second


dualtape.register_pytree_node(Pair, lambda p: ((p.first, p.second), None), lambda _, children: Pair(*children))


@dualtape.register_pytree_node_class
class Scaled:
    def __init__(self, value, label):
        self.value, self.label = value, label

    def tree_flatten(self):
        return (self.value,), self.label

    @classmethod
    def tree_unflatten(cls, label, children):
        return cls(children[0], label)


def test_dataclass_pytree():
    g = dualtape.grad(lambda p: np.sum(p.w ** 2) * p.b)(Params(X, 3.0))
    assert isinstance(g, Params)
    np.testing.assert_allclose(g.w, 6.0 * X, rtol=1e-12)
    assert np.isclose(g.b, np.sum(X ** 2))
    _, tangent = dualtape.jvp(lambda p: np.sum(p.w) * p.b, (Params(X, 3.0),), (Params(np.ones(3), 0.0),))
    assert np.isclose(tangent, 9.0)


def test_registered_pytrees():
    g = dualtape.grad(lambda p: np.sum(p.first * p.second))(Pair(X, Y))
    assert isinstance(g, Pair)
    np.testing.assert_allclose(g.first, Y) and np.testing.assert_allclose(g.second, X)
    g = dualtape.grad(lambda s: np.sum(s.value ** 2))(Scaled(X, "meters"))
    assert isinstance(g, Scaled) and g.label == "meters"
    np.testing.assert_allclose(g.value, 2 * X, rtol=1e-12)
    j = dualtape.jacrev(lambda p: p.first * p.second)(Pair(X, Y))
    np.testing.assert_allclose(j.first, np.diag(Y), rtol=1e-12)


def test_none_is_an_empty_subtree():
    g = dualtape.grad(lambda d: np.sum(d["a"] ** 2))({"a": X, "b": None})
    assert g["b"] is None
    np.testing.assert_allclose(g["a"], 2 * X)
    out, tangent = dualtape.jvp(lambda a, b: (np.sin(a), None), (X, None), (np.ones(3), None))
    assert out[1] is None and tangent[1] is None
    np.testing.assert_allclose(tangent[0], np.cos(X), rtol=1e-12)
    assert dualtape.nest.tree_flatten([None, (X, None)])[0] is X
    assert dualtape.nest.flatten([None, 1]) == [None, 1]  # tf.nest (GradientTape): None stays a leaf


# -- the command line ---------------------------------------------------------------------------

def _cli(*args):
    return subprocess.run([sys.executable, "-m", "dualtape.transforms", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def test_cli_accepts_a_decorated_function(mod):
    out = _cli(f"{mod.PATH}:decorated")
    assert out.returncode == 0, out.stderr
    assert "def decorated_vjp(x, y, bout=1.0):" in out.stdout and "return by" in out.stdout
    out = _cli(f"{mod.PATH}:decorated", "--argnums", "0")  # the command line wins over the decorator
    assert out.returncode == 0 and "return bx" in out.stdout
    out = _cli(f"{mod.PATH}:decorated_hvp")
    assert out.returncode == 0, out.stderr
    assert "def decorated_hvp_hvp(" in out.stdout


def test_cli_wrt_stays_an_alias(mod):
    out = _cli(f"{mod.PATH}:f", "--wrt", "1")
    assert out.returncode == 0 and "return by" in out.stdout
