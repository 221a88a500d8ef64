"""What f returns, checked by every functional transform (issue 19): an output with no
derivative (None from a missing `return`, a list, a string, a bool from np.allclose) is a
TypeError naming what f returned and the fix, never a zero gradient. And one return
convention: every result is a NumPy array, a 0-d one for a number (as JAX's arrays)."""

import numpy as np
import pytest

import dualtape

X = np.array([1.0, 2.0, 3.0])


def no_return(x):
    y = np.sum(x ** 2)  # noqa: F841  (the bug under test: no return)


SCALAR_APIS = {
    "grad": lambda f: dualtape.grad(f)(X),
    "value_and_grad": lambda f: dualtape.value_and_grad(f)(X),
    "hessian": lambda f: dualtape.hessian(f)(X),
    "hvp": lambda f: dualtape.hvp(f, (X,), (X,)),
}
ANY_APIS = {
    "jacrev": lambda f: dualtape.jacrev(f)(X),
    "jacfwd": lambda f: dualtape.jacfwd(f)(X),
    "vjp": lambda f: dualtape.vjp(f, X),
    "jvp": lambda f: dualtape.jvp(f, (X,), (X,)),
    "linearize": lambda f: dualtape.linearize(f, X),
}


@pytest.mark.parametrize("api", sorted({**SCALAR_APIS, **ANY_APIS}))
def test_missing_return_is_a_type_error_naming_it(api):
    call = {**SCALAR_APIS, **ANY_APIS}[api]
    with pytest.raises(TypeError, match=r"returned None.*`return` missing"):
        call(no_return)


@pytest.mark.parametrize("api", sorted({**SCALAR_APIS, **ANY_APIS}))
@pytest.mark.parametrize("f, what", [
    (lambda x: "a", r"returned str 'a'.*string has no derivative"),
    (lambda x: np.allclose(x, 1.0), r"returned bool.*boolean.*no derivative"),
    (lambda x: x > 1.0, r"bool.*boolean.*no derivative"),
])
def test_strings_and_bools_are_refused(api, f, what):
    call = {**SCALAR_APIS, **ANY_APIS}[api]
    with pytest.raises(TypeError, match=what):
        call(f)


@pytest.mark.parametrize("api", sorted(SCALAR_APIS))
def test_scalar_apis_name_containers_and_has_aux(api):
    with pytest.raises(TypeError, match=r"got a list of 1 item\. Return one scalar"):
        SCALAR_APIS[api](lambda x: [np.sum(x ** 2)])
    with pytest.raises(TypeError, match=r"got a tuple of 2 items\. .*has_aux=True"):
        SCALAR_APIS[api](lambda x: (np.sum(x ** 2), "metrics"))
    with pytest.raises(TypeError, match=r"real floating scalar, got int"):
        SCALAR_APIS[api](lambda x: np.sum(x > 1.0))


def test_grad_of_a_python_float_input():
    with pytest.raises(TypeError, match="returned None"):
        dualtape.grad(no_return)(2.0)
    with pytest.raises(TypeError, match="list"):
        dualtape.grad(lambda x: [x ** 2])(2.0)


def test_pytrees_and_constants_still_pass():
    jac = dualtape.jacrev(lambda x: {"a": x * 2.0, "n": None})(X)
    assert jac["n"] is None and np.allclose(jac["a"], 2 * np.eye(3))
    out, tangent = dualtape.jvp(lambda x: (x ** 2, 3.0), (X,), (X,))
    assert np.allclose(tangent[0], 2 * X ** 2) and tangent[1] == 0.0
    assert np.allclose(dualtape.grad(lambda x: 1.0)(X), 0.0)  # a constant: zero, as in JAX
    assert np.allclose(dualtape.jacfwd(lambda x: np.arange(3))(X), 0.0)  # integer leaves as before


# -- one return convention: arrays (0-d for numbers), as JAX's ----------------------------------

def _leaves(x):
    return [x] if not isinstance(x, (tuple, list)) else [leaf for item in x for leaf in _leaves(item)]


@pytest.mark.parametrize("name, call", [
    ("grad", lambda f: dualtape.grad(f)(2.0)),
    ("value_and_grad", lambda f: dualtape.value_and_grad(f)(2.0)),
    ("hvp", lambda f: dualtape.hvp(f, (2.0,), (1.0,))),
    ("hvp two primals", lambda f: dualtape.hvp(lambda a, b: f(a) * b, (2.0, 3.0), (1.0, 1.0))),
    ("hessian", lambda f: dualtape.hessian(f)(2.0)),
    ("jvp", lambda f: dualtape.jvp(f, (2.0,), (1.0,))),
    ("vjp", lambda f: dualtape.vjp(f, 2.0)[1](1.0)),
    ("jacfwd", lambda f: dualtape.jacfwd(f)(2.0)),
    ("jacrev", lambda f: dualtape.jacrev(f)(2.0)),
    ("linearize", lambda f: dualtape.linearize(f, 2.0)[1](1.0)),
    ("jvp in grad", lambda f: dualtape.hvp(lambda x: dualtape.grad(f)(x), (2.0,), (1.0,))),
])
def test_numbers_come_back_as_0d_arrays(name, call):
    out = call(lambda x: x ** 3)
    for leaf in _leaves(out):
        assert type(leaf) is np.ndarray and leaf.shape == () and leaf.dtype == np.float64, (name, out)


def test_hessian_has_aux():
    f = lambda x: (np.sum(x ** 3), {"double": x * 2.0, "tag": "t"})  # noqa: E731
    x = np.array([1.0, 2.0])
    H, aux = dualtape.hessian(f, has_aux=True)(x)
    np.testing.assert_allclose(H, np.diag(6 * x))
    assert aux["tag"] == "t" and type(aux["double"]) is np.ndarray
    np.testing.assert_allclose(aux["double"], 2 * x)
    H, aux = dualtape.hessian(f, argnums=(0,), has_aux=True)(x)  # the nested path (jacfwd of grad)
    np.testing.assert_allclose(H[0][0], np.diag(6 * x))
    assert aux["tag"] == "t" and type(aux["double"]) is np.ndarray
    H, aux = dualtape.hessian(lambda x: (x ** 3, 1), has_aux=True)(2.0)
    assert type(H) is np.ndarray and H == 12.0 and aux == 1
    with pytest.raises(TypeError, match="has_aux=True needs f to return a pair"):
        dualtape.hessian(lambda x: np.sum(x ** 3), has_aux=True)(x)
