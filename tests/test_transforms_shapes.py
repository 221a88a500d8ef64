"""Shape-specialised adjoints (transforms/optimize/shapes.py): `unbroadcast` dropped only where shapes are
provably equal for ndarray arguments, with the gradients unchanged (issue 13)."""

import ast
import pathlib
import sys

import numpy as np
import pytest

import dualtape.transforms as dt
from dualtape.transforms.ir.code import render
from dualtape.transforms.optimize import shapes


BENCHMARKS = pathlib.Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))  # as test_benchmarks.py: the workload programs are defined once there

from workloads_src import chain_np as chain  # noqa: E402
from workloads_src import floor_chain as chain_floor  # noqa: E402


def backward(source):
    return source.split("# backward", 1)[1]


def test_chain_on_an_ndarray_drops_unbroadcast_and_the_recomputation():
    g = dt.grad(chain)
    x = np.linspace(0.1, 0.9, 10)
    special = backward(g.source_for(x, 5))
    assert "unbroadcast" not in special and "_sin_x = np.sin" not in special
    assert "unbroadcast" in backward(g.source)  # the general version keeps them
    np.testing.assert_allclose(g(x, 5), chain_floor(x, 5), rtol=1e-12)


def squares(x):
    y = np.sin(x)
    return np.sum(y * y * 2.0)


def test_a_list_argument_keeps_the_general_code():
    g = dt.grad(squares)
    assert "unbroadcast" in backward(g.source_for([0.1, 0.2]))
    assert "unbroadcast" not in backward(g.source_for(np.array([0.1, 0.2])))
    x = np.array([0.1, 0.2])
    np.testing.assert_allclose(g([0.1, 0.2]), 4 * np.sin(x) * np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(g(x), 4 * np.sin(x) * np.cos(x), rtol=1e-12)


def broadcast_sum(x, b):
    y = x
    for _ in range(3):
        y = np.tanh(y * 0.5 + b)
    return np.sum(y * y)


def test_broadcast_operands_keep_their_unbroadcast():
    x, b = np.linspace(-1, 1, 12).reshape(3, 4), np.array([0.3])
    g = dt.grad(broadcast_sum, wrt=(0, 1))
    kinds = {"x": "array", "b": "array"}
    symbolic = g._build(kinds, ndarrays=frozenset(kinds))[0].source()  # shapes.py alone (any shapes)
    assert "unbroadcast" in backward(symbolic)
    # for these shapes (concrete.py), b's adjoint is summed over the axes b was broadcast along
    assert "b_add_t1_b.sum(axis=(0, 1)).reshape((1,))" in backward(g.source_for(x, b))
    gx, gb = g(x, b)
    eps = 1e-6
    fd = (broadcast_sum(x, b + eps) - broadcast_sum(x, b - eps)) / (2 * eps)
    assert gb.shape == (1,)
    np.testing.assert_allclose(gb, fd, rtol=1e-6)
    fdx = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        fdx[i] = (broadcast_sum(x + e, b) - broadcast_sum(x - e, b)) / (2 * eps)
    np.testing.assert_allclose(gx, fdx, rtol=1e-6, atol=1e-9)


def shrinking(x):
    for _ in range(3):
        x = x[1:] * 2.0 + x[:-1] * x[1:]
    return np.sum(x)


@pytest.mark.parametrize("n", [5, 8])
def test_a_loop_that_changes_shapes_is_not_specialised(n):
    x = np.linspace(0.1, 1.0, n)
    g = dt.grad(shrinking)
    got = g(x)
    eps = 1e-6
    fd = [(shrinking(x + eps * e) - shrinking(x - eps * e)) / (2 * eps) for e in np.eye(n)]
    np.testing.assert_allclose(got, fd, rtol=1e-6)


def drop_unbroadcasts(lines, signature, roots, adjoints):
    """The pass on the statements of `lines` in a function of `signature`, back as lines."""
    args = ast.parse(f"def _f({signature}): pass").body[0].args
    return render(shapes.drop_unbroadcasts(ast.parse("\n".join(lines)).body, args, roots, adjoints)).split("\n")


def test_a_larger_cotangent_is_still_summed_down():
    def f(x):
        y = x * 2.0
        return y * x
    x = np.arange(3.0)
    dy = np.ones((2, 3))
    np.testing.assert_allclose(dt.vjp(f)(x, dy), (dy * 4 * x).sum(0))


def test_the_pass_proves_nothing_without_an_ndarray_root():
    lines = ["y = x * 2.0", "by = unreduce(bout, np.shape(y), None, False)",
             "bx = unbroadcast(by * 2.0, np.shape(x))", "return bx"]
    assert drop_unbroadcasts(lines, "x, bout=1.0", frozenset(), {"by", "bx"}) == lines
    out = drop_unbroadcasts(lines, "x, bout=1.0", frozenset({"x"}), {"by", "bx"})
    assert out[2] == "bx = by * 2.0"
    # a cotangent parameter's shape is unknown: never a class member
    lines2 = ["y = x * 2.0", "by = by * 1.0", "bx = unbroadcast(by * 2.0, np.shape(x))", "return bx"]
    assert drop_unbroadcasts(lines2, "x, by", frozenset({"x"}), {"by", "bx"}) == lines2
    # two ndarray parameters combined: their shapes may differ
    lines3 = ["y = x * z", "by = unreduce(bout, np.shape(y), None, False)",
              "bx = unbroadcast(by * z, np.shape(x))", "return bx"]
    assert drop_unbroadcasts(lines3, "x, z, bout=1.0", frozenset({"x", "z"}), {"by", "bx"}) == lines3


def test_an_in_place_reshape_stops_the_proof():
    lines = ["y = x * 2.0", "x.shape = (2, 2)", "by = unreduce(bout, np.shape(y), None, False)",
             "bx = unbroadcast(by * 2.0, np.shape(x))", "return bx"]
    assert drop_unbroadcasts(lines, "x, bout=1.0", frozenset({"x"}), {"by", "bx"}) == lines
