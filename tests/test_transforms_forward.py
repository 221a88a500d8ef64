"""Forward mode and hvp by source transformation, over the reverse corpus.

Each corpus function through `dualtape.transforms.jvp` (against the source gradient, which
test_transforms_corpus checks against finite differences and the tape, and against central
differences directly) and through `dualtape.transforms.hvp` (against central differences of
the source gradient, and the runtime forward-over-reverse where the tape can run it).
"""

import inspect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dualtape.functional as F
import dualtape.transforms as dt
from test_transforms_corpus import _close, draw_args, tape_can_run
from test_transforms_corpus_functions import CORPUS

SETTINGS = settings(max_examples=2, deadline=None, derandomize=True)


def _copy(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _directions(args, wrts, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, np.shape(args[i])) if isinstance(args[i], np.ndarray) else float(rng.uniform(-1, 1))
            for i in wrts]


def _dot(a, b):
    return float(np.sum(np.asarray(a, dtype=float) * np.asarray(b, dtype=float)))


def _directional_fd(f, args, wrts, us, eps=1e-6):
    hi, lo = list(args), list(args)
    for i, u in zip(wrts, us):
        hi[i] = args[i] + eps * u
        lo[i] = args[i] - eps * u
    return (np.asarray(f(*hi), dtype=float) - np.asarray(f(*lo), dtype=float)) / (2 * eps)


@pytest.mark.parametrize("fn, spec, wrt", CORPUS, ids=[c[0].__name__ for c in CORPUS])
@SETTINGS
@given(data=st.data())
def test_corpus_forward(fn, spec, wrt, data):
    args = draw_args(data, spec)
    wrts = wrt if isinstance(wrt, tuple) else (wrt,)
    us = _directions(args, wrts)
    fj = dt.jvp(fn, wrt=wrt)
    value, tangent = fj(*_copy(args), tuple(us) if isinstance(wrt, tuple) else us[0])
    assert _close(value, fn(*_copy(args)), 1e-12)
    grads = dt.grad(fn, wrt=wrt)(*_copy(args))
    grads = grads if isinstance(wrt, tuple) else (grads,)
    reverse = sum(_dot(g, u) for g, u in zip(grads, us))
    assert _close(tangent, reverse, 1e-9), f"{fn.__name__}: forward {tangent} vs reverse {reverse}"
    numeric = _directional_fd(lambda *a: fn(*_copy(a)), args, wrts, us)
    assert _close(tangent, numeric, 1e-5), f"{fn.__name__}: forward {tangent} vs finite difference {numeric}"


@pytest.mark.parametrize("fn, spec, wrt", CORPUS, ids=[c[0].__name__ for c in CORPUS])
@SETTINGS
@given(data=st.data())
def test_corpus_hvp(fn, spec, wrt, data):
    args = draw_args(data, spec)
    wrts = wrt if isinstance(wrt, tuple) else (wrt,)
    us = _directions(args, wrts, seed=1)
    fh = dt.hvp(fn, wrt=wrt)
    got = fh(*_copy(args), tuple(us) if isinstance(wrt, tuple) else us[0])
    got = got if isinstance(wrt, tuple) else (got,)
    df = dt.grad(fn, wrt=wrt)

    def grad_flat(*a):
        g = df(*_copy(a))
        return np.concatenate([np.ravel(x) for x in (g if isinstance(wrt, tuple) else (g,))])

    numeric = _directional_fd(grad_flat, args, wrts, us)
    flat = np.concatenate([np.ravel(np.asarray(g, dtype=float)) for g in got])
    assert np.allclose(flat, numeric, rtol=1e-4, atol=1e-5), f"{fn.__name__}: hvp {flat} vs fd {numeric}"
    if tape_can_run(fn) and "] =" not in inspect.getsource(fn):  # the tape cannot write into tensors
        try:
            runtime = F.hvp(lambda *w: fn(*[w[wrts.index(i)] if i in wrts else a for i, a in enumerate(args)]),
                            tuple(np.float64(args[i]) for i in wrts), tuple(us))
        except Exception:  # noqa: BLE001 - the runtime modes cannot run this program
            return
        runtime = runtime if isinstance(runtime, tuple) else (runtime,)
        for g, r in zip(got, runtime):
            assert _close(g, r, 1e-8), f"{fn.__name__}: source hvp {g} vs runtime hvp {r}"
