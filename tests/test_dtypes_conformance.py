"""Complex values in every mode (issue 22); dtypes as NumPy and TF give them (issue #10, section 4).

- Complex values gave wrong derivatives (`grad(lambda x: np.abs(x * (1 + 2j)))(1.0)` was
  -1.34, not 2.236), so every mode refused them (issue 10); they are now differentiated,
  with JAX's convention in the functional API and TF's on the tape (docs/numerics.md), and
  the cases that refused now give the right numbers or JAX's errors.
- NumPy calls on tensors follow NumPy's promotion; Python numbers next to a float64 array
  are not rounded through float32.
- TF conformance: `watched_variables()` in creation order, integer shape arithmetic stays
  int32, float32 tangents stay float32 when Python floats join in.
"""

import numpy as np
import pytest

import dualtape as tf
from dualtape import dnp
from dualtape.functional import (grad, hessian, hvp, jacfwd, jacrev, jvp, linearize,
                                 value_and_grad, vjp)
from dualtape.functional import jacobian

# -- complex values: the cases every mode refused (issue 10) now differentiate (issue 22) ---------

X = np.array([1.0, 2.0])
V = np.array([1.0, -1.0])
SQRT5 = np.sqrt(5.0)

TRANSFORMS = {
    "grad": lambda f, x: grad(f)(x),
    "value_and_grad": lambda f, x: value_and_grad(f)(x)[1],
    "vjp": lambda f, x: vjp(f, x)[1](1.0)[0],
    "jvp": lambda f, x: jvp(f, (x,), (np.ones_like(x),))[1],
    "linearize": lambda f, x: linearize(f, x)[1](np.ones_like(x)),
    "jacfwd": lambda f, x: jacfwd(f)(x),
    "jacrev": lambda f, x: jacrev(f)(x),
    "jacobian": lambda f, x: jacobian(f)(x),
    "hessian": lambda f, x: hessian(f)(x),
    "hvp": lambda f, x: hvp(f, (x,), (np.ones_like(x),))[1],
}

Z = np.array([1.0 + 1.0j, 2.0])
Z_GRAD = np.conj(Z) / np.abs(Z)  # JAX's gradient of sum |z|: dL/dx - i dL/dy
# real input, complex inside (the example); a complex input: (f, x, {api: expected})
COMPLEX_CASES = {
    "complex_constant": (lambda x: dnp.sum(np.abs(x * (1 + 2j))), X, {
        "grad": [SQRT5, SQRT5], "value_and_grad": [SQRT5, SQRT5], "vjp": [SQRT5, SQRT5],
        "jvp": 2 * SQRT5, "linearize": 2 * SQRT5, "jacfwd": [SQRT5, SQRT5],
        "jacrev": [SQRT5, SQRT5], "jacobian": [SQRT5, SQRT5], "hessian": np.zeros((2, 2)),
        "hvp": [0.0, 0.0]}),
    "complex_input": (lambda x: dnp.sum(np.abs(x)), Z, {
        "grad": Z_GRAD, "value_and_grad": Z_GRAD, "vjp": Z_GRAD,
        "jvp": np.sum(np.real(np.conj(Z) / np.abs(Z))), "linearize": np.sum(np.real(np.conj(Z) / np.abs(Z))),
        "jacfwd": "jacfwd requires real-valued inputs", "jacrev": Z_GRAD, "jacobian": Z_GRAD,
        "hessian": "jacfwd requires real-valued inputs", "hvp": None}),
}
FUNCTIONAL = [(case, api) for case in COMPLEX_CASES for api in TRANSFORMS
              if COMPLEX_CASES[case][2][api] is not None]


@pytest.mark.parametrize("case,api", FUNCTIONAL, ids=[f"{c}-{a}" for c, a in FUNCTIONAL])
def test_functional_api_differentiates_complex(case, api):
    """The issue-10 cases: JAX's numbers, or JAX's error where JAX raises."""
    f, x, expected = COMPLEX_CASES[case]
    expected = expected[api]
    if isinstance(expected, str):
        with pytest.raises(TypeError, match=expected):
            TRANSFORMS[api](f, x)
        return
    np.testing.assert_allclose(TRANSFORMS[api](f, x), expected, rtol=1e-14, atol=1e-15)


def test_tape_complex_constant():
    """TF: d|x (1 + 2i)|/dx = sqrt(5) for a real x (the issue-10 example gave -1.34)."""
    x = tf.constant(1.0, dtype=tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = np.abs(x * (1 + 2j))
    assert np.isclose(tape.gradient(y, x).numpy(), SQRT5, rtol=1e-15)


def test_tape_complex_variable_is_tf_conjugate_of_jax():
    """TF's gradient of |v|^2 is 2 v (dL/dx + i dL/dy), the conjugate of JAX's."""
    v = tf.Variable(np.array([1.0 + 2.0j]))
    with tf.GradientTape() as tape:
        y = dnp.sum(dnp.real(v * dnp.conj(v)))
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), [2.0 + 4.0j], rtol=1e-15)


def test_tape_complex_gather_and_jacobian_in_tf_convention():
    """A gather's IndexedSlices and tape.jacobian are conjugated too (TF: 2 z, conj(f'(z)))."""
    v = tf.Variable(np.array([1 + 2j, 3 - 1j, 0.5 + 0.5j]))
    with tf.GradientTape() as tape:
        y = tf.gather(v, [0, 2])
        loss = dnp.sum(dnp.real(y * dnp.conj(y)))
    g = tape.gradient(loss, v)
    assert type(g).__name__ == "IndexedSlices"
    np.testing.assert_allclose(g.values.numpy(), [2 + 4j, 1 + 1j], rtol=1e-15)
    z = tf.constant(np.array([1 + 2j, 3 - 1j]))
    with tf.GradientTape() as tape:
        tape.watch(z)
        w = z * z
    np.testing.assert_allclose(tape.jacobian(w, z).numpy(), np.diag(np.conj(2 * z.numpy())), rtol=1e-15)


def test_accumulator_complex_primal():
    z = tf.constant(np.array([1.0 + 2.0j]))
    with tf.autodiff.ForwardAccumulator(z, np.array([1.0j])) as acc:
        y = z * z
    np.testing.assert_allclose(acc.jvp(y).numpy(), 2 * z.numpy() * 1j, rtol=1e-15)


def _accumulator_complex_tangent():
    tf.autodiff.ForwardAccumulator(tf.constant(np.array([1.0])), np.array([1.0 + 1.0j]))


def _jvp_complex_tangent():
    return jvp(lambda x: x * 2.0, (X,), (np.array([1.0 + 1.0j, 0.0]),))


def _vjp_complex_cotangent():
    return vjp(lambda x: x * 2.0, X)[1](np.array([1.0 + 1.0j, 0.0]))


def _tape_complex_seed():
    x = tf.constant([1.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    return tape.gradient(y, x, output_gradients=np.array([1.0 + 1.0j]))


MISMATCH_CASES = {f.__name__: f for f in (
    _accumulator_complex_tangent, _jvp_complex_tangent, _vjp_complex_cotangent, _tape_complex_seed)}


@pytest.mark.parametrize("name", list(MISMATCH_CASES))
def test_complex_tangent_or_cotangent_of_a_real_value_is_refused(name):
    """A complex tangent or cotangent for a real value lost its imaginary part silently."""
    with pytest.raises((TypeError, ValueError), match="complex") as info:
        MISMATCH_CASES[name]()
    assert str(info.value).startswith("[")


def test_complex_values_without_differentiation_still_compute():
    z = tf.constant(np.array([3.0 + 4.0j]))
    assert np.abs(z * 2.0).numpy().tolist() == [10.0]  # no tape, no accumulator: plain NumPy
    with tf.GradientTape() as tape:
        x = tf.constant(2.0)
        tape.watch(x)
        w = z * 2.0  # complex, but nothing watched flows into it
        y = x * x
    assert tape.gradient(y, x).numpy() == 4.0 and w.dtype == tf.complex128


# -- NumPy calls on tensors follow NumPy's promotion ----------------------------------------------

A = np.array([1.0, 4.0, 2.0])
B = np.array([2.0, 3.0, 2.0])

NUMPY_CALLS = {  # a NumPy call giving integers or bools, then NumPy-style arithmetic
    "sum_of_less_plus_float": lambda x, y: np.sum(x < y) + 0.0,
    "sum_of_less_times_half": lambda x, y: np.sum(x < y) * 0.5,
    "argmax_plus_float": lambda x, y: np.argmax(x) + 0.5,
    "count_nonzero_div": lambda x, y: np.count_nonzero(x > y) / 2,
    "equal_plus_float": lambda x, y: np.equal(x, y) + 0.25,
    "isnan_sum_plus_float": lambda x, y: np.sum(np.isnan(x)) + 1.5,
    "any_plus_float": lambda x, y: np.any(x > y) + 0.5,
}


@pytest.mark.parametrize("name", list(NUMPY_CALLS))
@pytest.mark.parametrize("where", ["tape", "grad"])
def test_numpy_calls_on_tensors_promote_as_numpy(name, where):
    # regression: #10, np.sum(x < y) + 0.0 raised TF's "Cannot convert 0.0 to ... int64"
    f = NUMPY_CALLS[name]
    expected = f(A, B)
    if where == "tape":
        x, y = tf.constant(A), tf.constant(B)
        with tf.GradientTape() as tape:
            tape.watch(x)
            got = f(x, y)
    else:
        seen = []
        grad(lambda x: seen.append(f(x, B)) or dnp.sum(x))(A)
        got = seen[0]
    got = np.asarray(got)
    assert got.dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(got, expected)


def test_numpy_call_with_a_float_result_is_still_recorded():
    x = tf.constant(A)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(x * x) + np.sum(x < 2.0)  # float tensor + NumPy integer
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 2 * A)


# -- Python numbers next to float64 arrays are not rounded through float32 -------------------------

BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "pow"]
PAIRS = [(name, side) for name in BINARY for side in ("left", "right")]


@pytest.mark.parametrize("name,side", PAIRS, ids=[f"{n}-{s}" for n, s in PAIRS])
def test_python_float_takes_the_float64_array_dtype(name, side):
    # regression: #10, dualtape.add(1.001, float64 array) was 2.00100004673 (1.001 as float32)
    op, np_op = getattr(tf, name, None) or getattr(tf.math, name), getattr(np, name if name != "pow" else "power")
    array = np.array([1.0, 2.5])
    args = (1.001, array) if side == "left" else (array, 1.001)
    got = op(*args)
    assert got.dtype == tf.float64
    np.testing.assert_array_equal(got.numpy(), np_op(*args))


def test_python_float_with_float32_tensor_stays_float32():
    got = tf.add(1.001, tf.constant([1.0]))
    assert got.dtype == tf.float32 and got.numpy()[0] == np.float32(1.001) + np.float32(1.0)


# -- TF conformance --------------------------------------------------------------------------------


def test_watched_variables_in_creation_order():
    # regression: #10, watched_variables() listed them in the order of first use
    a, b, c = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b"), tf.Variable(3.0, name="c")
    with tf.GradientTape(persistent=True) as tape:
        y = c * b
        tape.watch(a)
        y = y * a
    assert [v.name for v in tape.watched_variables()] == ["a:0", "b:0", "c:0"]
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch([c, a])
    assert [v.name for v in tape.watched_variables()] == ["a:0", "c:0"]


def _shape_cases():
    v = tf.Variable(np.zeros((2, 3, 4), np.float32))
    s = tf.shape(v)
    return {
        "reduce_prod(v.shape)": tf.reduce_prod(v.shape),
        "reduce_sum(v.shape)": tf.reduce_sum(v.shape),
        "reduce_prod(tf.shape)": tf.reduce_prod(s),
        "reduce_sum(tf.shape)": tf.reduce_sum(s),
        "reduce_mean(tf.shape)": tf.reduce_mean(s),
        "reduce_max(tf.shape)": tf.reduce_max(s),
        "reduce_prod(tf.shape[1:])": tf.reduce_prod(s[1:]),
        "reduce_sum(axis)": tf.reduce_sum(tf.reshape(s, (1, 3)), axis=1),
        "math.reduce_prod": tf.math.reduce_prod(v.shape),
        "cumsum(tf.shape)": tf.cumsum(s),
        "shape * 2": s * 2,
        "shape // 2": s // 2,
        "shape[0] * shape[1]": s[0] * s[1],
        "size": tf.size(v),
        "rank": tf.rank(v),
        "range(5)": tf.range(5),
        "range(size)": tf.range(tf.size(v)),
        "range(1, 7, 2)": tf.range(1, 7, 2),
        "concat(shape, [5])": tf.concat([s, [5]], 0),
        "stack(shape[0], 3)": tf.stack([s[0], 3]),
    }


SHAPE_CASES = list(_shape_cases())


@pytest.mark.parametrize("name", SHAPE_CASES)
def test_shape_arithmetic_is_int32(name):
    # regression: #10, tf.reduce_prod(v.shape) was int64 (NumPy widens int32 sums/products)
    result = _shape_cases()[name]
    assert result.dtype == tf.int32, f"{name}: {result.dtype}"


def test_integer_reductions_keep_tf_values():
    assert tf.reduce_prod(tf.Variable(np.zeros((2, 3, 4))).shape).numpy() == 24
    assert tf.reduce_mean(tf.constant([1, 2])).numpy() == 1  # TF's integer mean truncates
    assert tf.reduce_mean(tf.constant([-1, -2])).numpy() == -1
    assert tf.range(2.5).dtype == tf.float32 and tf.range(np.int64(3)).dtype == tf.int64


FLOAT32_EXPRESSIONS = {  # float32 primals mixed with Python numbers, inside ForwardAccumulator
    "-x * x / 4.0": lambda x: -x * x / 4.0,
    "x + 1.5": lambda x: x + 1.5,
    "1.5 + x": lambda x: 1.5 + x,
    "x - 2.0": lambda x: x - 2.0,
    "2.0 - x": lambda x: 2.0 - x,
    "3.0 * x + 1": lambda x: 3.0 * x + 1,
    "x ** 2.0": lambda x: x ** 2.0,
    "2.0 ** x": lambda x: 2.0 ** x,
    "1.0 / x": lambda x: 1.0 / x,
    "maximum(x, 0.5)": lambda x: tf.maximum(x, 0.5),
    "minimum(0.5, x)": lambda x: tf.minimum(0.5, x),
    "where(x > 1, x, 0.5)": lambda x: tf.where(x > 1.0, x, 0.5),
    "add(x, 1.5)": lambda x: tf.add(x, 1.5),
    "np.add(x, 1.5)": lambda x: np.add(x, 1.5),
    "reduce_sum(x * 2.0 + 1.5) ** 2.0": lambda x: tf.reduce_sum(x * 2.0 + 1.5) ** 2.0,
}


@pytest.mark.parametrize("name", list(FLOAT32_EXPRESSIONS))
def test_forward_accumulator_keeps_float32_with_python_floats(name):
    # regression: #10, a float64 tangent leaked in and the next float32 op raised
    f = FLOAT32_EXPRESSIONS[name]
    x = tf.constant([0.7, 2.0])  # away from the kinks of where, maximum and minimum
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.5])) as acc:
        y = f(x)
        z = y * tf.constant(2.0)  # a float32 op on the result and its tangent
    for t in (y, z):
        assert t.dtype == tf.float32 and acc.jvp(t).dtype == tf.float32, name
    np.testing.assert_allclose(2 * acc.jvp(y).numpy(), acc.jvp(z).numpy(), rtol=1e-6)
    # the tangent itself, against central differences in float64
    x64, dx = np.array([0.7, 2.0]), np.array([1.0, 0.5])
    f64 = lambda v: np.asarray(f(tf.constant(v)), dtype=np.float64)  # noqa: E731
    numeric = (f64(x64 + 1e-6 * dx) - f64(x64 - 1e-6 * dx)) / 2e-6
    np.testing.assert_allclose(acc.jvp(y).numpy(), numeric, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", list(FLOAT32_EXPRESSIONS))
def test_jvp_keeps_float32_with_python_floats(name):
    f = FLOAT32_EXPRESSIONS[name]
    x = np.array([1.0, 2.0], np.float32)
    out, tangent = jvp(lambda v: f(v), (x,), (np.ones(2, np.float32),))
    assert np.asarray(out).dtype == np.float32 and np.asarray(tangent).dtype == np.float32
