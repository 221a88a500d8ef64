"""Structure-aware derivatives (issue 23): detected patterns cover every nonzero, colorings are
small for banded, block-diagonal and arrowhead structure, and sparse results equal dense ones.
"""

import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import dualtape
from dualtape import dnp
from dualtape.core.errors import RefusalError
from dualtape.core.registry import REGISTRY, defop
from dualtape.sparsity.coloring import column_coloring, hessian_compression, star_coloring
from dualtape.sparsity.detect import detect
from dualtape.testing import programs

# -- random compositions over one vector ----------------------------------------------------------

UNARY = [dnp.sin, dnp.tanh, dnp.exp, lambda v: v ** 2, lambda v: v * 3.0, dnp.negative,
         lambda v: dnp.cumsum(v), lambda v: v[::-1], lambda v: dnp.roll(v, 1),
         lambda v: dnp.concatenate([v[1:], v[:1]]), lambda v: dnp.where(v > 0, v, 2.0 * v),
         lambda v: dnp.reshape(dnp.transpose(dnp.reshape(v, (2, -1))), (-1,)),
         lambda v: dnp.softmax(dnp.reshape(v, (2, -1)), axis=1).reshape(-1) if hasattr(dnp, "softmax") else v,
         lambda v: dnp.pad(v[1:], (0, 1)), lambda v: dnp.stack([v[::2], v[1::2]], axis=1).reshape(-1),
         lambda v: dnp.sort(v), lambda v: dnp.abs(v) + dnp.maximum(v, 0.1)]
BINARY = [lambda a, b: a * b, lambda a, b: a + b, lambda a, b: a / (1.0 + b * b), lambda a, b: a - b[::-1],
          lambda a, b: dnp.concatenate([a[:3], b[3:]]), lambda a, b: dnp.matmul(WEIGHTS, a) * b[0],
          lambda a, b: dnp.einsum("ij,j->i", WEIGHTS, a) + b, lambda a, b: dnp.diff(dnp.concatenate([a, b[:1]]))]
N = 6
WEIGHTS = np.triu(np.ones((N, N)))  # a constant: treated as dense (its zeros are not trusted)


def random_program(seed):
    rng = np.random.default_rng(seed)
    steps = [(int(rng.integers(2)), int(rng.integers(len(UNARY))), int(rng.integers(len(BINARY))),
              int(rng.integers(1, 10))) for _ in range(int(rng.integers(1, 6)))]

    def f(x):
        values = [x]
        for binary, u, b, pick in steps:
            a = values[pick % len(values)]
            c = values[(pick * 7 + 1) % len(values)]
            values.append(BINARY[b](a, c) if binary else UNARY[u](a))
        return values[-1]
    return f


def nonzeros_at_points(derivative, count=3, seed=0):
    rng = np.random.default_rng(seed)
    found = None
    for _ in range(count):
        value = np.asarray(derivative(rng.uniform(0.2, 1.5, N) * rng.choice([-1, 1], N)))
        value = value.reshape(value.shape[0] if value.ndim == 2 else -1, N)
        found = value != 0 if found is None else found | (value != 0)
    return found


@pytest.mark.parametrize("seed", range(40))
def test_detected_jacobian_covers_every_nonzero(seed):
    f = random_program(seed)
    _, pattern, _ = detect(f, (np.linspace(0.3, 1.2, N),), 0, {}, "jacfwd", False)
    nonzero = nonzeros_at_points(dualtape.jacfwd(f))
    assert pattern.shape == nonzero.shape
    assert not np.any(nonzero & ~pattern), f"missed entries:\n{(nonzero & ~pattern).astype(int)}"


@pytest.mark.parametrize("seed", range(40))
def test_detected_hessian_covers_every_nonzero(seed):
    inner = random_program(seed)

    def f(x):
        return dnp.sum(dnp.sin(inner(x)) * inner(x[::-1] * 0.5))
    _, _, pattern = detect(f, (np.linspace(0.3, 1.2, N),), 0, {}, "hessian", True)
    nonzero = nonzeros_at_points(dualtape.hessian(f))
    assert not np.any(nonzero & ~pattern), f"missed entries:\n{(nonzero & ~pattern).astype(int)}"


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(programs(exclude={"closure"}))
def test_detected_patterns_cover_random_programs(program):
    """dualtape.testing's programs: a pattern is detected (or the program refused clearly, for
    a branch on a traced value) and covers the jacobian's nonzeros w.r.t. each array argument."""
    f = program.function()
    for argnum, x in enumerate(program.args):
        if np.ndim(x) == 0:
            continue
        try:
            shape, pattern, _ = detect(f, program.args, argnum, {}, "jacfwd", False)
        except RefusalError:
            continue  # f branches on or converts a traced value: refused, never guessed
        except ValueError as error:  # out[i] = traced: NumPy wraps float()'s refusal (the API gives it back)
            if not isinstance(error.__cause__ or error.__context__, RefusalError):
                raise
            with pytest.raises(RefusalError, match="in a write into a NumPy array"):
                dualtape.jacfwd(f, argnums=argnum, sparsity="auto")(*program.args)
            continue
        rng = np.random.default_rng(argnum)
        for _ in range(2):
            args = list(program.args)
            args[argnum] = np.asarray(x) + rng.uniform(-0.1, 0.1, np.shape(x))
            try:
                jac = np.asarray(dualtape.jacfwd(f, argnums=argnum)(*args))
            except Exception:  # noqa: BLE001  (a program the dense mode refuses too)
                break
            nonzero = jac.reshape(pattern.shape) != 0
            assert not np.any(nonzero & ~pattern), program.source
            if shape == () and np.asarray(x).dtype.kind == "f":  # a scalar f: its Hessian too
                _, _, interactions = detect(f, program.args, argnum, {}, "hessian", True)
                try:
                    hess = np.asarray(dualtape.hessian(f, argnums=argnum)(*args))
                except Exception:  # noqa: BLE001
                    break
                nonzero = hess.reshape(interactions.shape) != 0
                assert not np.any(nonzero & ~interactions), program.source


# -- exact agreement on structured problems ---------------------------------------------------------

def chained_rosenbrock(x):
    return dnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def block_diagonal(x):
    blocks = dnp.reshape(x, (-1, 4))
    return dnp.sum(dnp.sum(blocks, axis=1) ** 3) + dnp.sum(dnp.cos(x))


def arrowhead(x):
    return x[0] * dnp.sum(dnp.sin(x[1:])) + dnp.sum(x ** 4)


def dense(x):
    return dnp.log(1.0 + dnp.sum(x * x)) + dnp.sum(x)


def energy(x):  # 1-D finite-difference energy
    return dnp.sum((x[1:] - x[:-1]) ** 2) + dnp.sum(dnp.cos(x))


STRUCTURED = {"banded": (chained_rosenbrock, 3), "energy": (energy, 3), "block_diagonal": (block_diagonal, 4),
              "arrowhead": (arrowhead, 2), "dense": (dense, 24)}


@pytest.mark.parametrize("name", sorted(STRUCTURED))
def test_sparse_hessian_equals_dense(name):
    f, colors = STRUCTURED[name]
    x = np.random.default_rng(3).uniform(-1.0, 1.0, 24)
    dense_hessian = dualtape.hessian(f)(x)
    sparse_hessian = dualtape.hessian(f, sparsity="auto")(x)
    np.testing.assert_array_equal(sparse_hessian, dense_hessian)
    csr = dualtape.hessian(f, sparsity="auto", sparse_output=True)(x)
    np.testing.assert_array_equal(csr.toarray(), dense_hessian)
    _, _, pattern = detect(f, (x,), 0, {}, "hessian", True)
    assert hessian_compression(pattern).count == colors


@pytest.mark.parametrize("name", sorted(STRUCTURED))
@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
def test_sparse_jacobian_of_gradient_equals_dense(name, mode):
    f, _ = STRUCTURED[name]
    g = dualtape.grad(f)
    x = np.random.default_rng(4).uniform(-1.0, 1.0, 24)
    api = getattr(dualtape, mode)
    expected = api(g)(x)
    np.testing.assert_array_equal(api(g, sparsity="auto")(x), expected)
    np.testing.assert_array_equal(api(g, sparsity="auto", sparse_output=True)(x).toarray(), expected)
    np.testing.assert_array_equal(api(g, sparsity=expected != 0)(x), expected)


def test_rectangular_jacobians_and_matrix_inputs():
    def f(m):  # (3, 4) -> (3, 3): each row's differences
        return dnp.diff(m, axis=1) * dnp.sin(m[:, 1:])
    m = np.random.default_rng(5).standard_normal((3, 4))
    expected = dualtape.jacfwd(f)(m)
    for api in (dualtape.jacfwd, dualtape.jacrev):
        np.testing.assert_array_equal(api(f, sparsity="auto")(m), expected)
        assert api(f, sparsity="auto", sparse_output=True)(m).shape == (9, 12)


def test_hessian_of_matrix_input_and_has_aux():
    def f(m):
        return dnp.sum(dnp.exp(m[:, 0] * m[:, 1])), "aux"
    m = np.random.default_rng(6).standard_normal((5, 2))
    expected, _ = dualtape.hessian(f, has_aux=True)(m)
    got, aux = dualtape.hessian(f, has_aux=True, sparsity="auto")(m)
    np.testing.assert_array_equal(got, expected)
    assert got.shape == (5, 2, 5, 2) and aux == "aux"


def test_banded_hessian_needs_three_colors_whatever_n():
    for n in (10, 200, 2000):
        _, _, pattern = detect(chained_rosenbrock, (np.zeros(n),), 0, {}, "hessian", True)
        assert pattern.sum() == 3 * n - 2
        assert hessian_compression(pattern).count == 3


def test_colorings_are_valid():
    rng = np.random.default_rng(7)
    for _ in range(20):
        pattern = rng.random((12, 12)) < 0.2
        colors = column_coloring(pattern)
        for row in pattern:  # columns sharing a row differ
            assert len(set(colors[row])) == row.sum()
        sym = pattern | pattern.T | np.eye(12, dtype=bool)
        star = star_coloring(sym)
        graph = sym & ~np.eye(12, dtype=bool)
        assert not np.any(graph & (star[:, None] == star[None, :]))  # distance-1
        compression = hessian_compression(sym)  # verifies direct recovery, or falls back
        values = rng.standard_normal((12, 12))
        h = np.where(sym, values + values.T, 0.0)
        compressed = compression.seeds(np.float64) @ h  # H s_c, one row per color (H symmetric)
        np.testing.assert_allclose(compression.dense(compressed), h, rtol=0, atol=1e-12)


# -- fallbacks, refusals and errors ------------------------------------------------------------------

def _suffix_sum_vjp(g, ans, x):
    return dnp.cumsum(g)


def _suffix_sum_jvp(dx, ans, x):
    return dnp.cumsum(dx[::-1])[::-1]


def test_an_op_without_a_pattern_rule_is_dense():
    op = defop("SparsityTestOpaque", lambda x: np.cumsum(x[::-1])[::-1], vjp=_suffix_sum_vjp, jvp=_suffix_sum_jvp)
    try:
        def f(x):
            return op(x) * x
        x = np.linspace(0.1, 1.0, 5)
        _, pattern, _ = detect(f, (x,), 0, {}, "jacfwd", False)
        assert pattern.all()
        np.testing.assert_array_equal(dualtape.jacfwd(f, sparsity="auto")(x), dualtape.jacfwd(f)(x))
    finally:
        del REGISTRY["SparsityTestOpaque"]


def test_value_dependent_index_is_dense_or_refused():
    def f(x):
        return dnp.take(x, dnp.argmax(x)) * x

    x = np.array([0.1, 0.9, 0.3])
    _, pattern, _ = detect(f, (x,), 0, {}, "jacfwd", False)
    assert pattern.all()
    np.testing.assert_array_equal(dualtape.jacfwd(f, sparsity="auto")(np.array([0.5, 0.1, 0.2])),
                                  dualtape.jacfwd(f)(np.array([0.5, 0.1, 0.2])))


@pytest.mark.parametrize("escape", [lambda x: x if x[0] > 0 else -x, lambda x: x[dnp.argmax(x)] * x, lambda x: x * float(x[0]),
                                    lambda x: x * np.asarray(x), lambda x: x * x[0].item()])
def test_branches_and_conversions_are_refused(escape):
    with pytest.raises(RefusalError, match=r"\[hessian\] sparsity='auto'"):
        dualtape.hessian(lambda x: dnp.sum(escape(x)), sparsity="auto")(np.ones(3))


def test_bad_sparsity_arguments():
    f = dualtape.grad(energy)
    x = np.ones(4)
    with pytest.raises(ValueError, match="not understood"):
        dualtape.hessian(energy, sparsity="banded")(x)
    with pytest.raises(TypeError, match="boolean"):
        dualtape.jacfwd(f, sparsity=np.ones((4, 4)))(x)
    with pytest.raises(TypeError, match="list"):
        dualtape.jacrev(f, sparsity=[[True]])(x)
    with pytest.raises(ValueError, match="shape"):
        dualtape.hessian(energy, sparsity=np.ones((3, 3), dtype=bool))(x)
    with pytest.raises(ValueError, match="output rows"):
        dualtape.jacfwd(f, sparsity=np.ones((2, 4), dtype=bool))(x)
    with pytest.raises(ValueError, match="argnums"):
        dualtape.hessian(energy, argnums=(0,), sparsity="auto")(x)
    with pytest.raises(ValueError, match="needs sparsity"):
        dualtape.jacrev(f, sparse_output=True)(x)


def test_sparse_output_without_scipy_is_refused(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)
    with pytest.raises(ImportError, match="scipy"):
        dualtape.hessian(energy, sparsity="auto", sparse_output=True)(np.ones(4))


def test_given_scipy_pattern_and_detection_once_per_shape():
    from scipy import sparse
    calls = []

    def f(x):
        calls.append(type(x).__name__)
        return energy(x)
    n = 8
    x = np.linspace(0.0, 1.0, n)
    expected = dualtape.hessian(energy)(x)
    given = sparse.diags([np.ones(n - 1), np.ones(n), np.ones(n - 1)], [-1, 0, 1])
    np.testing.assert_array_equal(dualtape.hessian(energy, sparsity=given)(x), expected)
    h = dualtape.hessian(f, sparsity="auto")
    for point in (x, x + 1.0, x * 2.0):
        h(point)
    assert calls.count("Pattern") == 1 and len(calls) == 4
    h(np.zeros(n + 1))  # a new shape: detected again
    assert calls.count("Pattern") == 2


# -- inside other transforms -------------------------------------------------------------------------

def _scaled(p):
    return lambda x: dnp.sum(p * x[1:] * x[:-1] ** 2) + dnp.sum(dnp.sin(x))


@pytest.mark.parametrize("api", ["hessian", "jacfwd", "jacrev"])
def test_sparse_derivatives_nest_in_other_transforms(api):
    x = np.linspace(0.1, 1.0, 5)

    def total(p, sparsity):
        f = _scaled(p)
        derivative = dualtape.hessian(f, sparsity=sparsity) if api == "hessian" else \
            getattr(dualtape, api)(dualtape.grad(f), sparsity=sparsity)
        return dnp.sum(derivative(x))
    expected = dualtape.jvp(lambda p: total(p, None), (2.0,), (1.0,))
    got = dualtape.jvp(lambda p: total(p, "auto"), (2.0,), (1.0,))
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    np.testing.assert_allclose(dualtape.grad(lambda p: total(p, "auto"))(2.0),
                               dualtape.grad(lambda p: total(p, None))(2.0), rtol=1e-13)
    third = dualtape.grad(lambda v: dnp.sum(dualtape.hessian(_scaled(2.0), sparsity="auto")(v)))(x)
    np.testing.assert_allclose(third, dualtape.grad(lambda v: dnp.sum(dualtape.hessian(_scaled(2.0))(v)))(x),
                               rtol=1e-13)


def test_auto_detection_under_vmap_is_refused_clearly():
    xs = np.stack([np.linspace(0.1, 1.0, 5)] * 2)
    with pytest.raises(RefusalError, match=r"\[hessian\] sparsity= .*vmap"):
        dualtape.vmap(dualtape.hessian(_scaled(2.0), sparsity="auto"))(xs)
    pattern = dualtape.hessian(_scaled(2.0))(xs[0]) != 0
    np.testing.assert_array_equal(dualtape.vmap(dualtape.hessian(_scaled(2.0), sparsity=pattern))(xs),
                                  dualtape.vmap(dualtape.hessian(_scaled(2.0)))(xs))


def test_other_arguments_are_part_of_the_cache_key():
    def f(x, scale, options):
        y = x[1:] * x[:-1] if options["coupled"] else x * x
        return dnp.sum(dnp.sin(y) * scale)
    x = np.linspace(0.1, 1.0, 5)
    h = dualtape.hessian(f, sparsity="auto")
    for scale in (np.ones(4), np.ones(5)):
        coupled = scale.shape == (4,)
        expected = dualtape.hessian(f)(x, scale, {"coupled": coupled})
        np.testing.assert_array_equal(h(x, scale, {"coupled": coupled}), expected)
    np.testing.assert_array_equal(h(x, np.ones(5) * 2.0, {"coupled": False}),
                                  dualtape.hessian(f)(x, np.ones(5) * 2.0, {"coupled": False}))


@pytest.mark.parametrize("name", sorted(STRUCTURED))
def test_transforms_hessian_with_sparsity(name):
    """The source transformer's hvp code on the colors' directions agrees with the dense
    Hessian of the tape (different code: rounding may differ in the last bits)."""
    import dualtape.transforms as dt
    f, colors = STRUCTURED[name]
    x = np.random.default_rng(8).uniform(-1.0, 1.0, 24)
    expected = dualtape.hessian(f)(x)
    np.testing.assert_allclose(dt.hessian(f, sparsity="auto")(x), expected, rtol=1e-13, atol=1e-13)
    csr = dt.hessian(f, sparsity=expected != 0, sparse_output=True)(x)
    np.testing.assert_allclose(csr.toarray(), expected, rtol=1e-13, atol=1e-13)
    with pytest.raises(TypeError, match="positionally"):
        dt.hessian(f, sparsity="auto")(x=x)


def chained_rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


@pytest.mark.parametrize("name", sorted(STRUCTURED) + ["chained_rosenbrock"])
def test_transforms_hessian_compiled(name):
    """jit=True: the numba-compiled hvp code, one direction per color (or per basis vector).
    The structured cases call dnp.*, which numba does not compile: jit="fallback" runs them."""
    pytest.importorskip("numba")
    import warnings
    import dualtape.transforms as dt
    f, jit = (chained_rosenbrock, True) if name == "chained_rosenbrock" else (STRUCTURED[name][0], "fallback")
    x = np.random.default_rng(9).uniform(-1.0, 1.0, 12)
    expected = dualtape.hessian(f)(x)
    with warnings.catch_warnings(action="ignore", category=RuntimeWarning):
        sparse, dense = dt.hessian(f, sparsity="auto", jit=jit)(x), dt.hessian(f, jit=jit)(x)
    np.testing.assert_allclose(sparse, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dense, expected, rtol=1e-12, atol=1e-12)


# -- functions with custom derivatives: their code's pattern is not trusted --------------------------

@dualtape.custom_jvp
def straight_through_round(x):
    return dnp.round(x)


@straight_through_round.defjvp
def _straight_through_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return straight_through_round(x), t * 1.0


@dualtape.custom_gradient
def floor_with_gradient(x):
    def grad(g):
        return g * 3.0
    return dnp.floor(x), grad


@dualtape.custom_vjp
def floor_with_vjp(x):
    return dnp.floor(x)


floor_with_vjp.defvjp(lambda x: (dnp.floor(x), None), lambda residuals, g: (g * 5.0,))


@pytest.mark.parametrize("custom", [straight_through_round, floor_with_gradient, floor_with_vjp],
                         ids=["custom_jvp", "custom_gradient", "custom_vjp"])
def test_custom_derivatives_are_not_read_from_their_code(custom):
    """round / floor have a zero derivative, but the user's rules say otherwise: a pattern read
    from the code would drop the entries (a silent wrong number); it is dense over the arguments."""
    def f(x):
        return custom(x[::-1]) * 2.0 + x

    x = np.array([0.3, 1.7, 2.2, -0.4])
    modes = [dualtape.jacrev] if custom is floor_with_vjp else [dualtape.jacfwd, dualtape.jacrev]
    for api in modes:
        expected = api(f)(x)
        assert np.count_nonzero(expected) > 4  # the anti-diagonal comes from the custom rule
        np.testing.assert_array_equal(api(f, sparsity="auto")(x), expected)

    def scalar(x):
        return dnp.sum(custom(x) * x)
    if custom is floor_with_vjp:  # forward over reverse through a custom_vjp: refused, as in JAX
        for sparsity in (None, "auto"):
            with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
                dualtape.hessian(scalar, sparsity=sparsity)(x)
        return
    np.testing.assert_array_equal(dualtape.hessian(scalar, sparsity="auto")(x), dualtape.hessian(scalar)(x))


def _adds_into_a_numpy_array(x):
    y = np.zeros(np.shape(x))
    y += x  # np.add(y, x, out=(y,)): a NumPy array cannot hold x's derivative
    return y


@pytest.mark.parametrize("sparsity", [None, "auto"])
def test_a_traced_value_written_into_a_numpy_array_is_refused_alike(sparsity):
    """`y += x` into a NumPy array: sparsity="auto" refuses it with the dense modes' refusal
    (it raised a TypeError saying np.add had no differentiable version; found by the random
    programs of test_detected_patterns_cover_random_programs)."""
    with pytest.raises(RefusalError, match=r"\[np.add\] out= writes the result into a plain NumPy array"):
        dualtape.jacfwd(_adds_into_a_numpy_array, sparsity=sparsity)(np.ones(3))
