"""Values that leave dualtape fail closed under the functional transforms (issue #10, section 1).

A traced value turned into a plain Python number or NumPy array (`float()`, `math.*`,
`np.array`, a write into a NumPy array, ...) drops its derivative: reverse mode used to
return zeros or a partial gradient without a word. The test is a generated product: every
escape route below, under every functional transform, must raise the error that names
what happened and the fix. Branching, int(), printing and dualtape's own conversions stay
allowed. A TF-style GradientTape refuses float() and np.asarray of what it records, but not
.numpy() (tests/test_tape_escapes.py).
"""

import math

import numpy as np
import pytest

import dualtape as tf
import dualtape
from dualtape.errors import RefusalError
from dualtape import dnp
from dualtape.functional import (grad, hessian, hvp, jacfwd, jacrev, jvp, linearize,
                                 value_and_grad, vjp)
from dualtape.functional import jacobian

X = np.array([0.5, 1.5])
V = np.array([1.0, -2.0])

# -- escape routes: f(x) for x of shape (2,), a scalar that really depends on x -----------------


def _setitem(x):
    y = np.zeros(2)
    y[0] = x[0] * 3  # regression: #10, the write dropped d/dx0 (grad gave [1, 1], not [4, 1])
    return dnp.sum(x) + y[0]


def _variable_assign(x):
    v = tf.Variable(np.zeros(2))
    v.assign(x * 2)  # state: the variable's value no longer knows x
    return dnp.sum(v * x)


def _scipy_logsumexp(x):
    special = pytest.importorskip("scipy.special")
    return special.logsumexp(x) * x[1]


ROUTES = {
    "float": lambda x: float(x[0]) * x[1],
    "complex": lambda x: complex(x[0]).real * x[1],
    "math.sin": lambda x: math.sin(x[0]) * x[0],  # regression: #10, 0.479 for 0.918
    "math.exp": lambda x: math.exp(x[1]) + x[0],
    "np.float64": lambda x: np.float64(x[0]) * x[1],
    "np.array": lambda x: np.sum(np.array([x[0], x[1] ** 2])),  # regression: #10, 0 for 7
    "np.array_dtype": lambda x: np.sum(np.array(x, dtype=float) * x),
    "np.asarray": lambda x: np.sum(np.asarray(x) * x),
    "np.mean_list": lambda x: np.mean([x[0], x[1] + 2]),
    "np.sum_list": lambda x: np.sum([x[0], x[1]]),
    "np.r_": lambda x: np.sum(np.r_[x, x]),
    "np.linalg.norm_list": lambda x: np.linalg.norm([x[0], x[1] + 2]),
    "setitem": _setitem,
    ".numpy()": lambda x: tf.identity(x).numpy()[0] * x[1],
    "tf.constant": lambda x: tf.constant(x)[0] * x[1],
    "tf.Variable": lambda x: dnp.sum(tf.Variable(x * 2) * x),
    "Variable.assign": _variable_assign,
    "scipy.logsumexp": _scipy_logsumexp,
}

# -- every functional transform, called the way its users call it ------------------------------

TRANSFORMS = {
    "grad": lambda f: grad(f)(X),
    "value_and_grad": lambda f: value_and_grad(f)(X),
    "vjp": lambda f: vjp(f, X)[1](1.0),
    "jvp": lambda f: jvp(f, (X,), (V,)),
    "linearize": lambda f: linearize(f, X)[1](V),
    "jacfwd": lambda f: jacfwd(f)(X),
    "jacrev": lambda f: jacrev(f)(X),
    "jacobian": lambda f: jacobian(f)(X),
    "hessian": lambda f: hessian(f)(X),
    "hvp": lambda f: hvp(f, (X,), (V,)),
}

ESCAPES = [(route, api) for route in ROUTES for api in TRANSFORMS]


def _chain(error):
    """The messages of an exception and its causes (NumPy wraps a failed float() of an
    array element write into its own ValueError, with ours as the cause)."""
    messages = []
    while error is not None:
        messages.append(str(error))
        error = error.__cause__ or error.__context__
    return messages


def test_the_product_is_complete():
    assert len(ROUTES) == 18 and len(TRANSFORMS) == 10 and len(ESCAPES) == 180


@pytest.mark.parametrize("route,api", ESCAPES, ids=[f"{r}-{a}" for r, a in ESCAPES])
def test_escape_is_refused(route, api):
    with pytest.raises((TypeError, ValueError)) as info:
        TRANSFORMS[api](ROUTES[route])
    ours = [m for m in _chain(info.value) if "became a plain" in m]
    assert ours, f"{route} under {api}: {info.value!r}"
    message = ours[0]
    assert message.startswith("[")  # the transform's name, as STYLE.md asks
    assert "drop its derivative" in message
    assert "np.stack" in message and "dnp" in message and "stop_gradient" in message


# -- what stays allowed: the same transforms give the right numbers -----------------------------


def _branch(x):
    if x[0] > 0:  # branching on a traced value
        return dnp.sum(x ** 2)
    return dnp.sum(x)


ALLOWED = {
    # f, its gradient at X, its Hessian at X
    "branch": (_branch, 2 * X, 2 * np.eye(2)),
    "int_index": (lambda x: x[int(x[0] > 0)] * x[1], [0.0, 2 * X[1]], [[0, 0], [0, 2]]),
    "stop_gradient": (lambda x: float(dnp.stop_gradient(x[0])) * x[1] ** 2,
                      [0.0, 2 * X[0] * X[1]], [[0, 0], [0, 2 * X[0]]]),
    "np.stack": (lambda x: np.sum(np.stack([x[0], x[1] ** 2])), [1.0, 2 * X[1]], [[0, 0], [0, 2]]),
    "print": (lambda x: (f"{x[0]:.3f} {x} {x!r} {str(x)}", x[0] * x[1])[1],
              [X[1], X[0]], [[0, 1], [1, 0]]),
    "tf.argmax": (lambda x: x[int(tf.argmax(x))] ** 2, [0.0, 2 * X[1]], [[0, 0], [0, 2]]),
    "math.floor_index": (lambda x: x[math.floor(x[1])] * x[0] ** 2, [2 * X[0] * X[1], X[0] ** 2],
                         [[2 * X[1], 2 * X[0]], [2 * X[0], 0]]),
    "shape_queries": (lambda x: x[len(x) - 1] * np.shape(x)[0] * x.ndim, [0.0, 2.0], np.zeros((2, 2))),
}


def _gradient_by(api, f):
    """The gradient of scalar f at X, computed by transform `api`."""
    if api == "grad":
        return grad(f)(X)
    if api == "value_and_grad":
        return value_and_grad(f)(X)[1]
    if api == "vjp":
        return vjp(f, X)[1](1.0)[0]
    if api == "jvp":
        return np.array([jvp(f, (X,), (e,))[1] for e in np.eye(2)])
    if api == "linearize":
        f_jvp = linearize(f, X)[1]
        return np.array([f_jvp(e) for e in np.eye(2)])
    return {"jacfwd": jacfwd, "jacrev": jacrev, "jacobian": jacobian}[api](f)(X)


ALLOWED_CASES = [(name, api) for name in ALLOWED for api in TRANSFORMS]


@pytest.mark.parametrize("name,api", ALLOWED_CASES, ids=[f"{n}-{a}" for n, a in ALLOWED_CASES])
def test_allowed_uses_still_differentiate(name, api):
    f, expected_grad, expected_hessian = ALLOWED[name]
    if api == "hessian":
        np.testing.assert_allclose(hessian(f)(X), expected_hessian, atol=1e-12)
    elif api == "hvp":
        np.testing.assert_allclose(hvp(f, (X,), (V,)), np.asarray(expected_hessian) @ V, atol=1e-12)
    else:
        np.testing.assert_allclose(_gradient_by(api, f), expected_grad, atol=1e-12)


def test_fixes_named_in_the_error_give_the_true_derivatives():
    # the issue's examples, rewritten as the message says
    assert np.isclose(grad(lambda x: np.sin(x) * x)(0.5), np.sin(0.5) + 0.5 * np.cos(0.5))
    assert np.isclose(grad(lambda x: np.sum(np.stack([x, x ** 2])))(3.0), 7.0)
    assert np.isclose(grad(lambda x: np.mean(np.stack([x, x + 2])))(3.0), 1.0)
    assert np.isclose(grad(lambda x: np.linalg.norm(np.stack([x, x + 2])))(1.0), 4 / np.sqrt(10))


def test_scalar_examples_of_the_issue_are_refused():
    for f in (lambda x: math.sin(x) * x, lambda x: np.sum(np.array([x, x ** 2])),
              lambda x: float(x) * x, lambda x: np.mean([x, x + 2])):
        for api in (grad, jacrev, jacfwd, hessian):
            with pytest.raises(TypeError, match="became a plain"):
                api(f)(0.5)


def test_values_returned_by_a_transform_are_plain_and_convert_freely():
    value, g = value_and_grad(lambda x: dnp.sum(x ** 2))(X)
    assert float(value) == np.sum(X ** 2) and np.asarray(g).tolist() == (2 * X).tolist()
    leaked = []
    grad(lambda x: leaked.append(x * 2) or dnp.sum(x))(X)
    np.testing.assert_allclose(np.asarray(leaked[0]), 2 * X)  # the transform is over: no check


def test_nested_transforms_refuse_at_every_level():
    inner = lambda y: float(y) * y  # noqa: E731
    with pytest.raises(TypeError, match=r"^\[grad\].*became a plain"):
        grad(lambda x: grad(inner)(x) * x)(0.5)
    with pytest.raises(TypeError, match="became a plain"):
        jvp(lambda x: grad(inner)(x), (0.5,), (1.0,))


# -- the TF-style tape: .numpy() is the way out (tests/test_tape_escapes.py: the refusals) ------


def test_gradient_tape_lets_values_leave_on_purpose_and_gives_none():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
        as_numpy = y.numpy()
        with tape.stop_recording():
            as_float = float(y)
            as_array = np.array(y)
        z = tf.constant(as_array) * 1.0
        w = tf.constant(y) * 1.0  # TF's tf.constant of an eager tensor is that tensor
    assert as_float == 4.0 and as_array == 4.0 and as_numpy == 4.0
    assert float(y) == 4.0 and np.array(y) == 4.0  # after the block, as in TF
    assert tape.gradient(z, x) is None
    assert tape.gradient(w, x).numpy() == 4.0 and tape.gradient(y, x).numpy() == 4.0


def test_forward_accumulator_lets_values_leave():
    x = tf.constant(2.0)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
        y = x * x
        assert float(y) == 4.0 and y.numpy() == 4.0
    assert acc.jvp(y).numpy() == 4.0


def test_gradient_tape_inside_grad_is_strict_for_the_functional_level():
    def f(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x ** 3
        return tape.gradient(y, x)  # 3 x^2, recorded by grad's tape
    assert np.isclose(grad(f)(2.0), 12.0)

    def g(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x ** 3
        return tape.gradient(y, x).numpy() * x  # leaves grad's level: refused
    with pytest.raises(TypeError, match=r"^\[grad\].*\.numpy\(\)"):
        grad(g)(2.0)


# -- a traced value written into an element of a NumPy array (issue 19) ---------------------------

def _element_write(x):
    out = np.zeros(3)
    out[0] = x[0] * 2  # NumPy wraps float()'s refusal in its ValueError: given back as ours
    return np.sum(out)


def _slice_write(x):
    out = np.zeros(3)
    out[0:1] = x[0] * 2
    return np.sum(out)


@pytest.mark.parametrize("api, call", [
    ("grad", lambda f, x: dualtape.grad(f)(x)),
    ("hvp", lambda f, x: dualtape.hvp(f, (x,), (x,))),
    ("vjp", lambda f, x: dualtape.vjp(f, x)),
    ("jvp", lambda f, x: dualtape.jvp(f, (x,), (x,))),
    ("jacfwd", lambda f, x: dualtape.jacfwd(f)(x)),
])
@pytest.mark.parametrize("write", [_element_write, _slice_write])
def test_a_write_into_a_numpy_array_is_one_refusal_naming_transforms(api, call, write):
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(RefusalError) as info:
        call(write, x)
    message = str(info.value)
    assert message.startswith((f"[{api}]", "[jvp]")) and "dualtape.transforms" in message  # (a dual's own: [jvp])
    assert "np.stack" in message and "np.where(mask, v, out)" in message
    if write is _element_write:
        assert "a write into a NumPy array" in message
        assert "test_escapes.py, line" in message and "out[0] = x[0] * 2" in message


@pytest.mark.parametrize("api", ["jvp", "jacfwd", "hvp", "hessian"])
@pytest.mark.parametrize("escape", [lambda x: np.asarray(x), lambda x: float(x[0]) * x])
def test_dual_refusals_name_the_api_called(api, escape):
    """A dual number's refusal names the transform the user called, not [jvp] for all."""
    def f(x):
        return np.sum(escape(x) * x)

    x, v = np.array([0.5, 2.0]), np.array([1.0, -1.0])
    calls = {"jvp": lambda: dualtape.jvp(f, (x,), (v,)), "hvp": lambda: dualtape.hvp(f, (x,), (v,)),
             "jacfwd": lambda: dualtape.jacfwd(f)(x), "hessian": lambda: dualtape.hessian(f)(x)}
    with pytest.raises(RefusalError, match=rf"^\[{api}\] a value being differentiated became a plain"):
        calls[api]()
