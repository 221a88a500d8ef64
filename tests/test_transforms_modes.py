"""The four modes agree, and generated code runs on the runtime types.

Cross-mode property: for random functions (random expression trees written to a module
file, since the transformer reads source) and random inputs, the tape, the dual numbers,
source reverse and source forward give the same <v, J u>. Then mixing: dual numbers through
a generated gradient (forward over source reverse), a generated gradient recorded by a
GradientTape, and the source hvp / hessian / jacfwd against the runtime ones.
"""

import importlib.util
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dualtape
import dualtape.functional as F
import dualtape.transforms as dt

_counter = itertools.count()

UNARY = ["np.sin({})", "np.tanh({})", "np.exp(0.3 * {})", "({} * {})", "np.cos({})", "(-{})"]
BINARY = ["({} + {})", "({} * {})", "({} - {})", "({} / (2.0 + {} * {}))"]


def _expr(draw, depth):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(["x", "y", "x", "1.5", "w"]))
    if draw(st.booleans()):
        inner = _expr(draw, depth - 1)
        template = draw(st.sampled_from(UNARY))
        return template.format(*[inner] * template.count("{}"))
    a, b = _expr(draw, depth - 1), _expr(draw, depth - 1)
    template = draw(st.sampled_from(BINARY))
    return template.format(a, b, b) if template.count("{}") == 3 else template.format(a, b)


@st.composite
def programs(draw):
    """Source of `f(x, y, w)`: x, y vectors of 3 (differentiated), w an inactive vector."""
    lines = ["import numpy as np", "", "", "def f(x, y, w):"]
    names = ["x", "y"]
    for k in range(draw(st.integers(1, 3))):
        e = _expr(draw, 3)
        lines.append(f"    t{k} = {e} + 0.0 * x")
        names.append(f"t{k}")
        if draw(st.booleans()):
            lines.append(f"    x = t{k} * 0.5 + x")
    lines.append(f"    return {' + '.join(names[-2:])}")
    return "\n".join(lines) + "\n"


def _load(tmp_path_factory, source):
    path = tmp_path_factory.mktemp("modes") / f"prog{next(_counter)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


@settings(max_examples=10, deadline=None, derandomize=True)
@given(source=programs(), seed=st.integers(0, 2 ** 16))
def test_four_modes_agree_on_v_J_u(tmp_path_factory, source, seed):
    f = _load(tmp_path_factory, source)
    rng = np.random.default_rng(seed)
    x, y, w = (rng.uniform(0.2, 1.0, 3) for _ in range(3))
    ux, uy, v = (rng.uniform(-1, 1, 3) for _ in range(3))
    # source forward
    _, tangent = dt.jvp(f, wrt=(0, 1))(x, y, w, (ux, uy))
    fwd = float(np.dot(v, tangent))
    # source reverse
    bx, by = dt.vjp(f, wrt=(0, 1))(x, y, w, v)
    rev = float(np.dot(bx, ux) + np.dot(by, uy))
    # dual numbers
    _, dual_t = F.jvp(lambda a, b: f(a, b, w), (x, y), (ux, uy))
    dual = float(np.dot(v, np.asarray(dual_t)))
    # tape
    tx, ty = dualtape.constant(x), dualtape.constant(y)
    with dualtape.GradientTape() as tape:
        tape.watch(tx)
        tape.watch(ty)
        out = f(tx, ty, w)
    gx, gy = tape.gradient(out, [tx, ty], output_gradients=dualtape.constant(v))
    gx, gy = (np.zeros(3) if g is None else np.asarray(g) for g in (gx, gy))  # None: not connected
    taped = float(np.dot(gx, ux) + np.dot(gy, uy))
    for name, other in (("reverse", rev), ("dual", dual), ("tape", taped)):
        assert math.isclose(fwd, other, rel_tol=1e-9, abs_tol=1e-9), f"{name}: {other} vs forward {fwd}\n{source}"


# -- mixing generated code with the runtime types ---------------------------------------------

def pendulum_like(a, b):
    theta, omega = 1.0, 0.0
    for _ in range(20):
        omega = omega - 0.05 * (b * math.sin(theta) + a * omega)
        theta = theta + 0.05 * omega
    return theta


def mlp_like(w, x):
    h = np.tanh(x @ w)
    return np.mean(h ** 2)


def test_dual_numbers_through_a_generated_gradient_give_the_hvp():
    dg = dt.grad(pendulum_like)
    over_source = F.jvp(lambda a: dg(a, 1.3), (0.4,), (1.0,))[1]
    assert math.isclose(float(over_source), dt.hvp(pendulum_like)(0.4, 1.3, 1.0), rel_tol=1e-9)
    rng = np.random.default_rng(0)
    w, x, v = rng.standard_normal((3, 2)), rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    dm = dt.grad(mlp_like)
    over_source = np.asarray(F.jvp(lambda w: dm(w, x), (w,), (v,))[1])
    np.testing.assert_allclose(over_source, dt.hvp(mlp_like)(w, x, v), rtol=1e-9)
    np.testing.assert_allclose(over_source, F.hvp(lambda w: mlp_like(w, x), (w,), (v,)), rtol=1e-9)


def test_gradient_tape_records_a_generated_gradient():
    dg = dt.grad(pendulum_like)
    a = dualtape.constant(np.float64(0.4))
    with dualtape.GradientTape() as tape:
        tape.watch(a)
        g = dg(a, 1.3)  # traced input: the np.* specialization, so math.sin does not cut the tape
    assert "math.sin" not in dg.source_for(a, 1.3) and "np.sin" in dg.source_for(a, 1.3)
    assert math.isclose(float(np.asarray(tape.gradient(g, a))), dt.hvp(pendulum_like)(0.4, 1.3, 1.0), rel_tol=1e-9)


def test_hessian_and_jacfwd_match_the_runtime():
    rng = np.random.default_rng(1)
    w, x = rng.standard_normal((3, 2)), rng.standard_normal((4, 3))
    H = dt.hessian(mlp_like)(w, x)
    np.testing.assert_allclose(H, np.asarray(F.hessian(lambda w: mlp_like(w, x))(w)), rtol=1e-8, atol=1e-12)
    J = dt.jacfwd(lambda_free_tanh)(w, x)
    np.testing.assert_allclose(J, np.asarray(F.jacfwd(lambda w: lambda_free_tanh(w, x))(w)), rtol=1e-10)
    Hs = dt.hessian(pendulum_like, wrt=0)(0.4, 1.3)
    assert math.isclose(float(Hs), dt.hvp(pendulum_like)(0.4, 1.3, 1.0), rel_tol=1e-9)


def lambda_free_tanh(w, x):
    return np.tanh(x @ w) * 2.0


def test_forward_api_source_save_cache(tmp_path, capsys):
    fj = dt.jvp(pendulum_like, verbose=True)
    assert capsys.readouterr().out.strip() == fj.source.strip()
    assert dt.jvp(pendulum_like) is fj and dt.jvp(pendulum_like, wrt=1) is not fj
    assert "def pendulum_like_jvp(a, b, da):" in fj.source
    value, tangent = fj(0.4, 1.3, 1.0)
    assert math.isclose(tangent, dt.grad(pendulum_like)(0.4, 1.3), rel_tol=1e-12)
    for transformed, args in ((fj, (0.4, 1.3, 1.0)), (dt.hvp(pendulum_like), (0.4, 1.3, 1.0))):
        path = transformed.save(tmp_path / f"{transformed.name}.py")
        spec = importlib.util.spec_from_file_location(transformed.name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        got = getattr(module, transformed.name)(0.4, 1.3, **{"da": 1.0})
        want = transformed.value_and_tangent(*args) if transformed.mode == "hvp" else transformed(*args)
        assert np.allclose(got, want, rtol=1e-12)


def test_forward_refuses_ops_without_a_jvp_rule_and_bad_wrt():
    with pytest.raises(dt.TransformError, match="wrt=5"):
        dt.jvp(pendulum_like, wrt=5)
