"""Every registry op's batching rule against a loop over the batch (generated from the registry).

For each op, drawn inputs are stacked into a batch of 3 slightly different examples, and
`vmap` of the op (every array argument batched, then each one alone, the others the same
for every example) must give what the op gives on each example, stacked. The VJP and JVP
of each op under vmap are checked the same way, so the rules' own ops batch right too.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dualtape
from dualtape.batching.rules import DECLARED, RULES, loop
from dualtape.registry import REGISTRY
from dualtape.testing import differentiable_argnums, inputs_for
from dualtape.testing.strategies import complex_inputs_for

OPS = [op for op in REGISTRY.values() if op.elementwise or op.samples]
BATCH = 3


def _examples(a, k):
    """Example k of a batch made from `a`: floats scaled a little (inside every domain the
    samples respect, as the scale is 1 + 1e-3 k), other values as they are."""
    a = np.asarray(a)
    if a.dtype.kind in "fc":
        return a * (1 + 1e-3 * k) + (1e-3 * k if a.ndim == 0 else 0)
    return a


def _patterns(args):
    arrays = [i for i, a in enumerate(args) if np.ndim(a) > 0 or isinstance(a, (np.ndarray, np.generic))]
    out = [tuple(arrays)]
    if len(arrays) > 1:
        out += [(i,) for i in arrays]
    return out


def _expected(op, args, static, batched):
    outs = []
    for k in range(BATCH):
        example = [_examples(a, k) if i in batched else a for i, a in enumerate(args)]
        outs.append(op.impl(*example, **static))
    return np.stack(outs)


def _close(got, expected, op):
    got = np.asarray(got)
    assert got.shape == expected.shape, (op.name, got.shape, expected.shape)
    if expected.dtype.kind in "fc":
        tol = 1e-5 if expected.dtype in (np.float32, np.complex64) else 1e-9
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, err_msg=op.name)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=op.name)


def _run(op, args, static, batched):
    in_axes = tuple(0 if i in batched else None for i in range(len(args)))
    stacked = [np.stack([_examples(a, k) for k in range(BATCH)]) if i in batched else a
               for i, a in enumerate(args)]
    return dualtape.vmap(lambda *a: op(*a, **static), in_axes=in_axes)(*stacked)


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
@settings(max_examples=max(2, settings().max_examples // 3))
@given(data=st.data())
def test_batching_rule_matches_a_loop(op, data):
    _check_every_pattern(op, *data.draw(inputs_for(op), label="args, static"))


def _check_every_pattern(op, args, static):
    for batched in _patterns(args):
        try:
            expected = _expected(op, args, static, batched)
        except (ValueError, TypeError, np.linalg.LinAlgError):
            continue  # the examples themselves are not valid inputs (a shape the op refuses)
        _close(_run(op, args, static, batched), expected, op)


COMPLEX_OPS = [op for op in OPS if op.complex]


@pytest.mark.parametrize("op", COMPLEX_OPS, ids=lambda op: op.name)
@settings(max_examples=2)
@given(data=st.data())
def test_batching_rule_matches_a_loop_on_complex_values(op, data):
    _check_every_pattern(op, *data.draw(complex_inputs_for(op), label="args, static"))


DIFF_OPS = [op for op in OPS if op.has_rules]


@pytest.mark.parametrize("op", DIFF_OPS, ids=lambda op: op.name)
@settings(max_examples=2)
@given(data=st.data())
def test_vjp_and_jvp_under_vmap_match_a_loop(op, data):
    """vmap(vjp) and vmap(jvp) of the op, every argument batched, against per-example calls."""
    args, static = data.draw(inputs_for(op), label="args, static")
    argnums = differentiable_argnums(op, args)
    batched = tuple(range(len(args)))
    rng = np.random.default_rng(0)
    try:
        expected = _expected(op, args, static, batched)
    except (ValueError, TypeError, np.linalg.LinAlgError):
        return
    examples = [[_examples(a, k) for a in args] for k in range(BATCH)]
    cot = rng.standard_normal((BATCH,) + expected.shape[1:]).astype(expected.dtype)
    tangents = [[rng.standard_normal(np.shape(a)).astype(np.asarray(a).dtype) for a in args] for _ in range(BATCH)]

    def f_of(example):
        def f(*x):
            full = list(example)
            for i, xi in zip(argnums, x):
                full[i] = xi
            return op(*full, **static)
        return f

    n = len(args)

    def vjp_example(*e):
        example, cotangent = e[:n], e[n]
        return dualtape.vjp(f_of(example), *[example[i] for i in argnums])[1](cotangent)

    def jvp_example(*e):
        example, ts = e[:n], e[n:]
        return dualtape.jvp(f_of(example), [example[i] for i in argnums], list(ts))[1]

    stacked = [np.stack([e[i] for e in examples]) for i in range(n)]
    got = dualtape.vmap(vjp_example)(*stacked, cot)
    for j in range(len(argnums)):
        want = np.stack([dualtape.vjp(f_of(examples[k]), *[examples[k][i] for i in argnums])[1](cot[k])[j]
                         for k in range(BATCH)])
        _close(got[j], want, op)
    t_stacked = [np.stack([tangents[k][i] for k in range(BATCH)]) for i in argnums]
    got = dualtape.vmap(jvp_example)(*stacked, *t_stacked)
    want = np.stack([dualtape.jvp(f_of(examples[k]), [examples[k][i] for i in argnums],
                                  [tangents[k][i] for i in argnums])[1] for k in range(BATCH)])
    _close(got, want, op)


def test_written_rules_are_registry_ops():
    assert DECLARED <= set(REGISTRY) and set(RULES) == DECLARED  # (SciPy is installed for the tests)
    assert loop not in RULES.values()
