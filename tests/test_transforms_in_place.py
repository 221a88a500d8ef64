"""transforms/optimize/in_place.py: arithmetic written into temporaries nothing reads afterwards
(issue 23). Never into a parameter, a value read again, a second name, a view, an array of
another shape or dtype, or a value a loop reads again.

The pass on small bodies with known types, then through grad and hvp: the arguments are
unchanged after the call, and the values are those of the unoptimized code.
"""

import ast

import numpy as np
import pytest

import dualtape.transforms as dt
from dualtape.transforms.optimize.concrete_infer import Infer
from dualtape.transforms.optimize.in_place import write_in_place

F64, F32 = np.dtype(np.float64), np.dtype(np.float32)
TYPES = {"x": ((3, 4), F64), "w": ((4, 4), F64), "b": ((4,), F64), "v": ((3, 4), F64), "m": ((2, 3, 4), F64),
         "s": ((3, 4), F32), "a": ((3, 4), F64), "c": ((3, 4), F64), "t": ((3, 4), F64), "u": ((3, 4), F64),
         "r": ((4,), F64), "p": ((3, 4), F32)}


def _in_place(source, params=("x", "w", "b", "v", "m", "s")):
    env = {k: ("a",) + v for k, v in TYPES.items()}
    body = ast.parse(source).body
    return "\n".join(ast.unparse(st) for st in write_in_place(body, list(params), Infer(env)))


def test_a_temporary_read_once_takes_the_result():
    assert _in_place("a = x @ w\nc = a + b") == "a = x @ w\nc = np.add(a, b, out=a)"
    assert _in_place("a = x @ w\nc = v - a") == "a = x @ w\nc = np.subtract(v, a, out=a)"
    assert _in_place("a = x * v\nc = -a") == "a = x * v\nc = np.negative(a, out=a)"


def test_a_new_left_or_right_part_takes_the_result():
    assert _in_place("c = x @ w + v @ w") == "c = x @ w\nc += v @ w"
    assert _in_place("c = v + x @ w") == "c = x @ w\nc += v"  # (+ commutes bit for bit)
    assert _in_place("c = v - x @ w") == "c = v - x @ w"  # (- does not)
    assert _in_place("a = x * 2\nc = a + s") == "a = x * 2\nc = np.add(a, s, out=a)"  # (float32 s: float64)


def test_the_written_temporary_is_written_again_down_a_chain():
    assert _in_place("a = x * v\nt = 1 - a\nu = x * t") == \
        "a = x * v\nt = np.subtract(1, a, out=a)\nu = np.multiply(x, t, out=t)"


@pytest.mark.parametrize("source", [
    "c = x + b",                       # a parameter
    "a = x @ w\nc = a + b\nt = a * 2",  # read again
    "a = x @ w\nt = a\nc = a + b",      # a second name
    "a = x.T.T\nc = a + b",             # a view
    "a = x[0:3]\nc = a + b",            # a view
    "r = b * 2\nc = r + x",             # (4,) grows to (3, 4)
    "p = s * 2\nc = p + x",             # float32 memory for a float64 result
    "t = x * t + v * t",                # each part reads the target
    "a = x * v\nf(a)",                  # a call may keep it
])
def test_what_may_be_seen_elsewhere_or_does_not_fit_is_left_alone(source):
    assert _in_place(source) == source


def test_a_temporary_made_before_a_loop_is_not_written_in_it():
    source = "a = x * v\nfor i in range(3):\n    c = a + b"
    assert _in_place(source) == source


def tanh_mlp(w1, b1, w2, b2, x, y):
    h = np.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return np.sum((out - y) ** 2) / x.shape[0]


def _args(dtype=np.float64):
    rng = np.random.default_rng(5)
    return [rng.standard_normal(s).astype(dtype) for s in [(4, 5), (5,), (5, 3), (3,), (6, 4), (6, 3)]]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_grad_and_hvp_leave_their_arguments_alone_and_match_the_unoptimized_code(dtype):
    args = _args(np.float64 if dtype is np.complex128 else dtype)
    vs = tuple(np.full_like(a, 0.5) for a in args[:4])
    if dtype is np.complex128:  # (a complex y: the loss stays real-valued in its use here)
        args[4] = args[4].astype(np.complex128)
    before = [a.copy() for a in args] + [v.copy() for v in vs]
    wrt = (0, 1, 2, 3)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype is np.float32 else dict(rtol=1e-12, atol=1e-12)
    if dtype is not np.complex128:
        g = dt.grad(tanh_mlp, wrt=wrt)
        assert "out=" in g.source_for(*args)
        for got, want in zip(g(*args), dt.grad(tanh_mlp, wrt=wrt, optimize=False)(*args)):
            assert got.dtype == want.dtype
            np.testing.assert_allclose(got, want, **tol)
    h = dt.hvp(tanh_mlp, wrt=wrt)
    try:
        want = dt.hvp(tanh_mlp, wrt=wrt, optimize=False)(*args, vs)
    except Exception as exc:  # a refusal must be the same either way
        with pytest.raises(type(exc)):
            h(*args, vs)
    else:
        for got, w in zip(h(*args, vs), want):
            assert np.asarray(got).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(got, w, **tol)
    for a, old in zip(list(args) + list(vs), before):
        np.testing.assert_array_equal(a, old)


def saved_values(x, w):
    a = x @ w
    h = np.tanh(a)
    g = h * 2.0
    return np.sum(g * h) + np.sum(a)


def test_values_the_backward_pass_reads_again_are_never_written():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((3, 4)), rng.standard_normal((4, 4))
    g = dt.grad(saved_values, wrt=(0, 1))
    for got, want in zip(g(x, w), dt.grad(saved_values, wrt=(0, 1), optimize=False)(x, w)):
        np.testing.assert_allclose(got, want, rtol=1e-13)
    h = dt.hvp(saved_values, wrt=(0, 1))
    vs = (np.ones_like(x), np.ones_like(w))
    for got, want in zip(h(x, w, vs), dt.hvp(saved_values, wrt=(0, 1), optimize=False)(x, w, vs)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
