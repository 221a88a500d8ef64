"""Per-op complex checks generated from the registry: every op declared `complex=True`.

Each op gets complex inputs (`dualtape.testing.complex_inputs_for`: elementwise ops from their
domain, with some inputs left real; other ops from their samples), and its rules are checked
in the rules' convention (JAX's, docs/numerics.md): the JVP against central differences
along real directions and along imaginary ones, separately (a conjugation error flips the
sign of one of the two); the VJP against the JVP by the dot-product test with the pairing
Re(sum(c * t)); the tape (TF's convention: conj(VJP(conj(v)))), dual numbers and the
functional vjp against the rules; second order (forward over reverse) against differences
of the VJP rules. Ops without complex rules must refuse complex values in every mode.
"""

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dualtape
from dualtape.core.apply_rules import vjp_parts
from dualtape import dnp
from dualtape.functional import jvp as functional_jvp
from dualtape.functional import vjp as functional_vjp
from dualtape.registry import REGISTRY
from dualtape.testing import (adjoint_rtol, assert_adjoint, assert_close, central_difference,
                              complex_inputs_for, differentiable_argnums, jvp_of, tolerances, vjp_of)

COMPLEX_OPS = [op for op in REGISTRY.values() if op.has_rules and op.complex]


def _name(op):
    return op.name


def _normal(rng, shape, dtype):
    """Standard normal values of `dtype`: complex ones get a normal imaginary part too."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return np.asarray(rng.standard_normal(shape) + 1j * rng.standard_normal(shape), dtype=dtype)
    return np.asarray(rng.standard_normal(shape), dtype=dtype)


def _draw_case(data, op):
    args, static = data.draw(complex_inputs_for(op), label="args, static")
    argnums = differentiable_argnums(op, args)
    assert argnums, f"[{op.name}] complex inputs without a differentiable input: fix its samples."
    ans = np.asarray(op.impl(*args, **static))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed of u, v"))
    u = [_normal(rng, np.shape(a), a.dtype) if i in argnums else None for i, a in enumerate(args)]
    v = _normal(rng, ans.shape, ans.dtype)
    return args, static, argnums, ans, u, v


def _part(u, which):
    """The real-direction (which="real") or imaginary-direction ("imag") part of tangents u:
    a complex input moves along Re(u) or along i Im(u); a real input along u, or not at all."""
    out = []
    for t in u:
        if t is None or t.dtype.kind != "c":
            out.append(t if which == "real" or t is None else np.zeros_like(t))
        else:
            out.append(np.asarray(t.real if which == "real" else 1j * t.imag, dtype=t.dtype))
    return out


# -- outputs with a phase gauge: singular vectors and eigenvectors of Hermitian matrices ----------
# Each column q_j (each row of Vh) is defined up to a phase e^{it}: LAPACK picks one, and its
# finite differences follow that choice, while the rules follow JAX's (docs/numerics.md). These
# ops are checked through a gauge-invariant function of their output, Q diag(r) Q^H (r_j = j + 1,
# Q the vectors as columns), and their gauge as a condition on the JVP: Im(q_j^H dq_j) = 0, but
# for SvdU, where JAX puts Im(u_j^H da v_j) / s_j.
GAUGE_OPS = {"SvdU": "columns", "SvdVh": "rows", "SelfAdjointEigVectors": "columns"}


def _columns(op, q):
    return q if GAUGE_OPS[op.name] == "columns" else dnp.conj(dnp.swapaxes(q, -1, -2))


def _weights(q):
    return np.arange(1.0, np.shape(q)[-1] + 1)


def _invariant(op, q):
    """Q diag(r) Q^H: the same for every choice of the vectors' phases."""
    cols = _columns(op, q)
    return dnp.matmul(cols * _weights(cols), dnp.conj(dnp.swapaxes(cols, -1, -2)))


def _invariant_tangent(op, q, dq):
    cols, dcols = np.asarray(_columns(op, q)), np.asarray(_columns(op, dq))
    term = dcols * _weights(cols) @ np.conj(np.swapaxes(cols, -1, -2))
    return term + np.conj(np.swapaxes(term, -1, -2))


def _invariant_cotangent(op, q, c):
    """The cotangent of q (the rules' convention) of the loss Re(sum(c * Q diag(r) Q^H))."""
    cols = _columns(op, q)
    w = dnp.matmul(c + np.conj(np.swapaxes(c, -1, -2)), dnp.conj(cols)) * _weights(cols)
    return w if GAUGE_OPS[op.name] == "columns" else dnp.conj(dnp.swapaxes(w, -1, -2))


def _gauge_condition(op, a, da, q, dq):
    """Im(q_j^H dq_j) per column, and what JAX's gauge makes it: 0, or Im(u_j^H da v_j) / s_j."""
    cols, dcols = np.asarray(_columns(op, q)), np.asarray(_columns(op, dq))
    phase = np.imag(np.sum(np.conj(cols) * dcols, axis=-2))
    if op.name != "SvdU":
        return phase, np.zeros_like(phase)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return phase, np.imag(np.sum(np.conj(u) * (da @ np.conj(np.swapaxes(vh, -1, -2))), axis=-2)) / s


@pytest.mark.parametrize("op", [op for op in COMPLEX_OPS if op.name in GAUGE_OPS], ids=_name)
@given(data=st.data())
def test_complex_vectors_follow_jaxs_gauge(op, data):
    """The part of dQ that no finite difference sees: the phase each column turns by."""
    args, static, argnums, ans, u, v = _draw_case(data, op)
    if ans.dtype.kind != "c":
        return
    for which in ("real", "imag"):
        direction = _part(u, which)
        phase, expected = _gauge_condition(op, args[0], direction[0], ans, jvp_of(op, args, static, direction))
        assert_close(phase, expected, 1e-9, 1e-9, what=f"[{op.name}] Im(q_j^H dq_j) along {which} directions")


@pytest.mark.parametrize("op", COMPLEX_OPS, ids=_name)
@given(data=st.data())
def test_complex_jvp_matches_differences_along_real_and_imaginary_directions(op, data):
    args, static, argnums, ans, u, v = _draw_case(data, op)
    eps, rtol, atol = tolerances(np.float64)
    impl = functools.partial(op.impl, **static)
    for which in ("real", "imag"):
        direction = _part(u, which)
        tangent = jvp_of(op, args, static, direction)
        if op.name in GAUGE_OPS:
            numeric = central_difference(lambda *a: np.asarray(_invariant(op, impl(*a))), args, direction, eps)
            assert_close(_invariant_tangent(op, ans, tangent), numeric, rtol, atol,
                         what=f"[{op.name}] complex JVP rules, through Q diag(r) Q^H, vs central differences "
                              f"along {which} directions")
            continue
        numeric = central_difference(impl, args, direction, eps)
        assert_close(tangent, numeric, rtol, atol,
                     what=f"[{op.name}] complex JVP rules vs central differences along {which} directions")


@pytest.mark.parametrize("op", COMPLEX_OPS, ids=_name)
@given(data=st.data())
def test_complex_vjp_is_adjoint_of_jvp(op, data):
    """Re<u, VJP(v)> == Re<JVP(u), v>, without conjugation (the rules' convention)."""
    args, static, argnums, ans, u, v = _draw_case(data, op)
    vjps = [np.zeros(np.shape(args[i]), args[i].dtype) if p is None else np.asarray(p)
            for i, p in zip(argnums, vjp_of(op, args, static, v, argnums))]
    for i, part in zip(argnums, vjps):
        assert part.dtype == args[i].dtype, (f"[{op.name}] VJP of input {i} has dtype {part.dtype} "
                                             f"for an input of dtype {args[i].dtype}")
        assert part.shape == np.shape(args[i])
    tangent = np.asarray(jvp_of(op, args, static, u))
    assert tangent.dtype == ans.dtype and tangent.shape == ans.shape, (
        f"[{op.name}] JVP is {tangent.dtype}{tangent.shape}, ans {ans.dtype}{ans.shape}")
    assert_adjoint([u[i] for i in argnums], vjps, [tangent], [v], adjoint_rtol(np.float64),
                   what=f"[{op.name}] complex VJP rules vs JVP rules")


@pytest.mark.parametrize("op", COMPLEX_OPS, ids=_name)
@settings(max_examples=max(2, settings().max_examples // 2))
@given(data=st.data())
def test_complex_modes_agree_with_rules(op, data):
    """The tape gives TF's conj(VJP(conj(v))); functional vjp and jvp give the rules' values."""
    args, static, argnums, ans, u, v = _draw_case(data, op)
    parts = vjp_parts(op, v, ans, args, static, argnums)
    tensors = [dualtape.constant(a) if isinstance(a, np.ndarray) else a for a in args]
    sources = [tensors[i] for i in argnums]
    with dualtape.GradientTape() as tape:
        tape.watch(sources)
        y = op(*tensors, **static)
    grads = tape.gradient(y, sources, output_gradients=np.conj(v))
    tf_parts = vjp_parts(op, v, ans, args, static, argnums)
    for i, g, part in zip(argnums, grads, tf_parts):
        assert_close(np.asarray(g), np.conj(np.asarray(part)), 1e-12, 1e-14,
                     what=f"[{op.name}] tape gradient (TF's convention) of input {i} vs conj of the rules'")

    def restricted(*xs):
        full = list(args)
        for i, x in zip(argnums, xs):
            full[i] = x
        return op(*full, **static)

    _, pullback = functional_vjp(restricted, *[args[i] for i in argnums])
    for i, got, part in zip(argnums, pullback(v), parts):
        assert_close(np.asarray(got), np.asarray(part), 1e-12, 1e-14,
                     what=f"[{op.name}] functional vjp of input {i} vs the rules")
    _, tangent = functional_jvp(restricted, tuple(args[i] for i in argnums), tuple(u[i] for i in argnums))
    assert_close(np.asarray(tangent), np.asarray(jvp_of(op, args, static, u)), 1e-12, 1e-14,
                 what=f"[{op.name}] dual numbers vs the JVP rules")


@pytest.mark.parametrize("op", COMPLEX_OPS, ids=_name)
@settings(max_examples=max(2, settings().max_examples // 5))
@given(data=st.data())
def test_complex_second_order_matches_differenced_vjp(op, data):
    """Forward over reverse: jvp of x -> VJP_v(x) along real and imaginary directions."""
    args, static, argnums, ans, u, v = _draw_case(data, op)
    gauged = op.name in GAUGE_OPS
    if gauged:  # the cotangent of a gauge-invariant loss, which turns with the vectors
        rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed of the loss"))
        c = _normal(rng, np.shape(_invariant(op, ans)), ans.dtype)

    def first_order(*xs):
        full = list(args)
        for i, x in zip(argnums, xs):
            full[i] = x
        out = op(*full, **static)
        parts = vjp_parts(op, _invariant_cotangent(op, out, c) if gauged else v, out, full, static, argnums)
        return [dualtape.dnp.zeros_like(full[i]) if p is None else p for i, p in zip(argnums, parts)]

    eps, rtol, atol = tolerances(np.float64)
    primals = tuple(args[i] for i in argnums)
    for which in ("real", "imag"):
        direction = [d for i, d in enumerate(_part(u, which)) if i in argnums]
        _, tangents = functional_jvp(lambda *xs: tuple(first_order(*xs)), primals, tuple(direction))
        numeric = central_difference(lambda *xs: [np.asarray(p) for p in first_order(*xs)],
                                     list(primals), direction, eps)
        for i, t, n in zip(argnums, tangents, numeric):
            assert_close(np.asarray(t), n, rtol, atol,
                         what=f"[{op.name}] second order of input {i} along {which} directions: "
                              "forward over reverse vs central differences of the VJP rules")


def test_complex_ops_are_sampled():
    """Every op declaring complex rules can be drawn complex (so its rules are checked)."""
    assert len(COMPLEX_OPS) >= 30
    for op in COMPLEX_OPS:
        complex_inputs_for(op)


# -- ops without complex rules refuse complex values, in every mode ------------------------------

NON_COMPLEX_OPS = [op for op in REGISTRY.values() if not op.complex and (op.elementwise or op.samples)
                   and op.name not in ("AdjustContrastv2",)]


def _complexified(op, data):
    """The op's real sample with its first float array made complex, or None when NumPy's
    implementation refuses complex values anyway (no derivative can be wrong then)."""
    from dualtape.testing import inputs_for
    args, static = data.draw(inputs_for(op), label="args, static")
    index = next((i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"), None)
    if index is None:
        return None
    args = list(args)
    args[index] = np.asarray(args[index] + 0.5j, dtype=np.complex128)
    try:
        with np.errstate(all="ignore"):
            op.impl(*args, **static)
    except (TypeError, ValueError, np.linalg.LinAlgError):
        return None
    return args, static, index


@pytest.mark.parametrize("op", NON_COMPLEX_OPS, ids=_name)
@settings(max_examples=2)
@given(data=st.data())
def test_ops_without_complex_rules_refuse_complex_values(op, data):
    """First promise: the right derivative or a clear error, never a real rule's number."""
    case = _complexified(op, data)
    if case is None:
        return
    args, static, index = case
    tensors = [dualtape.constant(a) if isinstance(a, np.ndarray) else a for a in args]
    with pytest.raises(TypeError, match=rf"^\[{op.name}\] .* no complex derivative rules"):
        with dualtape.GradientTape() as tape, np.errstate(all="ignore"):
            tape.watch(tensors[index])
            op(*tensors, **static)

    def f(z):
        full = list(args)
        full[index] = z
        return op(*full, **static)

    with pytest.raises(TypeError, match=rf"^\[{op.name}\] .* no complex derivative rules"):
        with np.errstate(all="ignore"):
            functional_jvp(f, (args[index],), (np.ones_like(args[index]),))


# -- check_grads on complex arguments --------------------------------------------------------------

Z = np.array([1.0 + 0.5j, -0.3 + 1.2j])


@pytest.mark.parametrize("f, args", [
    (lambda z: dualtape.dnp.abs(dualtape.dnp.sin(z) * z), [Z]),
    (lambda z: z * z + dualtape.dnp.exp(z), [Z]),
    (lambda x, z: dualtape.dnp.real(dualtape.dnp.multiply(x, z))
     + dualtape.dnp.imag(dualtape.dnp.multiply(dualtape.dnp.conj(z) * z, x)), [np.array([0.5, 2.0]), Z]),
], ids=["abs_sin", "holomorphic", "mixed_real_complex"])
def test_check_grads_differentiates_complex_arguments(f, args):
    """Every real and imaginary coordinate, both modes, second order (derivative functions)."""
    from dualtape.testing import check_grads
    check_grads(f, args, order=2)


@pytest.fixture
def conjugated_square():
    """x * x with a VJP written in TF's convention (2 conj(x) g) instead of the rules' (2 x g)."""
    from dualtape.registry import defop

    def vjp(g, ans, x):
        return g * dnp.conj(x) * 2

    def jvp(dx, ans, x):
        return dx * x * 2

    op = defop("DualtapeTestConjugatedSquare", lambda x: x * x, vjp=vjp, jvp=jvp, elementwise=True, complex=True)
    yield op
    REGISTRY.pop(op.name, None)


def test_a_conjugated_rule_cannot_hide(conjugated_square):
    """The mistake the complex convention invites: right on reals, wrong on complex values."""
    from dualtape.testing import check_grads
    check_grads(conjugated_square, [np.array([0.5, -1.5])])  # real values: no difference
    with pytest.raises(AssertionError, match="reverse-mode gradient"):
        check_grads(conjugated_square, [Z])
    args = (Z,)
    u, v = [np.array([0.3 - 1.0j, 1.0 + 0.2j])], np.array([1.0 + 1.0j, -0.5j])
    vjps = vjp_of(conjugated_square, args, {}, v, [0])
    with pytest.raises(AssertionError, match="dot-product"):
        assert_adjoint(u, vjps, [jvp_of(conjugated_square, args, {}, u)], [v], adjoint_rtol(np.float64),
                       what="dot-product test")


@pytest.mark.parametrize("reduce", [dnp.max, dnp.min], ids=["max", "min"])
def test_max_and_min_of_complex_values_refuse_naming_the_op(reduce):
    """NumPy orders complex values lexicographically, which no derivative follows (issue 22)."""
    name = "Max" if reduce is dnp.max else "Min"
    with pytest.raises(TypeError, match=rf"^\[{name}\] .* no complex derivative rules"):
        dualtape.grad(lambda z: dnp.real(reduce(z)))(Z)
    with pytest.raises(TypeError, match=rf"^\[{name}\] .* no complex derivative rules"):
        functional_jvp(reduce, (Z,), (np.ones_like(Z),))
