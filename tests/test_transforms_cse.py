"""transforms/optimize/cse.py: a value straight-line code computes twice, computed once (issue 23).

The pass on small bodies (every predicate true, so only its own rules decide), then through
hvp, whose tangent code shares tanh's slope `1 - h * h` with the adjoint it reads.
"""

import ast
import re

import numpy as np
import pytest

import dualtape.transforms as dt
from dualtape.transforms.optimize.cse import share_subexpressions


def _shared(source, quiet=lambda st: True):
    body = ast.parse(source).body
    return "\n".join(ast.unparse(st) for st in share_subexpressions(body, lambda st: True, quiet))


def test_a_later_value_that_is_part_of_an_earlier_one_is_computed_before_it():
    assert _shared("a = x * (1 - y * y)\nb = y * y\nc = 1 - b") == "b = y * y\nc = 1 - b\na = x * c"


def test_a_part_of_a_later_value_held_by_an_earlier_name_is_read_from_it():
    assert _shared("b = y * y\na = x * (1 - y * y)") == "b = y * y\na = x * (1 - b)"


@pytest.mark.parametrize("source", [
    "a = x * (y * y)\ny = y + 1\nb = y * y",   # y rebound in between: two values
    "a = x * (y * y)\nc = b + 1\nb = y * y",   # b read in between: its earlier value
    "b = y * y\nb = b + 1\na = x * (y * y)",   # b rebound: it no longer holds y * y
    "a = y * y\nb = y * y",                    # two whole values stay two arrays (no aliases)
])
def test_values_that_may_differ_or_would_alias_are_left_alone(source):
    assert _shared(source) == source


def test_a_statement_with_effects_ends_the_run():
    source = "a = x * (y * y)\nf(y)\nb = y * y"
    assert _shared(source, quiet=lambda st: isinstance(st, ast.Assign)) == source


def tanh_mlp(w1, b1, w2, x):
    h = np.tanh(x @ w1 + b1)
    return np.sum((h @ w2) ** 2)


def test_hvp_computes_the_tanh_slope_once_with_the_unoptimized_values():
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(s) for s in [(4, 5), (5,), (5, 2), (3, 4)]]
    vs = tuple(rng.standard_normal(a.shape) for a in args[:3])
    h = dt.hvp(tanh_mlp, wrt=(0, 1, 2))
    source = h.source_for(*args, vs)
    code = [line for line in source.splitlines() if not line.strip().startswith("#")]
    assert sum(bool(re.search(r"\bh \* h\b", line)) for line in code) == 1, source  # (tangent, adjoint: once)
    want = dt.hvp(tanh_mlp, wrt=(0, 1, 2), optimize=False)(*args, vs)
    for got, w in zip(h(*args, vs), want):
        np.testing.assert_allclose(got, w, rtol=1e-13, atol=1e-14)
