"""Every corpus function through `dualtape.transforms.grad`, checked against central
finite differences and, where the tape can run the same program, against GradientTape."""

import inspect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dualtape
import dualtape.transforms as dt
from test_transforms_corpus_functions import CORPUS

SETTINGS = settings(max_examples=4, deadline=None, derandomize=True)


def draw_args(data, spec):
    """Floats in [0.5, 1.5] kept off round numbers, so no draw sits on a branch threshold or
    a tie of max/min, where finite differences straddle a kink."""
    args = []
    for position, s in enumerate(spec.split()):
        offset = 0.000317 * (position + 1)
        floats = st.integers(0, 1000).map(lambda k, offset=offset: 0.5 + k / 1000 + offset)
        if s == "s":
            args.append(data.draw(floats))
        elif s[0] in "vm":
            shape = (int(s[1:]),) if s[0] == "v" else (int(s[1]), int(s[2]))
            size = int(np.prod(shape))
            args.append(np.array(data.draw(st.lists(floats, min_size=size, max_size=size))).reshape(shape))
        else:
            args.append(int(s))
    return args


def central_difference(f, args, i, eps=1e-6):
    x = args[i]
    if not isinstance(x, np.ndarray):
        hi, lo = list(args), list(args)
        hi[i], lo[i] = x + eps, x - eps
        return (f(*hi) - f(*lo)) / (2 * eps)
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        hi, lo = list(args), list(args)
        hi[i], lo[i] = x.copy(), x.copy()
        hi[i][idx] += eps
        lo[i][idx] -= eps
        grad[idx] = (f(*hi) - f(*lo)) / (2 * eps)
    return grad


def tape_gradient(f, args, wrt):
    """The tape's gradient of the same program, or None where the tape cannot run it
    (math.* on tensors, subscript writes into immutable tensors, Python branches)."""
    try:
        tensors = [dualtape.constant(np.asarray(a, dtype=np.float64)) if i in wrt else a
                   for i, a in enumerate(args)]
        with dualtape.GradientTape() as tape:
            for i in wrt:
                tape.watch(tensors[i])
            y = f(*tensors)
        grads = tape.gradient(y, [tensors[i] for i in wrt])
        if any(g is None for g in grads):
            return None
        return [np.asarray(g) for g in grads]
    except Exception:  # noqa: BLE001 - the tape simply does not support this program
        return None


def tape_can_run(fn):
    """math.* turns a tensor into a float and silently cuts the tape: skip those programs."""
    source = inspect.getsource(fn)
    return "math." not in source and "helper" not in source and "scaled_by" not in source


def _close(a, b, rtol):
    return np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("fn, spec, wrt", CORPUS, ids=[c[0].__name__ for c in CORPUS])
@SETTINGS
@given(data=st.data())
def test_corpus_gradient(fn, spec, wrt, data):
    args = draw_args(data, spec)
    wrts = wrt if isinstance(wrt, tuple) else (wrt,)
    df = dt.grad(fn, wrt=wrt)
    got = df(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    got = got if isinstance(wrt, tuple) else (got,)
    for i, g in zip(wrts, got):
        numeric = central_difference(fn, args, i)
        assert np.shape(g) == np.shape(args[i]), f"{fn.__name__}: gradient shape of argument {i}"
        assert _close(g, numeric, 1e-5), f"{fn.__name__} d/d{i}: {g} vs finite difference {numeric}"
    if not tape_can_run(fn):
        return
    taped = tape_gradient(fn, [a.copy() if isinstance(a, np.ndarray) else a for a in args], wrts)
    if taped is not None:
        for i, g, t in zip(wrts, got, taped):
            assert _close(g, t, 1e-9), f"{fn.__name__} d/d{i}: {g} vs tape {t}"


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 60


def test_tape_agrees_on_a_good_share_of_the_corpus():
    """Guard against tape_gradient silently returning None for everything."""
    rng = np.random.default_rng(0)
    agreed = 0
    for fn, spec, wrt in CORPUS:
        args = []
        for s in spec.split():
            if s == "s":
                args.append(float(rng.uniform(0.5, 1.5)))
            elif s[0] in "vm":
                shape = (int(s[1:]),) if s[0] == "v" else (int(s[1]), int(s[2]))
                args.append(rng.uniform(0.5, 1.5, shape))
            else:
                args.append(int(s))
        if tape_can_run(fn) and tape_gradient(fn, args, wrt if isinstance(wrt, tuple) else (wrt,)) is not None:
            agreed += 1
    assert agreed >= 15
