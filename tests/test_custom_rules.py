"""Custom rules in every mode (issue 10, section 3): custom_gradient, custom_jvp, custom_vjp and
user primitives, first and second order, against the equivalent built-in ops and finite
differences; and the source transformer's refusal of rules it cannot inline."""

import functools
import importlib.util
import pathlib
import textwrap

import numpy as np
import pytest

import dualtape as tf
from dualtape import dnp

X0 = np.array([0.3, -1.2, 0.8])
W = np.array([0.7, -0.4, 1.3])


def close(a, b, rtol=1e-9, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=rtol, atol=atol)


def numeric_jacobian(f, x, eps=1e-6):
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps))
    return np.stack(cols, axis=-1)


def jacobians(f, x):
    """The Jacobian of f: R^n -> R^m at x, by every first-order mode."""
    n = x.size
    basis = np.eye(n)
    out = {"jacfwd": tf.jacfwd(f)(x), "jacrev": tf.jacrev(f)(x)}
    out["jvp"] = np.stack([tf.jvp(f, (x,), (e,))[1] for e in basis], axis=-1)
    out["linearize"] = np.stack([tf.linearize(f, x)[1](e) for e in basis], axis=-1)
    _, pullback = tf.vjp(f, x)
    shape = np.shape(f(x))
    rows = [pullback(e.reshape(shape))[0] for e in np.eye(int(np.prod(shape)))]
    out["vjp"] = np.stack(rows).reshape(shape + (n,))
    t = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(t)
        y = f(t)
    out["tape"] = tape.jacobian(y, t).numpy()
    columns = []
    for e in basis:
        with tf.autodiff.ForwardAccumulator(t, tf.constant(e)) as acc:
            y = f(t)
        columns.append(acc.jvp(y).numpy())
    out["accumulator"] = np.stack(columns, axis=-1)
    return out


def hessians(s, x):
    """The Hessian of scalar s at x, by every second-order composition."""
    basis = np.eye(x.size)
    out = {"hessian": tf.hessian(s)(x), "jacfwd(grad)": tf.jacfwd(tf.grad(s))(x),
           "jacrev(grad)": tf.jacrev(tf.grad(s))(x)}
    out["hvp"] = np.stack([tf.hvp(s, (x,), (e,)) for e in basis])
    out["jvp(grad)"] = np.stack([tf.jvp(tf.grad(s), (x,), (e,))[1] for e in basis])
    t = tf.constant(x)
    with tf.GradientTape() as t2:
        t2.watch(t)
        with tf.GradientTape() as t1:
            t1.watch(t)
            y = s(t)
        g = t1.gradient(y, t)
    out["nested tapes"] = t2.jacobian(g, t).numpy()
    rows = []
    for e in basis:
        with tf.autodiff.ForwardAccumulator(t, tf.constant(e)) as acc:
            with tf.GradientTape() as tape:
                tape.watch(t)
                y = s(t)
            g = tape.gradient(y, t)
        rows.append(acc.jvp(g).numpy())
    out["accumulator over tape"] = np.stack(rows)
    return out


def check_against(custom, builtin, x=X0, second_order=True):
    """custom and builtin agree in every mode (tight), and builtin agrees with differences."""
    expected = numeric_jacobian(builtin, x)
    for mode, jac in jacobians(custom, x).items():
        close(jac, expected, rtol=1e-6, atol=1e-8)
    for mode, jac in jacobians(builtin, x).items():
        close(jacobians(custom, x)[mode], jac)
    if second_order:
        def scalar(f):
            return lambda v: dnp.sum(f(v) * W[:x.size])
        reference = hessians(scalar(builtin), x)
        numeric = numeric_jacobian(tf.grad(scalar(builtin)), x)
        for mode, hess in hessians(scalar(custom), x).items():
            close(hess, reference[mode], rtol=1e-8, atol=1e-10)
            close(hess, numeric, rtol=1e-6, atol=1e-7)


# -- custom_gradient ---------------------------------------------------------------------------

@tf.custom_gradient
def cube(x):
    def grad_fn(dy):
        return dy * 3.0 * x * x
    return x * x * x, grad_fn


@tf.custom_gradient
def log1pexp(x):
    e = dnp.exp(x)

    def grad_fn(dy):
        return dy * (1 - 1 / (1 + e))   # closes over e, computed (and recorded) inside f
    return dnp.log1p(e), grad_fn


def test_custom_gradient_in_every_mode():
    # regression: issue 10 section 3, custom_gradient gave zero tangents under jvp/jacfwd,
    # None under ForwardAccumulator and a misleading LookupError under hessian
    check_against(cube, lambda x: x ** 3)
    check_against(log1pexp, lambda x: dnp.log1p(dnp.exp(x)))


def test_custom_gradient_forward_mode_uses_the_custom_rule():
    @tf.custom_gradient
    def doubled_grad(x):
        return dnp.sin(x), lambda dy: 2.0 * dy * dnp.cos(x)   # deliberately not sin's derivative

    expected = np.diag(2.0 * np.cos(X0))
    close(tf.jacfwd(doubled_grad)(X0), expected)
    close(tf.jacrev(doubled_grad)(X0), expected)
    close(tf.jvp(doubled_grad, (X0,), (np.ones(3),))[1], 2.0 * np.cos(X0))


def test_custom_gradient_stable_at_large_inputs():
    x = tf.constant(100.0)
    with np.errstate(over="ignore", invalid="ignore"):   # exp(100) overflows float32
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
            y = log1pexp(x)
        assert acc.jvp(y).numpy() == 1.0
    assert tf.jvp(log1pexp, (np.array(100.0),), (np.array(1.0),))[1] == 1.0


@tf.custom_gradient
def polar(a, b):
    """Two inputs, two outputs: (r, theta) of the point (a, b)."""
    r = dnp.sqrt(a * a + b * b)
    theta = dnp.arctan2(b, a)

    def grad_fn(dr, dtheta):
        return (dr * a / r - dtheta * b / (r * r), dr * b / r + dtheta * a / (r * r))
    return (r, theta), grad_fn


def _polar_builtin(v):
    return dnp.stack([dnp.sqrt(v[0] ** 2 + v[1] ** 2), dnp.arctan2(v[1], v[0])])


def test_custom_gradient_with_several_inputs_and_outputs():
    check_against(lambda v: dnp.stack(polar(v[0], v[1])), _polar_builtin, x=np.array([1.0, 2.0]))


def test_custom_gradient_gets_one_upstream_per_output_and_zeros_for_unused_ones():
    seen = []

    @tf.custom_gradient
    def pair(x):
        def grad_fn(d_first, d_second):
            seen.append((np.asarray(d_first), np.asarray(d_second)))
            return d_first * 2.0 + d_second * 3.0
        return (x * 2.0, x * 3.0), grad_fn

    x = tf.constant(np.array([1.0, 2.0]))
    with tf.GradientTape() as tape:
        tape.watch(x)
        first, second = pair(x)
        y = tf.reduce_sum(second)
    close(tape.gradient(y, x), [3.0, 3.0])
    (d_first, d_second), = seen
    close(d_first, [0.0, 0.0])
    close(d_second, [1.0, 1.0])


def test_custom_gradient_outputs_keep_their_dtypes():
    @tf.custom_gradient
    def mixed(x):
        return (tf.cast(x, tf.float32) * 2.0, x * 3.0, tf.shape(x)), lambda a, b, c: tf.cast(a, tf.float64) * 2.0 + b * 3.0

    x = tf.constant(np.array([1.0, 2.0]))
    with tf.GradientTape() as tape:
        tape.watch(x)
        single, double, shape = mixed(x)
        y = tf.reduce_sum(tf.cast(single, tf.float64)) + tf.reduce_sum(double)
    assert single.dtype == tf.float32 and double.dtype == tf.float64 and shape.dtype == tf.int32
    close(tape.gradient(y, x), [5.0, 5.0])


def test_custom_gradient_variables_in_forward_mode():
    scale = tf.Variable(3.0, dtype=tf.float64)

    @tf.custom_gradient
    def scaled(x):
        def grad_fn(dy, variables=None):
            return dy * scale, [tf.reduce_sum(dy * x)]
        return x * scale, grad_fn

    x = tf.constant(np.array([1.0, 2.0]))
    with tf.autodiff.ForwardAccumulator(x, tf.constant(np.array([1.0, 0.0]))) as acc:
        y = scaled(x)
    close(acc.jvp(y), [3.0, 0.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(scaled(x))
    close(tape.gradient(y, scale), 3.0)


def test_custom_gradient_errors():
    scale = tf.Variable(3.0)

    @tf.custom_gradient
    def no_variables_kwarg(x):
        return x * scale, lambda dy: dy * scale

    with tf.GradientTape():
        with pytest.raises(TypeError, match="must accept a keyword argument `variables`"):
            no_variables_kwarg(tf.constant(1.0))

    @tf.custom_gradient
    def too_many(x):
        return x * 2.0, lambda dy: (dy, dy)

    with pytest.raises(ValueError, match="custom_gradient function expected to return 1 gradients, "
                                         "but returned 2 instead"):  # TF's wording
        tf.grad(too_many)(1.0)

    @tf.custom_gradient
    def scaled_by(x, scale=1.0):
        return x * scale, lambda dy: dy * scale

    with pytest.raises(TypeError, match="keyword arguments are not differentiated"):
        tf.jvp(lambda x: scaled_by(x, scale=x), (1.0,), (1.0,))


# -- custom_jvp ----------------------------------------------------------------------------------

@tf.custom_jvp
def softplus(x):
    return dnp.log1p(dnp.exp(x))


@softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return softplus(x), dx / (1 + dnp.exp(-x))


def test_custom_jvp_in_every_mode():
    check_against(softplus, lambda x: dnp.log1p(dnp.exp(x)))
    assert tf.grad(softplus)(100.0) == 1.0   # the rule, not log1p(exp(x))'s inf / inf


def test_custom_jvp_defjvps_nondiff_argnums_and_several_outputs():
    @tf.custom_jvp
    def f(x, y):
        return dnp.sin(x) * y

    f.defjvps(lambda dx, ans, x, y: dnp.cos(x) * dx * y, lambda dy, ans, x, y: dnp.sin(x) * dy)
    check_against(lambda v: f(v, v * v), lambda v: dnp.sin(v) * v * v)

    @functools.partial(tf.custom_jvp, nondiff_argnums=(0,))
    def power(n, x):
        return x ** n

    @power.defjvp
    def _power_jvp(n, primals, tangents):
        (x,), (dx,) = primals, tangents
        return power(n, x), n * x ** (n - 1) * dx

    check_against(lambda v: power(3, v), lambda v: v ** 3)

    @tf.custom_jvp
    def sin_cos(x):
        return dnp.sin(x), dnp.cos(x)

    @sin_cos.defjvp
    def _sin_cos_jvp(primals, tangents):
        (x,), (dx,) = primals, tangents
        return sin_cos(x), (dnp.cos(x) * dx, -dnp.sin(x) * dx)

    check_against(lambda v: dnp.stack(sin_cos(v)), lambda v: dnp.stack([dnp.sin(v), dnp.cos(v)]))


# -- custom_vjp ----------------------------------------------------------------------------------

@tf.custom_vjp
def sin_times(x, y):
    return dnp.sin(x) * y


def _sin_times_fwd(x, y):
    return sin_times(x, y), (dnp.cos(x), dnp.sin(x), y)


def _sin_times_bwd(residuals, g):
    cos_x, sin_x, y = residuals
    return cos_x * g * y, sin_x * g


sin_times.defvjp(_sin_times_fwd, _sin_times_bwd)


def test_custom_vjp_in_reverse_mode_and_second_order():
    x = np.array([0.5, -0.3])
    f = lambda v: sin_times(v, v * v)        # noqa: E731
    builtin = lambda v: dnp.sin(v) * v * v   # noqa: E731
    expected = numeric_jacobian(builtin, x)
    close(tf.jacrev(f)(x), expected, rtol=1e-6)
    close(np.stack([tf.vjp(f, x)[1](e)[0] for e in np.eye(2)]), expected, rtol=1e-6)
    t = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(t)
        y = f(t)
    close(tape.jacobian(y, t), expected, rtol=1e-6)
    scalar = lambda v: dnp.sum(f(v) * W[:2])   # noqa: E731
    reference = tf.hessian(lambda v: dnp.sum(builtin(v) * W[:2]))(x)
    close(tf.jacrev(tf.grad(scalar))(x), reference)  # reverse over reverse: bwd differentiated


def test_forward_over_reverse_refuses_custom_vjp():
    """hessian, hvp and jacfwd(grad) run forward mode through the function's forward pass, which
    would differentiate its own code rather than its VJP (a straight-through floor would get
    floor's zero slope under the user's rule): refused as in JAX; jacrev(grad) is the way."""
    @tf.custom_vjp
    def straight_through(v):
        return dnp.floor(v)
    straight_through.defvjp(lambda v: (dnp.floor(v), None), lambda _, g: (g * 5.0,))
    loss = lambda v: dnp.sum(straight_through(v) * v)  # noqa: E731
    x = np.array([0.3, 1.7])
    for second_order in (tf.hessian(loss), tf.jacfwd(tf.grad(loss)),
                         lambda v: tf.hvp(loss, (v,), (np.ones(2),))):
        with pytest.raises(TypeError, match="can't apply forward-mode autodiff .* straight_through"):
            second_order(x)
    close(tf.jacrev(tf.grad(loss))(x), 10.0 * np.eye(2))  # d/dx (floor(x) + 5 x) under the rule: 5 + 5


def test_custom_vjp_refuses_forward_mode():
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        tf.jvp(sin_times, (0.5, 2.0), (1.0, 0.0))
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        tf.jacfwd(lambda v: sin_times(v, 2.0))(X0)
    t = tf.constant(X0)
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        with tf.autodiff.ForwardAccumulator(t, tf.constant(np.ones(3))):
            sin_times(t, 2.0)


def test_custom_vjp_residuals_nondiff_argnums_and_bad_bwd():
    @functools.partial(tf.custom_vjp, nondiff_argnums=(0, 1))
    def clip_gradient(lo, hi, x):
        return x

    clip_gradient.defvjp(lambda lo, hi, x: (x, None), lambda lo, hi, _, g: (dnp.clip(g, lo, hi),))
    close(tf.grad(lambda x: dnp.sum(clip_gradient(-0.5, 0.5, x) * W))(X0), [0.5, -0.4, 0.5])

    @tf.custom_vjp
    def bad(x):
        return x

    bad.defvjp(lambda x: (x, None), lambda _, g: g)
    with pytest.raises(TypeError, match="one cotangent per differentiable argument"):
        tf.grad(bad)(1.0)


# -- user primitives -----------------------------------------------------------------------------

def _sin_primitive(vjp=True, jvp=True):
    prim = tf.primitive(np.sin)
    if vjp:
        tf.defvjp(prim, lambda ans, x: lambda g: g * dnp.cos(x))
    if jvp:
        tf.defjvp(prim, lambda g, ans, x: g * dnp.cos(x))
    return prim


@pytest.mark.parametrize("rules", ["both", "vjp only", "jvp only"])
def test_primitive_matches_the_builtin_op_in_every_mode(rules):
    prim = _sin_primitive(vjp=rules != "jvp only", jvp=rules != "vjp only")
    check_against(prim, dnp.sin)


def test_primitive_with_two_arguments_same_none_and_kwargs():
    mul = tf.primitive(lambda x, y, scale=1.0: x * y * scale)
    tf.defvjp(mul, lambda ans, x, y, scale=1.0: lambda g: g * y * scale,
              lambda ans, x, y, scale=1.0: lambda g: g * x * scale)
    tf.defjvp(mul, "same", "same")
    check_against(lambda v: mul(v, dnp.sin(v), scale=2.0), lambda v: v * dnp.sin(v) * 2.0)
    by_argnums = tf.primitive(lambda x, y: x * y)
    tf.defvjp(by_argnums, lambda ans, x, y: lambda g: g * x, argnums=[1])
    tf.defjvp(by_argnums, lambda g, ans, x, y: g * x, argnums=[1])
    assert tf.grad(by_argnums, argnums=1)(2.0, 3.0) == 2.0
    assert tf.jvp(lambda y: by_argnums(2.0, y), (3.0,), (1.0,))[1] == 2.0
    with pytest.raises(LookupError, match="no VJP rule for argument 0"):
        tf.grad(by_argnums)(2.0, 3.0)
    constant_y = tf.primitive(lambda x, y: x * y)
    tf.defvjp(constant_y, lambda ans, x, y: lambda g: g * y, None)
    assert tf.grad(lambda y: constant_y(2.0, y), argnums=0)(3.0) == 0.0


def test_primitive_errors():
    half = tf.primitive(lambda x, y: x * y)
    tf.defvjp(half, lambda ans, x, y: lambda g: g * y)   # no rule for y in either mode
    with pytest.raises(LookupError, match="no VJP rule for argument 1"):
        tf.grad(half, argnums=1)(2.0, 3.0)
    with pytest.raises(TypeError, match="expects a primitive made by dualtape.primitive"):
        tf.defvjp(np.sin, lambda ans, x: lambda g: g)
    bare = tf.primitive(np.cos)
    t = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(t)
        y = bare(t)
    with pytest.raises(LookupError, match="gradient registry has no entry for: cos"):
        tape.gradient(y, t)
    # regression: a "same" JVP alone, transposed for reverse mode, recorded the primitive
    # again and recursed until RecursionError
    double = tf.primitive(lambda x: 2.0 * x)
    tf.defjvp(double, "same")
    assert tf.jvp(double, (1.0,), (1.0,))[1] == 2.0
    with pytest.raises(LookupError, match='no VJP rule for argument 0 \\(its "same" JVP'):
        tf.grad(double)(1.5)


def test_primitive_rules_may_call_scipy():
    special = pytest.importorskip("scipy.special")
    digamma = tf.primitive(special.digamma)
    tf.defvjp(digamma, lambda ans, x: lambda g: g * special.polygamma(1, x))
    x = np.array([1.5, 2.5, 4.0])
    expected = numeric_jacobian(special.digamma, x)
    for mode, jac in jacobians(digamma, x).items():
        close(jac, expected, rtol=1e-6, atol=1e-8)
    with pytest.raises(TypeError, match=r"\[psi\] its VJP rule failed on traced values"):
        tf.hessian(lambda v: dnp.sum(digamma(v)))(x)


# -- the source transformer --------------------------------------------------------------------

MODULE = '''
import numpy as np
import dualtape as tf
from dualtape import dnp

square = tf.primitive(lambda x: x * x)
tf.defvjp(square, lambda ans, x: lambda g: 2 * g * x)

@tf.custom_jvp
def twice(x):
    return 2.0 * x

@twice.defjvp
def _twice_jvp(primals, tangents):
    return twice(primals[0]), 2.0 * tangents[0]

@tf.custom_vjp
def thrice(x):
    return 3.0 * x

thrice.defvjp(lambda x: (3.0 * x, None), lambda _, g: (3.0 * g,))

@tf.custom_gradient
def quad(x):
    return 4.0 * x, lambda dy: 4.0 * dy

def uses_primitive(x):
    y = np.sin(x)
    return square(y)

def uses_custom_jvp(x):
    return twice(x) + x

def uses_custom_vjp(x):
    return thrice(x) * x

def uses_custom_gradient(x):
    return quad(x) - x
'''


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    path = pathlib.Path(tmp_path_factory.mktemp("custom")) / "custom_rules_module.py"
    path.write_text(textwrap.dedent(MODULE))
    spec = importlib.util.spec_from_file_location("custom_rules_module", path)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


@pytest.mark.parametrize("name, line, what", [
    ("uses_primitive", 29, "a user-defined primitive"), ("uses_custom_jvp", 32, "a custom_jvp function"),
    ("uses_custom_vjp", 35, "a custom_vjp function"), ("uses_custom_gradient", 38, "a custom_gradient function")])
def test_transformer_refuses_opaque_rules(module, name, line, what):
    import dualtape.transforms as dt
    fn = getattr(module, name)
    for api in (dt.grad, dt.jvp):
        with pytest.raises(dt.TransformError) as info:
            api(fn)
        text = str(info.value)
        assert f"custom_rules_module.py:{line} in {name}" in text and what in text
        assert "cannot inline" in text and "GradientTape" in text
    numeric = (np.asarray(fn(np.array(0.4 + 1e-6))) - np.asarray(fn(np.array(0.4 - 1e-6)))) / 2e-6
    assert np.isclose(tf.grad(fn)(0.4), numeric, rtol=1e-6)   # the runtime modes use the rules
