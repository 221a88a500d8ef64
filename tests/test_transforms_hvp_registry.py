"""Every registry op with rules through the transformer's Hessian-vector product (issue 12).

`transforms.hvp` differentiates the generated adjoint code forward, so every helper a VJP rule
calls needs a tangent (transforms/forward/helper_rules.py, fwd_rules_more.py) or readable source. For each
op and sample, `f(x0, ...) = sum(sin(op(x0, ...)) * w)` (a nonlinear scalar, so the op's own
curvature and its Jacobian both enter H v) runs through `transforms.hvp`, and is compared with
the runtime's `dualtape.hvp` (dual numbers over the tape) and with central differences of the
transformer's own gradient. Elementwise ops get deterministic inputs honouring their domain.
SciPy's ops are registered only when SciPy is installed, so they are swept exactly then.
"""

import importlib.util

import numpy as np
import pytest

import dualtape
import dualtape.transforms as dt
from dualtape.registry import REGISTRY
from dualtape.testing import strategies


def _elementwise_sample(op):
    names = strategies.input_names(op)

    def sample(rng):
        role = [op.domain.get(name) for name in names]
        args = []
        for name, r in zip(names, role):
            b = rng.uniform(-3.0, 3.0, (3,))
            if r == "bool":
                args.append(b > 0)
            elif r == "away_from_multiples_of_y":
                args.append(strategies._off_multiples(b))
            elif "away_from_multiples_of_y" in role and name == "y":
                args.append(strategies._power_of_two(b))
            elif r == "below_hi":
                args.append(-1.0 - np.abs(b) / 3.0)
            elif "below_hi" in role and name == "hi":
                args.append(1.0 + np.abs(b) / 3.0)
            elif r == "no_ties":
                args.append(np.round((b - 0.1) / 0.2) * 0.2 + 0.1)
            else:
                args.append(strategies._ELEMENT_DOMAINS[r](b))
        return tuple(args), {}
    return sample


def _cases():
    for op in REGISTRY.values():
        if not op.has_rules or not (op.samples or op.elementwise):
            continue
        for k, sample in enumerate(op.samples or (_elementwise_sample(op),)):
            yield op, k, sample


CASES = list(_cases())


def _wrt(op, args):
    return tuple(i for i, a in enumerate(args)
                 if np.asarray(a).dtype.kind == "f" and i not in op.nondiff_argnums
                 and callable(op.vjp if op.variadic else op.vjp_rule(i)))


def _module_for(op, n_args, static, weights, tmp_path, k, complex_out=False):
    params = ", ".join(f"x{i}" for i in range(n_args))
    call = "OP(" + ", ".join([f"x{i}" for i in range(n_args)] + [f"{s}=S_{s}" for s in static]) + ")"
    loss = f"np.sin({call}) * W"
    loss = f"np.real({loss})" if complex_out else loss  # (a real op with a complex result: np.fft.rfft)
    path = tmp_path / f"hvp_{op.name}_{k}.py"
    path.write_text(f"import numpy as np\n\n\ndef f({params}):\n    return np.sum({loss})\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    module.OP, module.W = op, weights
    for s, v in static.items():
        setattr(module, f"S_{s}", v)
    spec.loader.exec_module(module)
    return module.f


def _shifted(args, wrt, vs, eps):
    out = [np.copy(a) for a in args]
    for i, v in zip(wrt, vs):
        out[i] = out[i] + eps * v
    return out


@pytest.mark.parametrize("op, k, sample", CASES, ids=[f"{op.name}-{k}" for op, k, _ in CASES])
def test_transforms_hvp_of_registry_op(op, k, sample, tmp_path):
    rng = np.random.default_rng(k)
    args, static = sample(rng)
    args = list(args)
    wrt = _wrt(op, args)
    if not wrt:
        pytest.skip("no differentiable float input")
    ans = op.impl(*args, **static)
    f = _module_for(op, len(args), static, rng.standard_normal(np.shape(ans)), tmp_path, k, np.iscomplexobj(ans))
    vs = tuple(rng.standard_normal(np.shape(args[i])) for i in wrt)
    got = dt.hvp(f, wrt=wrt)(*[np.copy(a) for a in args], vs)
    assert len(got) == len(wrt)

    grad = dt.grad(f, wrt=wrt)
    eps = 1e-6
    plus, minus = grad(*_shifted(args, wrt, vs, eps)), grad(*_shifted(args, wrt, vs, -eps))
    for i, h, p, m in zip(wrt, got, plus, minus):
        fd = (np.asarray(p) - np.asarray(m)) / (2 * eps)
        assert np.shape(h) == np.shape(args[i]), f"{op.name} input {i}"
        np.testing.assert_allclose(h, fd, rtol=1e-5, atol=1e-5 * (1 + np.max(np.abs(fd))),
                                   err_msg=f"{op.name} input {i}: transforms.hvp vs differences of its gradient")

    def g(*primals):
        full = list(args)
        for i, p in zip(wrt, primals):
            full[i] = p
        return f(*full)
    want = dualtape.hvp(g, tuple(args[i] for i in wrt), vs)
    want = want if len(wrt) > 1 else (want,)
    for i, h, w in zip(wrt, got, want):
        np.testing.assert_allclose(h, w, rtol=1e-8, atol=1e-10 * (1 + np.max(np.abs(w))),
                                   err_msg=f"{op.name} input {i}: transforms.hvp vs dualtape.hvp")


def test_sweep_covers_the_newer_ops():
    names = {op.name for op, _, _ in CASES}
    assert {"SvdU", "SelfAdjointEigVectors", "QrQ", "MatrixPinv", "LinalgNorm", "Kron", "Quantile",
            "Sort", "Convolve", "Interp", "MatrixPower", "HStack", "Diff", "Average"} <= names


def test_a_user_global_shadowing_a_rule_helper_is_refused(tmp_path):
    path = tmp_path / "shadowing_helper.py"
    path.write_text("import numpy as np\n\n_row = 3.0\n\n\n"
                    "def f(a):\n    return np.sum(np.sin(np.linalg.svd(a, full_matrices=False)[0])) * _row\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    a = np.random.default_rng(0).standard_normal((3, 3))
    with pytest.raises(dt.TransformError, match="global `_row` of your module shadows"):
        dt.hvp(module.f)(a, np.ones((3, 3)))
