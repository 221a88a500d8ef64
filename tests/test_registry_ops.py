"""Per-op properties generated from the registry: every op with rules is checked here.

A new `defop` is picked up automatically: elementwise ops get inputs from their rule
signature and `domain`, every other op from its `samples` (see dualtape.testing).
"""

import functools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dualtape
from dualtape.core.apply_rules import vjp_parts
from dualtape.registry import GRADIENT_OVERRIDES, NOT_DIFFERENTIABLE, REGISTRY, defop
from dualtape.testing import (adjoint_rtol, assert_adjoint, assert_close, central_difference,
                              differentiable_argnums, inputs_for, jvp_of, tolerances, vjp_of)

DIFF_OPS = [op for op in REGISTRY.values() if op.has_rules]
# No rules (LookupError) or NOT_DIFFERENTIABLE (None); RegisterGradient overrides excluded.
NON_DIFF_OPS = [op for op in REGISTRY.values()
                if not op.has_rules and op.name not in GRADIENT_OVERRIDES]


def _name(op):
    return op.name


def _draw_case(data, op):
    """(args, static, argnums, ans, u, v) for one drawn float64 example of `op`.

    Tangents u (None for inputs without a gradient) and the cotangent v come from one
    drawn seed: fewer hypothesis draws keep the registry-wide run fast.
    """
    args, static = data.draw(inputs_for(op), label="args, static")
    argnums = differentiable_argnums(op, args)
    assert argnums, (f"[{op.name}] has rules but the drawn inputs have no floating-point "
                     f"input with a VJP rule: {[np.asarray(a).dtype for a in args]}. Fix its samples.")
    ans = op.impl(*args, **static)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed of u, v"))
    u, v = _directions(rng, args, argnums, ans)
    return args, static, argnums, ans, u, v


def _directions(rng, args, argnums, ans):
    u = [rng.standard_normal(np.shape(a)).astype(a.dtype) if i in argnums else None
         for i, a in enumerate(args)]
    ans = np.asarray(ans)
    return u, rng.standard_normal(ans.shape).astype(ans.dtype)


def _cast(args, dtype):
    return tuple(a.astype(dtype) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
                 for a in args)


def _zeros_for_none(parts, args, argnums):
    return [np.zeros(np.shape(args[i]), dtype=args[i].dtype) if p is None else np.asarray(p)
            for i, p in zip(argnums, parts)]


def _tensors(args):
    return [dualtape.constant(a) if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.parametrize("op", DIFF_OPS, ids=_name)
@given(data=st.data())
def test_jvp_matches_central_difference(op, data):
    args, static, argnums, ans, u, v = _draw_case(data, op)
    eps, rtol, atol = tolerances(np.float64)
    numeric = central_difference(functools.partial(op.impl, **static), args, u, eps)
    assert_close(jvp_of(op, args, static, u), numeric, rtol, atol,
                 what=f"[{op.name}] JVP rules vs central differences of its impl")


@pytest.mark.parametrize("op", DIFF_OPS, ids=_name)
@given(data=st.data())
def test_vjp_is_adjoint_of_jvp(op, data):
    """<u, VJP(v)> == <JVP(u), v>: exact up to rounding, so the tolerance is tight."""
    args, static, argnums, ans, u, v = _draw_case(data, op)
    vjps = _zeros_for_none(vjp_of(op, args, static, v, argnums), args, argnums)
    assert_adjoint([u[i] for i in argnums], vjps, [jvp_of(op, args, static, u)], [v],
                   adjoint_rtol(np.float64), what=f"[{op.name}] VJP rules vs JVP rules")


@pytest.mark.parametrize("op", DIFF_OPS, ids=_name)
@given(data=st.data())
def test_shapes_and_dtypes(op, data):
    """VJP results match their inputs, the JVP result matches ans; float32 stays float32."""
    args64, static, argnums, _, _, _ = _draw_case(data, op)
    for dtype in (np.float64, np.float32):
        args = _cast(args64, dtype)
        ans = np.asarray(op.impl(*args, **static))
        expected = np.dtype(static["dtype"]) if static.get("dtype") is not None else np.dtype(dtype)
        if np.iscomplexobj(op.impl(*args64, **static)):  # a real input's spectrum (np.fft.rfft): complex
            expected = np.result_type(expected, np.complex64)
        assert ans.dtype == expected, f"[{op.name}] impl turns {np.dtype(dtype)} inputs into {ans.dtype}"
        u, v = _directions(np.random.default_rng(0), args, argnums, ans)
        for i, part in zip(argnums, vjp_of(op, args, static, v, argnums)):
            assert part is not None, f"[{op.name}] VJP of input {i} is None though it has a rule"
            assert np.shape(part) == np.shape(args[i]), (f"[{op.name}] VJP of input {i} has shape "
                                                         f"{np.shape(part)}, the input {np.shape(args[i])}")
            assert np.asarray(part).dtype == args[i].dtype, (
                f"[{op.name}] VJP of input {i} has dtype {np.asarray(part).dtype} for an input of "
                f"dtype {args[i].dtype}")
        tangent = jvp_of(op, args, static, u)
        assert np.shape(tangent) == ans.shape, (
            f"[{op.name}] JVP has shape {np.shape(tangent)}, ans {ans.shape}")
        assert np.asarray(tangent).dtype == ans.dtype, (
            f"[{op.name}] JVP has dtype {np.asarray(tangent).dtype}, ans {ans.dtype}")


@pytest.mark.parametrize("op", DIFF_OPS, ids=_name)
@given(data=st.data())
def test_tape_agrees_with_rules(op, data):
    """GradientTape over the primitive called on tensors gives exactly what vjp_parts gives."""
    args, static, argnums, ans, u, v = _draw_case(data, op)
    tensors = _tensors(args)
    sources = [tensors[i] for i in argnums]
    with dualtape.GradientTape() as tape:
        tape.watch(sources)
        y = op(*tensors, **static)
    grads = tape.gradient(y, sources, output_gradients=v)
    assert_close(np.asarray(y), ans, 0.0, 0.0, what=f"[{op.name}] value on tensors vs impl")
    for i, g, part in zip(argnums, grads, vjp_parts(op, v, ans, args, static, argnums)):
        assert (g is None) == (part is None), f"[{op.name}] tape gives {g!r}, rules {part!r}"
        if part is not None:
            assert_close(np.asarray(g), part, 1e-12, 1e-14,
                         what=f"[{op.name}] tape gradient of input {i} vs vjp_parts")


@pytest.mark.parametrize("op", DIFF_OPS, ids=_name)
@settings(max_examples=max(2, settings().max_examples // 5))
@given(data=st.data())
def test_second_order_matches_differenced_vjp(op, data):
    """Nested tapes: d/dt VJP_v(x + t u) == the outer tape's gradient of VJP_v with seed u."""
    args, static, argnums, ans, u, v = _draw_case(data, op)
    tensors = _tensors(args)
    sources = [tensors[i] for i in argnums]
    zero = dualtape.UnconnectedGradients.ZERO
    with dualtape.GradientTape() as outer:
        outer.watch(sources)
        with dualtape.GradientTape() as inner:
            inner.watch(sources)
            y = op(*tensors, **static)
        grads = inner.gradient(y, sources, output_gradients=v, unconnected_gradients=zero)
    hvp = outer.gradient(list(grads), sources, output_gradients=[u[i] for i in argnums],
                         unconnected_gradients=zero)

    def first_order(*xs):
        parts = vjp_parts(op, v, op.impl(*xs, **static), xs, static, argnums)
        return _zeros_for_none(parts, xs, argnums)

    eps, rtol, atol = tolerances(np.float64)
    numeric = central_difference(first_order, args, u, eps)
    for i, h, n in zip(argnums, hvp, numeric):
        assert_close(np.asarray(h), n, rtol, atol,
                     what=f"[{op.name}] second order of input {i}: nested tapes vs central "
                          "differences of the VJP rules")


def test_every_differentiable_op_can_be_sampled():
    """A new op with rules cannot escape these tests: it is elementwise or has samples."""
    missing = [op.name for op in DIFF_OPS if not (op.elementwise or op.samples)]
    assert not missing, (f"ops with rules but neither elementwise=True nor samples: {missing}. "
                         "Give each samples=(fn(rng) -> (args, static), ...) in its defop.")
    for op in DIFF_OPS:
        inputs_for(op)  # raises for unknown domain keywords or names, unknown arity


# -- ops without gradients: LookupError (no rules) or None (NOT_DIFFERENTIABLE) ------------------

def _check_no_gradient(op, args, static):
    tensors = _tensors(args)
    sources = [t for t in tensors if isinstance(t, dualtape.Tensor) and t.dtype.is_floating]
    with dualtape.GradientTape() as tape, np.errstate(all="ignore"):  # FloorDiv by 0 is fine
        tape.watch(sources)
        y = op(*tensors, **static)
    if op.vjp is NOT_DIFFERENTIABLE:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # bool / int outputs warn, as in TF
            grads = tape.gradient(y, sources)
        assert all(g is None for g in grads), f"[{op.name}] is NOT_DIFFERENTIABLE but gave {grads}"
    else:
        with pytest.raises(LookupError) as info:
            tape.gradient(y, sources)
        assert str(info.value) == f"gradient registry has no entry for: {op.name}"


@pytest.mark.parametrize("op", NON_DIFF_OPS, ids=_name)
@settings(max_examples=3)
@given(data=st.data())
def test_ops_without_rules_through_the_tape(op, data):
    if not (op.elementwise or op.samples):
        # No way to build inputs: check the registry state through the rule applier instead.
        if op.vjp is NOT_DIFFERENTIABLE:
            assert vjp_parts(op, np.ones(()), np.ones(()), (np.ones(()),), {}, [0]) == [None]
        else:
            with pytest.raises(LookupError, match=f"^gradient registry has no entry for: {op.name}$"):
                vjp_parts(op, np.ones(()), np.ones(()), (np.ones(()),), {}, [0])
        return
    args, static = data.draw(inputs_for(op), label="args, static")
    _check_no_gradient(op, args, static)


@pytest.fixture
def no_rules_op():
    op = defop("DualtapeTestNoRules", np.sin, elementwise=True)
    yield op
    REGISTRY.pop(op.name, None)


def test_op_without_rules_raises_lookup_error_from_gradient(no_rules_op):
    x = dualtape.constant(np.array([0.5, 1.0]))
    with dualtape.GradientTape() as tape:
        tape.watch(x)
        y = no_rules_op(x)  # recording is fine: TF raises only inside gradient()
    with pytest.raises(LookupError) as info:
        tape.gradient(y, x)
    assert str(info.value) == "gradient registry has no entry for: DualtapeTestNoRules"


def test_not_differentiable_gives_none():
    x = dualtape.constant(np.array([0.5, -1.5]))
    with dualtape.GradientTape() as tape:
        tape.watch(x)
        y = dualtape.dnp.stop_gradient(x) + dualtape.dnp.floor(x)
    assert tape.gradient(y, x) is None
