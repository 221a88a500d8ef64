"""The adjoint ODE of `scipy.integrate.odeint` for generated gradient code.

`ys = odeint(func, y0, t, args)` differentiated in reverse: the generated code calls
`odeint_adjoint` with `func`, the transformer's own adjoint of `func` (generated beside the
gradient, as for any called function) and the cotangent of `ys`. It integrates the augmented
system (y, a = dL/dy, dL/dt0, dL/dargs) backwards from t[-1] to t[0], one interval at a time,
adding each output row's cotangent on the way (Chen et al. 2018; autograd's
`autograd.scipy.integrate`, and dualtape's runtime version in lib/custom/odeint.py). Plain
NumPy and SciPy, like the rest of `runtime`, which re-exports it.
"""

import numpy as np

__all__ = ["odeint_adjoint", "odeint_tangent"]


def odeint_adjoint(func, func_vjp, seed, active, ys, y0, t, args, g, rtol=None, atol=None):
    """(cotangent of y0, of t, tuple of those of args[k] for k in `active`) for the cotangent `g`
    of ys = odeint(func, y0, t, args). `func_vjp(y, time, *args, **{seed: v})` returns
    (v^T df/dy, v^T df/dt, v^T df/dargs[k] for k in active). rtol / atol: the adjoint solve's
    (1e-10 unless the call gave its own)."""
    import scipy.integrate  # noqa: PLC0415 (SciPy is optional; the call that needs it has it)

    ys, times, g = np.asarray(ys, float), np.asarray(t, float), np.asarray(g, float)
    y_shape = ys.shape[1:]
    n = int(np.prod(y_shape))
    shapes = [[np.shape(leaf) for leaf in _leaves(args[k])] for k in active]  # args may nest: [(W, b), ...]
    sizes = [[int(np.prod(s)) for s in leaf_shapes] for leaf_shapes in shapes]
    templates = [args[k] for k in active]  # the adjoints' structure: func_vjp's (lists for a list of tuples)

    def parts(y, time, v):
        out = func_vjp(np.reshape(y, y_shape), time, *args, **{seed: np.reshape(v, y_shape)})
        by, bt, rest = out[0], out[1], out[2:]
        flat = []
        for j, (b, leaf_sizes) in enumerate(zip(rest, sizes)):
            leaves = _leaves(b) if _nested(b) else [b] * len(leaf_sizes)  # (a zero for a whole list)
            if _nested(b):
                templates[j] = b
            flat += [np.ravel(np.asarray(leaf, float)) * np.ones(size) for leaf, size in zip(leaves, leaf_sizes)]
        return (np.ravel(np.asarray(by, float)) * np.ones(n), float(np.sum(bt)),
                np.concatenate(flat) if flat else np.zeros(0))

    def rhs(y, time):
        return np.ravel(np.asarray(func(np.reshape(y, y_shape), time, *args), float))

    def augmented(state, time):
        y, adj = state[:n], state[n:2 * n]
        vy, vt, vargs = parts(y, time, -adj)
        return np.concatenate([rhs(y, time), vy, [vt], vargs])

    g = np.reshape(g, (len(times), n))
    flat_y = np.reshape(ys, (len(times), n))
    adj, adj_t0, adj_args = g[-1], 0.0, np.zeros(sum(map(sum, sizes)))
    time_grads = []
    for i in range(len(times) - 1, 0, -1):
        here = float(np.dot(rhs(flat_y[i], times[i]), g[i]))
        time_grads.append(here)
        adj_t0 -= here
        state = np.concatenate([flat_y[i], adj, [adj_t0], adj_args])
        out = scipy.integrate.odeint(augmented, state, np.array([times[i], times[i - 1]]),
                                     rtol=1e-10 if rtol is None else rtol, atol=1e-10 if atol is None else atol)[1]
        adj, adj_t0, adj_args = out[n:2 * n] + g[i - 1], out[2 * n], out[2 * n + 1:]
    time_grads.append(adj_t0)
    b_args, start = [], 0
    for template, leaf_shapes, leaf_sizes in zip(templates, shapes, sizes):
        pieces = []
        for shape, size in zip(leaf_shapes, leaf_sizes):
            piece = adj_args[start:start + size]
            pieces.append(np.reshape(piece, shape) if shape else float(piece[0]))
            start += size
        b_args.append(_rebuild(template, iter(pieces)) if _nested(template) else pieces[0])
    return np.reshape(adj, np.shape(y0)), np.reshape(time_grads[::-1], np.shape(t)), tuple(b_args)


def _nested(x):
    return isinstance(x, (list, tuple, dict))


def _leaves(x):
    """The leaves of nested lists, tuples and dicts (dict values in sorted-key order)."""
    if isinstance(x, dict):
        return [leaf for key in sorted(x) for leaf in _leaves(x[key])]
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in _leaves(item)]
    return [x]


def _rebuild(template, leaves):
    """`template`'s structure with its leaves taken, in order, from the iterator `leaves`."""
    if isinstance(template, dict):
        built = {key: None for key in template}
        for key in sorted(template):
            built[key] = _rebuild(template[key], leaves)
        return built
    if isinstance(template, (list, tuple)):
        items = [_rebuild(item, leaves) for item in template]
        return type(template)(*items) if hasattr(template, "_fields") else type(template)(items)
    return next(leaves)


def odeint_tangent(func, func_jvp, tparams, active, ys, y0, t, args, dy0, dt, dargs, rtol=None, atol=None):
    """The tangent of ys = odeint(func, y0, t, args) along dy0, dt and dargs (one per k in
    `active`; None: zero), by forward sensitivities: s' = J_y s + J_args dargs along the solution,
    from s(t0) = dy0 - f(y0, t0) dt0, plus f(y_i, t_i) dt_i at each output time.
    `func_jvp(y, time, *args, **{tparams[0]: s, tparams[1 + j]: dargs[j]})` returns (value, tangent)."""
    import scipy.integrate  # noqa: PLC0415 (SciPy is optional; the call that needs it has it)

    ys, times = np.asarray(ys, float), np.asarray(t, float)
    n = ys.shape[1]
    fixed = {p: d for p, d in zip(tparams[1:], dargs) if d is not None}

    def rhs(y, time):
        return np.ravel(np.asarray(func(y, time, *args), float)) * np.ones(n)

    def augmented(state, time):
        y, s = state[:n], state[n:]
        _, tangent = func_jvp(y, time, *args, **{tparams[0]: s}, **fixed)
        return np.concatenate([rhs(y, time), np.ravel(np.asarray(tangent, float)) * np.ones(n)])

    dts = np.zeros(len(times)) if dt is None else np.broadcast_to(np.asarray(dt, float), times.shape)
    s0 = (np.zeros(n) if dy0 is None else np.ravel(np.broadcast_to(np.asarray(dy0, float), np.shape(y0))) * np.ones(n))
    s0 = s0 - rhs(ys[0], times[0]) * dts[0]
    out = scipy.integrate.odeint(augmented, np.concatenate([ys[0], s0]), times,
                                 rtol=1e-10 if rtol is None else rtol, atol=1e-10 if atol is None else atol)
    return out[:, n:] + np.stack([rhs(ys[i], times[i]) * dts[i] for i in range(len(times))])
