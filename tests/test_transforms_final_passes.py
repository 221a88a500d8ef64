"""transforms/optimize/aliases.py, scalings.py, transposes.py: passes over the code that runs
(not the adjoint hvp reads back), in the versions compiled for known shapes (issue 23).

Each on small bodies, where its rules alone decide, then through grad and hvp against the
unoptimized code.
"""

import ast

import numpy as np
import pytest

import dualtape.transforms as dt
from dualtape.transforms.optimize.aliases import drop_aliases
from dualtape.transforms.optimize.scalings import fold_scalings
from dualtape.transforms.optimize.transposes import contiguous_transposes


def _run(fix, source):
    return "\n".join(ast.unparse(st) for st in fix(ast.parse(source).body))


# -- aliases -----------------------------------------------------------------------------------

def _aliases(source, params=("x",), arrays=True):
    return _run(lambda body: drop_aliases(body, list(params), lambda node: arrays), source)


def test_a_second_name_is_read_as_the_first():
    assert _aliases("a = x * 2\nb = a\nc = b + b") == "a = x * 2\nc = a + a"
    assert _aliases("b = x\nc = b @ b") == "c = x @ x"  # (a parameter never assigned)
    assert _aliases("a = x * 2\nb = a\nc = b\nd = c + 1") == "a = x * 2\nd = a + 1"


@pytest.mark.parametrize("source", [
    "a = x * 2\nb = a\na = a + 1\nc = b + 1",             # a rebound: b keeps the old value
    "a = x * 2\nb = a\nb = b + 1\nc = b",                 # b rebound
    "a = x * 2\nfor i in y:\n    b = a\nc = b + 1",       # b read in another block
    "a = x * 2\nb = a\ndel b",                            # b deleted
    "x = x * 2\nb = x\nc = b + 1",                        # a parameter rebound
])
def test_a_second_name_that_may_hold_another_value_stays(source):
    assert _aliases(source) == source


def test_a_returned_name_or_a_number_keeps_its_name():
    assert _aliases("a = x * 2\nb = a\nreturn b") == "a = x * 2\nb = a\nreturn b"
    assert _aliases("a = x * 2\nb = a\nc = b + 1", arrays=False) == "a = x * 2\nb = a\nc = b + 1"


# -- scalings ----------------------------------------------------------------------------------

def _negations(source, floats=True, params=("s",)):
    return _run(lambda body: fold_scalings(body, list(params), lambda node: floats,
                                           lambda node: isinstance(node, ast.Name) and node.id in ("s", "k")), source)


def test_a_number_scaling_a_value_scaled_by_a_power_of_two_joins_the_constant():
    assert _negations("t = 2 * a\nu = s * t") == "t = s * 2 * a\nu = t"
    assert _negations("k = x / 3\nt = a * 0.5\nu = t * k") == "k = x / 3\nt = a * (k * 0.5)\nu = t"
    assert _negations("u = s * (2 * a)") == "u = s * 2 * a"
    assert _negations("u = (a * 4) * k + b") == "u = k * 4 * a + b"
    assert _negations("u = s * (3 * a)") == "u = s * (3 * a)"
    assert _negations("u = s * (2 * a)", floats=False) == "u = s * (2 * a)"  # (numbers: as written)


@pytest.mark.parametrize("source", [
    "t = 3 * a\nu = s * t",              # 3 * a then s: another rounding than s * 3 first
    "t = 2 * a\nk = x / 3\nu = k * t",   # k made after t: not readable at t's assignment
    "t = 2 * a\nu = b * t",              # b not surely a number
    "t = 2 * a\nu = s * t\nv = t + 1",   # t read again
])
def test_a_scaling_that_would_round_differently_or_read_too_early_stays(source):
    assert _negations(source) == source


def test_a_negated_scaled_value_takes_the_sign_in_its_constant():
    assert _negations("t = 2 * (a * b)\nu = -t") == "t = -2 * (a * b)\nu = t"
    assert _negations("t = a * 0.5\nu = -t") == "t = a * -0.5\nu = t"


@pytest.mark.parametrize("source", [
    "t = 2 * a\nu = -t\nv = t + 1",   # t read again: it must keep its sign
    "t = 2 * a\nt = t + 1\nu = -t",   # t assigned twice
    "t = a * b\nu = -t",              # no constant
])
def test_a_negation_others_would_see_stays(source):
    assert _negations(source) == source


def test_integer_values_keep_their_negation():
    assert _negations("t = 2 * a\nu = -t", floats=False) == "t = 2 * a\nu = -t"


# -- transposes --------------------------------------------------------------------------------

def _transposes(source, shape=(64, 64), quiet=lambda st: True):
    return _run(lambda body: contiguous_transposes(body, quiet, lambda node: ("a", shape, np.dtype(float))), source)


def test_a_transpose_several_products_read_is_copied_once():
    assert _transposes("t = w.T\na = g @ t\nb = h @ t + g @ u") == \
        "t = np.ascontiguousarray(w.T)\na = g @ t\nb = h @ t + g @ u"


@pytest.mark.parametrize("source", [
    "t = w.T\na = g @ t",                       # one product: the copy costs what it saves
    "t = w.T\na = g @ t\nb = t @ g",            # read as a left operand
    "t = w.T\na = g @ t\nb = t + 1\nc = g @ t",  # read otherwise
])
def test_a_transpose_read_otherwise_or_once_stays_a_view(source):
    assert _transposes(source) == source


def test_a_small_transpose_stays_a_view():
    source = "t = w.T\na = g @ t\nb = h @ t"
    assert _transposes(source, shape=(64, 10)) == source


def test_a_statement_that_may_write_between_the_products_keeps_the_view():
    source = "t = w.T\na = g @ t\nw[0] = 1.0\nb = h @ t"
    assert _transposes(source) == source
    source = "t = w.T\na = g @ t\nf(w)\nb = h @ t"
    assert _transposes(source) == source
    source = "t = w.T\na = g @ t\nc = f(w)\nb = h @ t"
    assert _transposes(source, quiet=lambda st: not isinstance(st.value, ast.Call)) == source


# -- through the transforms --------------------------------------------------------------------

def mlp3(w1, b1, w2, b2, w3, x):
    h1 = np.tanh(x @ w1 + b1)
    h2 = np.tanh(h1 @ w2 + b2)
    return np.sum((h2 @ w3) ** 2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_hvp_and_grad_of_a_wide_mlp_match_the_unoptimized_code(dtype):
    rng = np.random.default_rng(4)
    shapes = [(8, 40), (40,), (40, 40), (40,), (40, 3), (5, 8)]
    args = [rng.standard_normal(s).astype(dtype) / 4 for s in shapes]
    vs = tuple(rng.standard_normal(s).astype(dtype) for s in shapes[:5])
    before = [a.copy() for a in args] + [v.copy() for v in vs]
    wrt = tuple(range(5))
    h = dt.hvp(mlp3, wrt=wrt)
    source = h.source_for(*args, vs)
    if dtype == np.float64:  # (float32 code meets float64 seeds: fewer known types, fewer rewrites)
        assert "np.ascontiguousarray(w2.T)" in source and "*= -2" in source
    tol = dict(rtol=2e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    for got, want in zip(h(*args, vs), dt.hvp(mlp3, wrt=wrt, optimize=False)(*args, vs)):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, **tol)
    g = dt.grad(mlp3, wrt=wrt)
    for got, want in zip(g(*args), dt.grad(mlp3, wrt=wrt, optimize=False)(*args)):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, **tol)
    for a, old in zip(list(args) + list(vs), before):
        np.testing.assert_array_equal(a, old)
