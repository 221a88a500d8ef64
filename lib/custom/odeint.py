"""scipy.integrate.odeint with a reverse-mode gradient by the adjoint ODE, as autograd's.

`odeint(func, y0, t, args=())` solves dy/dt = func(y, t, *args) with SciPy and records one
primitive. Its VJP integrates the augmented system (y, a = dL/dy, dL/dt, dL/dargs) backwards
from t[-1] to t[0], one interval at a time, adding the cotangent of each output row on the
way (Chen et al. 2018; autograd's `autograd.scipy.integrate`). `func` is differentiated by
dualtape's own vjp, so it may be any NumPy code dualtape can trace. Reverse mode only (the
functional API's grad / vjp and the tape). The source transformer differentiates this odeint and
SciPy's own with its own adjoint of `func` (transforms/calls/odeint.py, runtime/odeint.py).
"""

import numpy as np

from ..core import dnp, nest
from ..core.traced import Traced
from ..functional.reverse_mode import vjp as _vjp
from .primitives import defvjp, primitive


def _integrate():
    import scipy.integrate  # noqa: PLC0415 - SciPy is optional and slow to import
    return scipy.integrate


class _Leaf:
    """Where a numeric leaf of odeint's args sits in its skeleton (cut from the flat vector)."""


_LEAF = _Leaf()


def _numeric(leaf):
    return isinstance(leaf, Traced) or np.asarray(leaf).dtype.kind in "fc"


def _unflatten(flat, shapes, skeleton):
    """`args` again: its numeric leaves cut from `flat` (to their shapes) into the skeleton, the
    nested lists, tuples and dicts of args (a neural ODE's [(W, b), ...]) holding _LEAF there."""
    leaves, start = [], 0
    for shape in shapes:
        size = int(np.prod(shape))
        leaves.append(np.reshape(flat[start:start + size], shape))
        start += size
    it = iter(leaves)
    return nest.tree_map(lambda x: next(it) if x is _LEAF else x, skeleton)


def _solve(y0, t, flat_args, *, func, shapes, options, skeleton):
    args = _unflatten(flat_args, shapes, skeleton)
    return _integrate().odeint(func, y0, t, args=args, **dict(options))


ODEINT = primitive(_solve)


def _odeint_vjp(yt, y0, t, flat_args, *, func, shapes, options, skeleton):
    rtol = dict(options).get("rtol", 1e-10)
    atol = dict(options).get("atol", 1e-10)
    n = np.size(y0)

    def flat_func(y, time, flat):
        return func(y, time, *_unflatten(flat, shapes, skeleton))

    def augmented(state, time, flat):
        y, adj = state[:n], state[n:2 * n]
        dy, pullback = _vjp(flat_func, y, time, flat)
        vy, vt, vargs = pullback(-adj)
        return np.concatenate([np.asarray(dy, float), np.asarray(vy, float), np.ravel(vt), np.ravel(vargs)])

    def pullback(g):
        g = np.asarray(g, dtype=float)
        yt_plain, times = np.asarray(yt, float), np.asarray(t, float)
        flat = np.asarray(flat_args, float)
        adj, adj_t0, adj_args = g[-1], 0.0, np.zeros_like(flat)
        time_grads = []
        for i in range(len(times) - 1, 0, -1):
            here = float(np.dot(flat_func(yt_plain[i], times[i], flat), g[i]))
            time_grads.append(here)
            adj_t0 -= here
            state = np.concatenate([yt_plain[i], adj, [adj_t0], adj_args])
            out = _integrate().odeint(augmented, state, np.array([times[i], times[i - 1]]), args=(flat,),
                                      rtol=rtol, atol=atol)[1]
            adj, adj_t0, adj_args = out[n:2 * n] + g[i - 1], out[2 * n], out[2 * n + 1:]
        time_grads.append(adj_t0)
        return (np.reshape(adj, np.shape(y0)), np.array(time_grads[::-1]), adj_args)

    return pullback


defvjp(ODEINT, lambda ans, y0, t, flat, **kw: lambda g: _odeint_vjp(ans, y0, t, flat, **kw)(g)[0],
       lambda ans, y0, t, flat, **kw: lambda g: _odeint_vjp(ans, y0, t, flat, **kw)(g)[1],
       lambda ans, y0, t, flat, **kw: lambda g: _odeint_vjp(ans, y0, t, flat, **kw)(g)[2])


def odeint(func, y0, t, args=(), **options):
    """scipy.integrate.odeint(func, y0, t, args): differentiable in y0, t and args, whose entries
    may be arrays, floats or nested lists, tuples and dicts of them (a neural ODE's parameters
    [(W, b), ...]: the gradient has the same structure); int and other leaves stay constants.

    The gradient runs the adjoint ODE backwards (rtol / atol of the adjoint solve default
    to 1e-10; pass them to tighten the forward solve as well)."""
    args = tuple(args)
    numeric = [leaf for leaf in nest.tree_flatten(args) if _numeric(leaf)]
    skeleton = nest.tree_map(lambda leaf: _LEAF if _numeric(leaf) else leaf, args)
    shapes = tuple(tuple(np.shape(a)) for a in numeric)
    flat = dnp.concatenate([dnp.ravel(a) for a in numeric]) if numeric else np.zeros(0)
    return ODEINT(y0, t, flat, func=func, shapes=shapes, options=tuple(sorted(options.items())),
                  skeleton=skeleton)
