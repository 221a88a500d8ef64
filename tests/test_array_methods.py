"""NumPy's array methods on tensors, variables and dual numbers, in every mode (issue 12, §1).

The test is a generated product: a table of (method spelling, equivalent NumPy function)
pairs, each run on a `Tensor` under GradientTape, a `Variable`, a `Dual` under `jvp`, the
functional `grad` and `hvp`, and the transformer's `grad` and `jvp`, in float32 and
float64. The value must equal NumPy's method on the plain array (dtype included), and the
derivative must equal the one of the equivalent np.* spelling in the same mode (the
methods are spellings of registry ops, so they agree to rounding) and, in float64, central
differences of the method on plain arrays.

# regression: findings/programs.md R1, x.copy() and x.T on a traced value raised AttributeError
"""

import functools
import importlib.util
import math
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

import dualtape as tf
import dualtape.transforms as dt
from dualtape import dnp
from dualtape import functional as fn
from dualtape.forward.dual import Dual

# (id, input shape, the method spelling, the equivalent NumPy function), over `x`
CASES = [
    ("T", (3, 4), "x.T", "np.transpose(x)"),
    ("sum", (3, 4), "x.sum()", "np.sum(x)"),
    ("sum_axis_positional", (3, 4), "x.sum(1)", "np.sum(x, axis=1)"),
    ("sum_keepdims", (2, 3, 4), "x.sum(axis=(0, 2), keepdims=True)", "np.sum(x, axis=(0, 2), keepdims=True)"),
    ("sum_dtype", (3, 4), "x.sum(axis=0, dtype=np.float64)", "np.sum(dnp.cast(x, np.float64), axis=0)"),
    ("mean", (3, 4), "x.mean()", "np.mean(x)"),
    ("mean_axis", (2, 3, 4), "x.mean(axis=-1)", "np.mean(x, axis=-1)"),
    ("mean_keepdims", (2, 3, 4), "x.mean(axis=(0, 1), keepdims=True)", "np.mean(x, axis=(0, 1), keepdims=True)"),
    ("max", (3, 4), "x.max()", "np.max(x)"),
    ("max_axis", (3, 4), "x.max(axis=0)", "np.max(x, axis=0)"),
    ("min_keepdims", (3, 4), "x.min(axis=1, keepdims=True)", "np.min(x, axis=1, keepdims=True)"),
    ("prod", (2, 3), "x.prod()", "np.prod(x)"),
    ("prod_axis", (3, 4), "x.prod(axis=0)", "np.prod(x, axis=0)"),
    ("reshape_ints", (3, 4), "x.reshape(2, 6)", "np.reshape(x, (2, 6))"),
    ("reshape_tuple", (3, 4), "x.reshape((6, 2))", "np.reshape(x, (6, 2))"),
    ("reshape_minus_one", (3, 4), "x.reshape(-1)", "np.reshape(x, -1)"),
    ("reshape_infer", (3, 4), "x.reshape(4, -1)", "np.reshape(x, (4, -1))"),
    ("ravel", (3, 4), "x.ravel()", "np.ravel(x)"),
    ("flatten", (3, 4), "x.flatten()", "np.ravel(x)"),
    ("squeeze", (1, 3, 1, 2), "x.squeeze()", "np.squeeze(x)"),
    ("squeeze_axis", (1, 3, 1, 2), "x.squeeze(axis=0)", "np.squeeze(x, axis=0)"),
    ("transpose", (2, 3, 4), "x.transpose()", "np.transpose(x)"),
    ("transpose_ints", (2, 3, 4), "x.transpose(1, 2, 0)", "np.transpose(x, (1, 2, 0))"),
    ("transpose_tuple", (2, 3, 4), "x.transpose((2, 0, 1))", "np.transpose(x, (2, 0, 1))"),
    ("swapaxes", (2, 3, 4), "x.swapaxes(0, 2)", "np.swapaxes(x, 0, 2)"),
    ("astype_float64", (3, 4), "x.astype(np.float64)", "dnp.cast(x, np.float64)"),
    ("astype_own_dtype", (3, 4), "x.astype(x.dtype)", "dnp.cast(x, x.dtype)"),
    ("copy", (3, 4), "x.copy()", "np.copy(x)"),
    ("dot_matrix", (3, 4), "x.dot(x.T)", "np.dot(x, np.transpose(x))"),
    ("dot_vector", (4,), "x.dot(x)", "np.dot(x, x)"),
    ("clip", (3, 4), "x.clip(-0.5, 0.5)", "np.clip(x, -0.5, 0.5)"),
    ("clip_min", (3, 4), "x.clip(min=0.1)", "np.clip(x, 0.1, None)"),
    ("clip_max", (3, 4), "x.clip(max=0.3)", "np.clip(x, None, 0.3)"),
    ("cumsum", (3, 4), "x.cumsum()", "np.cumsum(x)"),
    ("cumsum_axis", (3, 4), "x.cumsum(axis=1)", "np.cumsum(x, axis=1)"),
    ("std", (3, 4), "x.std()", "np.std(x)"),
    ("std_ddof_keepdims", (3, 4), "x.std(axis=1, ddof=1, keepdims=True)", "np.std(x, axis=1, ddof=1, keepdims=True)"),
    ("var", (3, 4), "x.var()", "np.var(x)"),
    ("var_ddof", (3, 4), "x.var(axis=0, ddof=1)", "np.var(x, axis=0, ddof=1)"),
    ("chain", (3, 4), "x.sum() + x.T.dot(x).mean()", "np.sum(x) + np.mean(np.dot(np.transpose(x), x))"),
    ("chain_shapes", (3, 4), "x.reshape(2, 6).T.max(axis=1).cumsum()",
     "np.cumsum(np.max(np.transpose(np.reshape(x, (2, 6))), axis=1))"),
    ("properties", (3, 4), "x * (x.ndim + x.size + len(x))", "x * (np.ndim(x) + np.size(x) + 3)"),
]
NONDIFF_CASES = [  # boolean results: values only
    ("any", (3, 4), "(x > 1.0).any()"),
    ("all_axis", (3, 4), "(x > -1.0).all(axis=0)"),
    ("any_keepdims", (3, 4), "x.any(axis=1, keepdims=True)"),
]
DTYPES = [np.float64, np.float32]
TOLERANCE = {np.float64: 1e-12, np.float32: 1e-5}  # method vs its np.* spelling: the same ops


def _module_source():
    lines = ["import numpy as np", "from dualtape import dnp", ""]
    for name, _, method, numpy_fn in CASES:
        for kind, body in (("method", method), ("numpy", numpy_fn)):
            lines += [f"def {kind}_{name}(x):", f"    return {body}", "",
                      f"def loss_{kind}_{name}(x, w):", f"    return np.sum({kind}_{name}(x) * w)", ""]
    for name, _, method in NONDIFF_CASES:
        lines += [f"def method_{name}(x):", f"    return {method}", "",
                  f"def scaled_{name}(x):", f"    return np.sum(x) * {method}", ""]
    return "\n".join(lines)


@functools.lru_cache(maxsize=None)
def _cases():
    """The table as functions in a module on disk (the transformer reads their source)."""
    path = Path(tempfile.mkdtemp(prefix="dualtape_array_methods_")) / "array_method_cases.py"
    path.write_text(_module_source())
    spec = importlib.util.spec_from_file_location("array_method_cases", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["array_method_cases"] = module
    spec.loader.exec_module(module)
    return module


def _inputs(name, shape, dtype):
    """x (no ties, nothing at a clip bound), a cotangent w of the output and a tangent u."""
    rng = np.random.default_rng(abs(hash(name)) % 2 ** 32)
    x = (rng.standard_normal(shape) + 0.05).astype(dtype)
    expected = getattr(_cases(), f"method_{name}")(x)
    w = rng.standard_normal(np.shape(expected)).astype(dtype)
    u = rng.standard_normal(shape).astype(dtype)
    return x, w, u, expected


def _plain(value):
    if isinstance(value, tf.Tensor):
        return value.numpy()
    if isinstance(value, Dual):
        return value.primal
    return value


def _check_value(got, expected):
    got = np.asarray(_plain(got))
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.asarray(expected).dtype


def _check_derivative(got, reference, dtype, x, same_dtype_as_input=True):
    got = np.asarray(_plain(got))
    assert got.shape == np.shape(x)
    assert got.dtype == (dtype if same_dtype_as_input else np.asarray(reference).dtype)
    np.testing.assert_allclose(got, np.asarray(_plain(reference)), rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])


def _central_difference(name, x, w, u):
    """<d loss, u> by central differences of the method on plain float64 arrays."""
    loss = getattr(_cases(), f"loss_method_{name}")
    eps = 1e-6
    return (loss(x + eps * u, w) - loss(x - eps * u, w)) / (2 * eps)


def _loss(kind, name):
    return getattr(_cases(), f"loss_{kind}_{name}")


# -- reverse mode: Tensor and Variable under a GradientTape ------------------------------------

def _tape_gradient(kind, name, make, x, w):
    source = make(x)
    with tf.GradientTape() as tape:
        tape.watch(source)
        value = getattr(_cases(), f"{kind}_{name}")(source)
        loss = _loss(kind, name)(source, w)
    return value, tape.gradient(loss, source)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("make", [tf.constant, tf.Variable], ids=["Tensor", "Variable"])
@pytest.mark.parametrize("name, shape", [c[:2] for c in CASES], ids=[c[0] for c in CASES])
def test_method_on_tensor_and_variable_under_gradient_tape(name, shape, make, dtype):
    x, w, u, expected = _inputs(name, shape, dtype)
    value, gradient = _tape_gradient("method", name, make, x, w)
    assert isinstance(value, tf.Tensor)
    _check_value(value, expected)
    _, reference = _tape_gradient("numpy", name, make, x, w)
    _check_derivative(gradient, reference, dtype, x)
    if dtype is np.float64:
        np.testing.assert_allclose(np.sum(gradient.numpy() * u), _central_difference(name, x, w, u), rtol=1e-6)


# -- forward mode: Dual numbers under jvp ------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name, shape", [c[:2] for c in CASES], ids=[c[0] for c in CASES])
def test_method_on_dual_numbers_under_jvp(name, shape, dtype):
    x, w, u, expected = _inputs(name, shape, dtype)
    seen = []

    def method(x):
        seen.append(type(x))
        return getattr(_cases(), f"method_{name}")(x)

    value, tangent = fn.jvp(method, (x,), (u,))
    assert seen == [Dual]
    _check_value(value, expected)
    _, reference = fn.jvp(getattr(_cases(), f"numpy_{name}"), (x,), (u,))
    got = np.asarray(tangent)
    assert got.shape == np.shape(expected) and got.dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(got, reference, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])
    if dtype is np.float64:
        np.testing.assert_allclose(np.sum(got * w), _central_difference(name, x, w, u), rtol=1e-6)


# -- the functional API: grad (tape) and hvp (dual numbers over the tape) -----------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name, shape", [c[:2] for c in CASES], ids=[c[0] for c in CASES])
def test_method_under_functional_grad_and_hvp(name, shape, dtype):
    x, w, u, expected = _inputs(name, shape, dtype)
    method, numpy_fn = _loss("method", name), _loss("numpy", name)
    gradient = fn.grad(lambda x: method(x, w))(x)
    _check_derivative(gradient, fn.grad(lambda x: numpy_fn(x, w))(x), dtype, x)
    if dtype is np.float64:
        np.testing.assert_allclose(np.sum(gradient * u), _central_difference(name, x, w, u), rtol=1e-6)
    curvature = fn.hvp(lambda x: method(x, w) ** 2, (x,), (u,))
    _check_derivative(curvature, fn.hvp(lambda x: numpy_fn(x, w) ** 2, (x,), (u,)), dtype, x)


# -- the source transformer: the same spellings in generated code -------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name, shape", [c[:2] for c in CASES], ids=[c[0] for c in CASES])
def test_method_under_transforms_grad_and_jvp(name, shape, dtype):
    x, w, u, expected = _inputs(name, shape, dtype)
    method, numpy_fn = getattr(_cases(), f"method_{name}"), getattr(_cases(), f"numpy_{name}")
    value, tangent = dt.jvp(method)(x, u)
    _check_value(value, expected)
    _, reference = dt.jvp(numpy_fn)(x, u)
    np.testing.assert_allclose(tangent, reference, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])
    gradient = dt.grad(_loss("method", name))(x, w)
    # (the transformer's gradients of float32 code are float64, whichever the spelling)
    _check_derivative(gradient, dt.grad(_loss("numpy", name))(x, w), dtype, x, same_dtype_as_input=False)
    if dtype is np.float64:
        np.testing.assert_allclose(np.sum(gradient * u), _central_difference(name, x, w, u), rtol=1e-6)
        np.testing.assert_allclose(np.sum(tangent * w), _central_difference(name, x, w, u), rtol=1e-6)


# -- boolean methods: the value, in every mode ---------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name, shape", [c[:2] for c in NONDIFF_CASES], ids=[c[0] for c in NONDIFF_CASES])
def test_boolean_methods_in_every_mode(name, shape, dtype):
    x, _, u, expected = _inputs(name, shape, dtype)
    method = getattr(_cases(), f"method_{name}")
    for make in (tf.constant, tf.Variable):
        source = make(x)
        with tf.GradientTape() as tape:
            tape.watch(source)
            _check_value(method(source), expected)
    values = []
    fn.jvp(lambda x: values.append(method(x)) or dnp.sum(x), (x,), (u,))
    fn.grad(lambda x: values.append(method(x)) or dnp.sum(x))(x)
    for value in values:
        _check_value(value, expected)
    scaled = getattr(_cases(), f"scaled_{name}")
    value, tangent = dt.jvp(scaled)(x, u)
    np.testing.assert_allclose(value, np.sum(x) * expected, rtol=TOLERANCE[dtype])
    np.testing.assert_allclose(tangent, np.sum(u) * expected, rtol=TOLERANCE[dtype])


# -- item(): a plain number, refused where it would drop a functional derivative ---------------

def _item_times(x):
    return x[0] * x.sum().item()


def test_item_is_refused_under_functional_transforms_as_float_is():
    x, v = np.array([0.5, 1.5]), np.array([1.0, -2.0])
    calls = [lambda: fn.grad(_item_times)(x), lambda: fn.jvp(_item_times, (x,), (v,)),
             lambda: fn.hvp(_item_times, (x,), (v,)), lambda: fn.jacrev(_item_times)(x),
             lambda: fn.jacfwd(_item_times)(x)]
    for call in calls:
        with pytest.raises(TypeError, match=r"plain Python number through \.item\(\).*stop_gradient"):
            call()


def test_item_under_gradient_tape_is_a_constant_as_float_is():
    x = tf.Variable([0.5, 1.5], dtype=tf.float64)
    with tf.GradientTape() as tape:
        total = x.sum().item()
        y = x[0] * total
    assert total == 2.0 and type(total) is float
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0, 0.0])  # the item is a constant
    assert tf.constant([[3]]).item() == 3 and tf.constant(np.arange(6.0)).item(4) == 4.0


def test_item_of_integers_and_stopped_values_is_allowed_in_functional_transforms():
    x = np.array([0.5, 1.5])

    def f(x):
        k = (x > 1.0).sum().item() + dnp.argmax(x).item()  # integers: no derivative to drop
        return x[k - 1] * dnp.stop_gradient(x).sum().item()

    np.testing.assert_allclose(fn.grad(f)(x), [0.0, 2.0])  # k = 1 + 1: x[1] * 2.0
    np.testing.assert_allclose(fn.jvp(f, (x,), (np.ones(2),))[1], 2.0)


def test_transforms_differentiate_item_as_float():
    x = np.array([[0.5]])
    g = dt.grad(lambda_item)(x)
    np.testing.assert_allclose(g, [[2 * 0.5 * 3.0]])
    value, tangent = dt.jvp(lambda_item)(x, np.ones((1, 1)))
    assert np.shape(value) == () and np.isclose(tangent, 3.0)


def lambda_item(x):
    return x.item() * x.item() * 3.0


# -- len(), iteration, ndim and size ------------------------------------------------------------

def rows_weighted(x):
    total = 0.0
    for k, row in enumerate(x):
        total = total + row.sum() * (k + 1) / len(x)
    return total * x.ndim + x.size


def test_len_iteration_ndim_and_size_in_every_mode():
    x = np.arange(6.0).reshape(3, 2) / 10
    expected = rows_weighted(x)
    gradient = np.repeat(np.arange(1, 4)[:, None] / 3 * 2, 2, axis=1)
    t = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(t)
        y = rows_weighted(t)
    assert np.isclose(y.numpy(), expected)
    np.testing.assert_allclose(tape.gradient(y, t).numpy(), gradient)
    np.testing.assert_allclose(fn.grad(rows_weighted)(x), gradient)
    value, tangent = fn.jvp(rows_weighted, (x,), (np.ones_like(x),))
    assert np.isclose(value, expected) and np.isclose(tangent, gradient.sum())
    np.testing.assert_allclose(dt.grad(rows_weighted)(x), gradient)
    for value in (tf.constant(x), tf.Variable(x)):
        assert (len(value), value.ndim, value.size, len(list(value))) == (3, 2, 6, 3)


# -- TF's own tensor API wins where the spellings conflict --------------------------------------

def test_tf_api_is_kept_on_tensors():
    t = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    assert isinstance(t.shape, tf.TensorShape) and t.shape == (2, 2) and t.dtype == tf.float32
    assert isinstance(t.T, tf.Tensor) and t.T.shape == (2, 2) and t.T.dtype is tf.float32
    assert repr(t.sum()) == "<tf.Tensor: shape=(), dtype=float32, numpy=10.0>"
    assert str(t.T) == "tf.Tensor(\n[[1. 3.]\n [2. 4.]], shape=(2, 2), dtype=float32)"
    assert t.astype(tf.float64).dtype == tf.float64 and t.astype("float64").dtype == tf.float64
    v = tf.Variable([1.0, 2.0])
    assert isinstance(v.copy(), tf.Tensor) and not isinstance(v.copy(), tf.Variable)
    assert v.copy().numpy().tolist() == [1.0, 2.0]


def test_method_errors_name_the_fix():
    t = tf.constant(np.ones((2, 3)))
    with pytest.raises(TypeError, match=r"\[reshape\].*x.reshape\(2, 3\)"):
        t.reshape()
    with pytest.raises(ValueError, match=r"\[Reshape\].*element counts"):
        t.reshape(4, 2)
    with pytest.raises(TypeError, match=r"\[sum\] out="):
        t.sum(out=np.zeros(3))
    with pytest.raises(TypeError, match=r"\[clip\]"):
        t.clip(0.0, 1.0, out=np.zeros((2, 3)))


# -- np.copy and the finding's program (R1) ------------------------------------------------------

def copies_then_squares(x):
    u = x.copy()
    return np.sum(u * u) + np.sum(x.T * x) + np.sum(np.copy(x))


def test_copy_and_transpose_of_traced_values_in_every_mode():
    # regression: findings/programs.md R1, AttributeError on tensors and dual numbers
    x = np.array([0.3, 0.5])
    expected = 4 * x + 1
    t = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(t)
        y = copies_then_squares(t)
    np.testing.assert_allclose(tape.gradient(y, t).numpy(), expected)
    np.testing.assert_allclose(fn.grad(copies_then_squares)(x), expected)
    np.testing.assert_allclose(fn.jvp(copies_then_squares, (x,), (np.ones(2),))[1], expected.sum())
    np.testing.assert_allclose(fn.hvp(copies_then_squares, (x,), (np.ones(2),)), [4.0, 4.0])
    np.testing.assert_allclose(fn.jacrev(copies_then_squares)(x), expected)
    np.testing.assert_allclose(dt.grad(copies_then_squares)(x), expected)
    assert math.isclose(dt.jvp(copies_then_squares)(x, np.ones(2))[1], expected.sum())
    plain = np.ones(2)
    assert dnp.copy(plain) is not plain and np.shares_memory(dnp.copy(plain), plain) is False


def f_from_the_issue(x):
    return x.sum() + x.T.dot(x).mean()


def test_transforms_accept_method_spellings_in_grad_jvp_and_hvp():
    x = np.arange(6.0).reshape(2, 3) / 10
    v = np.ones_like(x)
    gradient = fn.grad(f_from_the_issue)(x)
    np.testing.assert_allclose(dt.grad(f_from_the_issue)(x), gradient, rtol=1e-12)
    np.testing.assert_allclose(dt.jvp(f_from_the_issue)(x, v)[1], np.sum(gradient * v), rtol=1e-12)
    np.testing.assert_allclose(dt.hvp(f_from_the_issue)(x, v), fn.hvp(f_from_the_issue, (x,), (v,)), rtol=1e-12)


def writes_into_a_copy(x):
    u = x.copy()
    u[0] = 1.0
    return np.sum(u)


def test_a_write_into_a_copy_is_refused_clearly_on_tensors_and_dual_numbers():
    # a copy of a traced value is traced, so immutable (the write raised Python's bare
    # "'Dual' object does not support item assignment", a crash to the program checker)
    x = np.array([0.3, 0.5])
    with pytest.raises(TypeError, match=r"\[Dual.__setitem__\].*immutable.*dnp.where"):
        fn.jvp(writes_into_a_copy, (x,), (np.ones(2),))
    with pytest.raises(TypeError, match=r"\[Tensor.__setitem__\].*immutable.*dnp.where"):
        fn.grad(writes_into_a_copy)(x)
    np.testing.assert_allclose(dt.grad(writes_into_a_copy)(x), [0.0, 1.0])  # generated code can write
