"""Every composition of the transforms, one, two and three deep (issue 10, section 2).

Each adapter turns a function h: R^2 -> R^(any shape) into what one transform computes
at x: `grad`, `vjp`, `jvp`, `linearize`, `jacfwd`, `jacrev`, `hessian`, `hvp`, a
`GradientTape` gradient and a `ForwardAccumulator` JVP. Compositions are the product of
the adapter table (itertools.product, not a hand-written list), and the inner function
of each level closes over the outer level's variable:

    stage((T2, T3))(x) = T2(lambda y: T3(lambda z: base(x, y, z), point(y)), point(x))

Tangents and cotangents depend on the point too, so inside an outer transform they are
traced (a vjp inside jvp gets a dual cotangent). The composition T1 o rest at X0 is
checked against T1 computed by finite differences of `stage(rest)` evaluated with plain
arrays: each level is checked against the level below, which the shorter products check.
"""

import itertools
import warnings

import numpy as np
import pytest

import dualtape as tf
from dualtape import dnp
from dualtape.testing import assert_close

X0 = np.array([0.3, -0.4])
U = np.array([1.0, -0.5])


def weights(shape):
    size = int(np.prod(shape))
    return np.linspace(0.5, 1.5, size).reshape(shape) if size > 1 else np.full(shape, 0.7)


def scalarize(out):
    """A nonlinear scalar of an output of any shape (what grad, hessian and hvp need)."""
    return dnp.sum(weights(tuple(dnp.shape(out))) * dnp.sin(out))


def direction(x):
    """A tangent that depends on the point: traced when x is."""
    return U * (1.0 + 0.5 * dnp.sin(dnp.sum(x)))


def cotangent(x, shape):
    return weights(shape) * (1.0 + 0.5 * dnp.cos(dnp.sum(x)))


def point(x):
    """Where the inner transform is evaluated: a fresh value, depending on the outer one."""
    return 0.8 * x + 0.1


def base(*variables):
    """R^2 -> R^2, mixing every enclosing level's variable into the innermost one's."""
    y = variables[-1]
    a = 1.0
    for i, v in enumerate(variables[:-1]):
        a = a + (0.5 - 0.2 * i) * v[::-1]
    return dnp.sin(a * y) + 0.5 * a * y * y


# -- the adapters: one transform each -----------------------------------------------------------

def grad_of(h, x):
    return tf.grad(lambda y: scalarize(h(y)))(x)


def vjp_of(h, x):
    out, pullback = tf.vjp(h, x)
    return pullback(cotangent(x, tuple(dnp.shape(out))))[0]


def jvp_of(h, x):
    return tf.jvp(h, (x,), (direction(x),))[1]


def linearize_of(h, x):
    _, f_jvp = tf.linearize(h, x)
    return f_jvp(direction(x))


def jacfwd_of(h, x):
    return tf.jacfwd(h)(x)


def jacrev_of(h, x):
    return tf.jacrev(h)(x)


def hessian_of(h, x):
    return tf.hessian(lambda y: scalarize(h(y)))(x)


def hvp_of(h, x):
    return tf.hvp(lambda y: scalarize(h(y)), (x,), (direction(x),))


ZERO = tf.UnconnectedGradients.ZERO  # TF gives None where nothing connects; ask for zeros


def tape_of(h, x):
    x = tf.convert_to_tensor(x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = scalarize(h(x))
    return tape.gradient(y, x, unconnected_gradients=ZERO)


def accumulator_of(h, x):
    x = tf.convert_to_tensor(x)
    with tf.autodiff.ForwardAccumulator(x, direction(x)) as acc:
        y = tf.convert_to_tensor(h(x))  # h may return an array or an outer level's dual
    return acc.jvp(y, unconnected_gradients=ZERO)


# -- the same quantities by central differences of plain evaluations -----------------------------
#
# Richardson-extrapolated central differences: D(e) = exact + c e^2 + O(e^4), so
# (4 D(e/2) - D(e)) / 3 = exact + O(e^4). First order with EPS1 = 1e-4: truncation
# ~ EPS1^4 |h^(5)| ~ 1e-16 |h^(5)|, rounding ~ 1e-16 |h| / EPS1 ~ 1e-12 |h|. Second order
# with EPS2 = 1e-3: truncation ~ EPS2^4 |h^(6)| ~ 1e-12 |h^(6)|, rounding ~ 1e-16 |h| / EPS2^2
# ~ 1e-10 |h|. Results reach ~3e4 (hessian o hessian o hessian), and the tolerances below
# (1e-6 first order, 1e-5 second, relative to max(1, |expected|)) hold with a measured
# margin of 6x or more over all 1110 compositions, while a wrong level (a dropped
# perturbation, a confused tag, a zero) is off by O(1).

EPS1, EPS2 = 1e-4, 1e-3
RTOL = {1: 1e-6, 2: 1e-5}


def _richardson(estimate, eps):
    return (4 * estimate(eps / 2) - estimate(eps)) / 3


def _derivative(h, x, t):
    return _richardson(lambda e: (h(x + e * t) - h(x - e * t)) / (2 * e), EPS1)


def _second(s, x, a, b):
    """d^2 s / (da db) from s at four points."""
    return _richardson(lambda e: (s(x + e * (a + b)) - s(x + e * (a - b)) - s(x - e * (a - b))
                                  + s(x - e * (a + b))) / (4 * e * e), EPS2)


def _scalar(h):
    return lambda z: float(np.asarray(scalarize(h(z))))


def numeric_jacobian(h, x):
    return np.stack([_derivative(h, x, e) for e in np.eye(x.size)], axis=-1)


def numeric_grad(h, x):
    return numeric_jacobian(_scalar(h), x)


def numeric_jvp(h, x):
    return _derivative(h, x, direction(x))


def numeric_vjp(h, x):
    jacobian = numeric_jacobian(h, x)
    c = cotangent(x, jacobian.shape[:-1])
    return np.tensordot(c, jacobian, axes=c.ndim)


def numeric_hessian(h, x):
    s, basis = _scalar(h), np.eye(x.size)
    return np.array([[_second(s, x, a, b) for b in basis] for a in basis])


def numeric_hvp(h, x):
    s = _scalar(h)
    return np.array([_second(s, x, a, direction(x)) for a in np.eye(x.size)])


# name: (adapter, the same by differences, order of the differences)
ADAPTERS = {
    "grad": (grad_of, numeric_grad, 1),
    "vjp": (vjp_of, numeric_vjp, 1),
    "jvp": (jvp_of, numeric_jvp, 1),
    "linearize": (linearize_of, numeric_jvp, 1),
    "jacfwd": (jacfwd_of, numeric_jacobian, 1),
    "jacrev": (jacrev_of, numeric_jacobian, 1),
    "hessian": (hessian_of, numeric_hessian, 2),
    "hvp": (hvp_of, numeric_hvp, 2),
    "tape": (tape_of, numeric_grad, 1),
    "accumulator": (accumulator_of, numeric_jvp, 1),
}


def stage(names, enclosing=()):
    """x -> names[0] applied at point(x) to the next stage, which closes over x."""
    if not names:
        return lambda x: base(*enclosing, x)
    adapter = ADAPTERS[names[0]][0]
    return lambda x: adapter(stage(names[1:], enclosing + (x,)), point(x))


def _plain(h):
    return lambda x: np.asarray(h(x), dtype=np.float64)


def check_composition(names):
    adapter, numeric, order = ADAPTERS[names[0]]
    got = np.asarray(adapter(stage(names[1:]), X0))
    expected = numeric(_plain(stage(names[1:])), X0)
    assert got.dtype == np.float64
    rtol = RTOL[order]
    assert_close(got, expected, rtol, rtol, what=" o ".join(names) + " vs differences")


def _product(depth):
    return list(itertools.product(ADAPTERS, repeat=depth))


@pytest.mark.parametrize("names", _product(1), ids="/".join)
def test_one_transform(names):
    check_composition(names)


@pytest.mark.parametrize("names", _product(2), ids="/".join)
def test_two_deep(names):
    check_composition(names)


@pytest.mark.parametrize("names", _product(3), ids="/".join)
def test_three_deep(names):
    check_composition(names)


# Degenerate innermost functions: one that ignores its own variable (every inner derivative
# is an unconnected zero), one linear in it (second derivatives vanish) and a constant.
EDGE_BASES = {
    "closure_only": lambda *variables: dnp.sin(_mix(variables)) * np.ones(2),
    "linear": lambda *variables: _mix(variables) * variables[-1],
    "constant": lambda *variables: np.array([0.1, 0.2]),
}


def _mix(variables):
    a = np.ones(2)
    for i, v in enumerate(variables[:-1]):
        a = a + (0.5 - 0.2 * i) * v[::-1]
    return a


@pytest.mark.parametrize("names", _product(2), ids="/".join)
@pytest.mark.parametrize("edge", EDGE_BASES)
def test_two_deep_degenerate_functions(names, edge, monkeypatch):
    monkeypatch.setitem(globals(), "base", EDGE_BASES[edge])
    check_composition(names)


def test_the_product_is_complete():
    assert len(ADAPTERS) == 10
    assert len(_product(2)) == 100 and len(_product(3)) == 1000


# -- other ways to call the same transforms -----------------------------------------------------
#
# Chunked forward mode, value_and_grad, the mode-picking `jacobian`, GradientTape.jacobian
# and a persistent tape's gradient taken inside its context: the product of these with
# every adapter two deep, and a deterministic sample (every 15th) of the three-deep
# compositions holding exactly one of them.

def tape_jacobian_of(h, x):
    x = tf.convert_to_tensor(x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = h(x)
    return tape.jacobian(y, x)


def persistent_tape_of(h, x):
    x = tf.convert_to_tensor(x)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = scalarize(h(x))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # TF's warning: taken inside on purpose
            return tape.gradient(y, x)


def value_and_grad_of(h, x):
    value, gradient = tf.value_and_grad(lambda y: scalarize(h(y)))(x)
    return dnp.concatenate([dnp.reshape(value, (1,)), gradient])


def numeric_value_and_grad(h, x):
    return np.concatenate([[_scalar(h)(x)], numeric_grad(h, x)])


VARIANTS = {
    "jacfwd_chunk1": (lambda h, x: tf.jacfwd(h, chunk_size=1)(x), numeric_jacobian, 1),
    "hessian_chunk1": (lambda h, x: tf.hessian(lambda y: scalarize(h(y)), chunk_size=1)(x),
                       numeric_hessian, 2),
    "value_and_grad": (value_and_grad_of, numeric_value_and_grad, 1),
    "jacobian": (lambda h, x: tf.jacobian(h)(x), numeric_jacobian, 1),
    "tape_jacobian": (tape_jacobian_of, numeric_jacobian, 1),
    "persistent_tape": (persistent_tape_of, numeric_grad, 1),
}


def _with_variants(depth):
    """The compositions holding at least one variant (two deep) or exactly one (three deep)."""
    names = list(ADAPTERS) + list(VARIANTS)
    counts = range(1, depth + 1) if depth == 2 else (1,)
    return [c for c in itertools.product(names, repeat=depth)
            if sum(n in VARIANTS for n in c) in counts]


@pytest.fixture
def with_variants(monkeypatch):
    for name, adapter in VARIANTS.items():
        monkeypatch.setitem(ADAPTERS, name, adapter)


@pytest.mark.parametrize("names", _with_variants(2), ids="/".join)
def test_variants_two_deep(names, with_variants):
    check_composition(names)


@pytest.mark.parametrize("names", _with_variants(3)[::15], ids="/".join)
def test_variants_three_deep_sample(names, with_variants):
    check_composition(names)


# -- regressions: the failures the product found, each at its mechanism --------------------------

f = lambda x: dnp.sin(x) * x  # noqa: E731
x1 = np.array([0.5, 1.0])
v1 = np.array([1.0, 2.0])


def test_jvp_of_vjp_with_a_traced_cotangent():
    # regression: #10, tape._seed turned a dual cotangent into an array (crash): autograd's
    # check_grads(order=2) runs exactly this, the forward derivative of the pullback
    pullback = lambda c: tf.vjp(f, x1)[1](c)[0]  # noqa: E731
    out, tangent = tf.jvp(pullback, (v1,), (v1,))
    df = np.cos(x1) * x1 + np.sin(x1)
    np.testing.assert_allclose(out, df * v1)
    np.testing.assert_allclose(tangent, df * v1)  # linear in the cotangent


def test_jacfwd_of_jacrev():
    # regression: #10, jacobians._as_tensor called np.asarray on a dual (a crash that
    # told the user to stop_gradient)
    d2f = 2 * np.cos(x1) - x1 * np.sin(x1)
    np.testing.assert_allclose(tf.jacfwd(tf.jacrev(f))(x1), np.diag(d2f)[:, :, None] * np.eye(2))


def test_grad_of_hvp_of_a_closure_over_the_outer_variable():
    # regression: #10, returned 0: dispatch.bind unwrapped the outer grad's tensor `a`
    # together with the hvp's own tensors, so the dual level saw `a` as a constant
    g = lambda a: tf.hvp(lambda y: dnp.sum(dnp.sin(y * a)), (x1,), (v1,))[0]  # noqa: E731
    # hvp[0] = -a^2 sin(a x0) v0, d/da = -(2 a sin(a x0) + a^2 x0 cos(a x0)) v0
    a = 0.7
    expected = -(2 * a * np.sin(a * x1[0]) + a * a * x1[0] * np.cos(a * x1[0])) * v1[0]
    np.testing.assert_allclose(tf.grad(g)(a), expected, rtol=1e-12)


def test_jvp_of_linspace_with_a_traced_endpoint():
    # regression: #10, linspace called np.asarray on its traced bounds
    out, tangent = tf.jvp(lambda e: np.linspace(0.0, e, 5), (2.0,), (1.0,))
    np.testing.assert_allclose(out, np.linspace(0.0, 2.0, 5))
    np.testing.assert_allclose(tangent, np.linspace(0.0, 1.0, 5))
    both = tf.grad(lambda e: dnp.sum(np.linspace(e, e * e, 3, endpoint=False)))(2.0)
    np.testing.assert_allclose(both, 2 + 2 * 2.0)  # fractions 0, 1/3, 2/3: sum = 2 e + e^2
    a = np.array([1.0, 2.0])
    np.testing.assert_allclose(tf.jacfwd(lambda e: np.linspace(e, 2 * e, 3, axis=1))(a),
                               np.stack([np.eye(2)] * 3, axis=1) * np.array([1.0, 1.5, 2.0])[None, :, None])


def test_gradient_tape_inside_jvp():
    # regression: #10, jvp read a tape's gradient (a tensor holding duals) as a constant,
    # and convert_to_tensor refused the dual
    def tape_grad(x):
        x = tf.convert_to_tensor(x)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = dnp.sum(x ** 3)
        return tape.gradient(y, x)
    _, tangent = tf.jvp(tape_grad, (x1,), (v1,))
    np.testing.assert_allclose(tangent, 6 * x1 * v1)


def test_accumulator_around_hvp():
    # regression: #10, the accumulator propagated tangents at the hvp's tape level too, and
    # the hvp's result was read as a constant
    x = tf.constant(x1)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(v1)) as acc:
        y = tf.hvp(lambda z: dnp.sum(z ** 3 * x), (x,), (v1,))  # H = diag(6 z x)
    np.testing.assert_allclose(np.asarray(y), 6 * x1 * x1 * v1)
    np.testing.assert_allclose(acc.jvp(y).numpy(), 12 * x1 * v1 * v1)


def test_grad_over_jvp_over_grad_of_a_closure():
    # regression: #10 (3 deep), a tape of an older level unwrapped under a newer dual level
    def inner(x):
        return tf.jvp(lambda y: tf.grad(lambda z: dnp.sum(x * y * z * z))(y), (x,), (v1,))[1]
    # grad_z = 2 x y z at z = y: 2 x y^2; d/dy along v: 4 x y v, at y = x: 4 x^2 v
    np.testing.assert_allclose(tf.grad(lambda x: dnp.sum(inner(x)))(x1), 8 * x1 * v1)
