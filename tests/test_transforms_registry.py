"""Every registry op with rules and samples through the transformer, generated from REGISTRY.

For each sample, a one-line function `f(x0, x1, ...) = op(x0, x1, ..., **static)` is written
to a file, transformed with `vjp`, and compared with the registry's own VJP (the tape's
code path) for a random cotangent: the generated adjoint is the rule, instantiated.
"""

import importlib.util

import numpy as np
import pytest

import dualtape.transforms as dt
from dualtape.core.apply_rules import vjp_parts
from dualtape.registry import REGISTRY

CASES = [(op, sample) for op in REGISTRY.values() if op.has_rules for sample in op.samples]


def _module_for(op, n_args, static, tmp_path):
    params = ", ".join(f"x{i}" for i in range(n_args))
    call = "OP(" + ", ".join([f"x{i}" for i in range(n_args)] + [f"{k}=S_{k}" for k in static]) + ")"
    path = tmp_path / f"op_{op.name}.py"
    path.write_text(f"def f({params}):\n    return {call}\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    module.OP = op
    for k, v in static.items():
        setattr(module, f"S_{k}", v)
    spec.loader.exec_module(module)
    return module.f


@pytest.mark.parametrize("op, sample", CASES, ids=[f"{op.name}-{s.__name__}" for op, s in CASES])
def test_registry_op_through_transformer(op, sample, tmp_path):
    rng = np.random.default_rng(0)
    args, static = sample(rng)
    args = list(args)
    wrt = tuple(i for i, a in enumerate(args)
                if np.asarray(a).dtype.kind == "f" and i not in op.nondiff_argnums
                and (op.variadic or op.vjp_rule(i) not in (None,)) and callable(
                    op.vjp if op.variadic else op.vjp_rule(i)))
    if not wrt:
        pytest.skip("no differentiable float input")
    f = _module_for(op, len(args), static, tmp_path)
    ans = op.impl(*args, **static)
    dy = rng.standard_normal(np.shape(ans))
    f_vjp = dt.vjp(f, wrt=wrt)
    got = f_vjp(*[np.copy(a) for a in args], dy)
    want = vjp_parts(op, dy, ans, args, static, list(wrt))
    for i, g, w in zip(wrt, got, want):
        assert np.shape(g) == np.shape(args[i])
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12, err_msg=f"{op.name} input {i}")
