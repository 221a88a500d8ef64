"""Second-order benchmarks (issue #3): HVP of an MLP loss and a full n=200 Hessian.

Run: python benchmarks/bench_second_order.py. Peers (autograd, torch, jax) are timed only
where importable. Prints one table; times are medians in milliseconds.
"""

import timeit

import numpy as np

import dualtape as tf
from dualtape import dnp

RNG = np.random.default_rng(0)
SIZES = (64, 64, 64, 10)
BATCH = 32


def median_ms(fn, repeat=15):
    fn()
    number = max(1, int(0.05 / max(timeit.timeit(fn, number=1), 1e-6)))
    return 1e3 * float(np.median(timeit.repeat(fn, number=number, repeat=repeat))) / number


# -- MLP HVP -----------------------------------------------------------------------------------

def init_params():
    params = []
    for n_in, n_out in zip(SIZES[:-1], SIZES[1:]):
        params += [RNG.standard_normal((n_in, n_out)) / np.sqrt(n_in), RNG.standard_normal(n_out) * 0.1]
    return params


PARAMS = init_params()
VECS = [RNG.standard_normal(p.shape) for p in PARAMS]
X = RNG.standard_normal((BATCH, SIZES[0]))
Y = RNG.standard_normal((BATCH, SIZES[-1]))


def mlp_loss(*params):
    h = X
    for i in range(0, len(params) - 2, 2):
        h = dnp.tanh(h @ params[i] + params[i + 1])
    out = h @ params[-2] + params[-1]
    return dnp.sum((out - Y) ** 2) / BATCH


ALL = tuple(range(len(PARAMS)))
mlp_grad = tf.grad(mlp_loss, argnums=ALL)


def numpy_grad_and_hvp(params, vecs):
    """Hand-written backprop and Pearlmutter's R-op for the 3-layer tanh MLP."""
    w1, b1, w2, b2, w3, b3 = params
    v1, c1, v2, c2, v3, c3 = vecs
    h1 = np.tanh(X @ w1 + b1)
    h2 = np.tanh(h1 @ w2 + b2)
    out = h2 @ w3 + b3
    dout = 2 * (out - Y) / BATCH
    dh2 = dout @ w3.T
    da2 = dh2 * (1 - h2 * h2)
    dh1 = da2 @ w2.T
    da1 = dh1 * (1 - h1 * h1)
    # R-pass forward
    rh1 = (1 - h1 * h1) * (X @ v1 + c1)
    rh2 = (1 - h2 * h2) * (rh1 @ w2 + h1 @ v2 + c2)
    rout = rh2 @ w3 + h2 @ v3 + c3
    # R-pass backward
    rdout = 2 * rout / BATCH
    rdh2 = rdout @ w3.T + dout @ v3.T
    rda2 = rdh2 * (1 - h2 * h2) - 2 * dh2 * h2 * rh2
    rdh1 = rda2 @ w2.T + da2 @ v2.T
    rda1 = rdh1 * (1 - h1 * h1) - 2 * dh1 * h1 * rh1
    return [X.T @ rda1, rda1.sum(0), rh1.T @ da2 + h1.T @ rda2, rda2.sum(0),
            rh2.T @ dout + h2.T @ rdout, rdout.sum(0)]


def numpy_grad(params):
    w1, b1, w2, b2, w3, b3 = params
    h1 = np.tanh(X @ w1 + b1)
    h2 = np.tanh(h1 @ w2 + b2)
    dout = 2 * (h2 @ w3 + b3 - Y) / BATCH
    da2 = (dout @ w3.T) * (1 - h2 * h2)
    da1 = (da2 @ w2.T) * (1 - h1 * h1)
    return [X.T @ da1, da1.sum(0), h1.T @ da2, da2.sum(0), h2.T @ dout, dout.sum(0)]


# -- Hessian of an n=200 function --------------------------------------------------------------

N = 200
XH = np.linspace(-1.0, 1.0, N)


def coupled(x):
    return dnp.sum(dnp.sin(x) * x ** 2) + dnp.sum(x[:-1] * x[1:] ** 2)


def numpy_hessian(x):
    d = 2 * np.sin(x) + 4 * x * np.cos(x) - x * x * np.sin(x)
    d[1:] += 2 * x[:-1]
    off = 2 * x[1:]
    return np.diag(d) + np.diag(off, 1) + np.diag(off, -1)


def settle_allocator():
    """Free one 16 MB block first, so every implementation runs under the same malloc state.

    glibc raises its mmap threshold (and trim threshold, 2x) to the size of the largest
    mmapped block freed so far. Without this, whether the n=200 Hessian's 320 KB
    temporaries are returned to the OS after every call (a 3x slowdown from page faults)
    depended on what earlier code happened to allocate, not on the code being timed.
    """
    block = np.ones(2 * 10**6)
    del block


def main():
    settle_allocator()
    hv = tf.hvp(mlp_loss, tuple(PARAMS), tuple(VECS))
    for a, b in zip(hv, numpy_grad_and_hvp(PARAMS, VECS)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    H = tf.hessian(coupled)(XH)
    np.testing.assert_allclose(H, numpy_hessian(XH), rtol=1e-10, atol=1e-10)
    cases = [("MLP 64-64-64-10 loss, batch 32", "dualtape grad", lambda: mlp_grad(*PARAMS), 15),
             ("", "dualtape hvp (fwd-over-rev)", lambda: tf.hvp(mlp_loss, tuple(PARAMS), tuple(VECS)), 15),
             ("", "numpy hand-written grad", lambda: numpy_grad(PARAMS), 15),
             ("", "numpy hand-written hvp", lambda: numpy_grad_and_hvp(PARAMS, VECS), 15),
             (f"Hessian, n={N}", "dualtape hessian (one chunk)", lambda: tf.hessian(coupled)(XH), 15),
             ("", "dualtape hessian (chunk 50)", lambda: tf.hessian(coupled, chunk_size=50)(XH), 15),
             ("", "numpy closed form", lambda: numpy_hessian(XH), 15)]
    for case in cases:
        case[2]()
    # Warm every implementation up before timing any: the allocator's state (glibc raises
    # its mmap/trim thresholds after the first large free) then is the same for all of
    # them, instead of depending on which library ran, or was imported, first.
    for bench, impl, fn, repeat in peers():
        try:
            if fn is not None:
                fn()
        except Exception as error:  # installed, but failing at run time
            bench, impl, fn = "(skipped)", f"{impl}: {type(error).__name__}", None
        cases.append((bench, impl, fn, repeat))
    rows = []
    for bench, impl, fn, repeat in cases:
        rows.append((bench, impl, float("nan") if fn is None else median_ms(fn, repeat=repeat)))
    t_grad, t_hvp = rows[0][2], rows[1][2]
    rows.insert(2, ("", "  hvp / grad ratio", t_hvp / t_grad))
    print(f"{'benchmark':34s} {'implementation':34s} {'ms (ratio)':>12s}")
    for bench, impl, t in rows:
        print(f"{bench:34s} {impl:34s} {t:12.3f}")


def peers():
    cases = []
    try:
        import autograd
        import autograd.numpy as anp
        from autograd import hessian as ag_hessian

        def ag_loss(params):
            h = X
            for i in range(0, len(params) - 2, 2):
                h = anp.tanh(h @ params[i] + params[i + 1])
            return anp.sum((h @ params[-2] + params[-1] - Y) ** 2) / BATCH

        ag_grad = autograd.grad(ag_loss)
        ag_hvp = autograd.grad(lambda p, v: sum(anp.sum(g * w) for g, w in zip(ag_grad(p), v)))
        cases.append(("MLP 64-64-64-10 loss, batch 32", "autograd grad", lambda: ag_grad(PARAMS), 15))
        cases.append(("", "autograd hvp (rev-over-rev)", lambda: ag_hvp(PARAMS, VECS), 15))
        ag_f = lambda x: anp.sum(anp.sin(x) * x ** 2) + anp.sum(x[:-1] * x[1:] ** 2)
        cases.append((f"Hessian, n={N}", "autograd hessian", lambda: ag_hessian(ag_f)(XH), 5))
    except Exception as error:  # not installed, or installed without its native libraries
        cases.append(("(skipped)", f"autograd: {type(error).__name__}", None, 0))
    try:
        import torch
        # one thread, as NumPy runs with OPENBLAS_NUM_THREADS=1: at these sizes a second
        # thread only adds synchronisation, and on a shared machine its spin-waits
        # dominate (hundreds of ms per call when another process holds a core)
        torch.set_num_threads(1)
        params = [torch.tensor(p, requires_grad=True) for p in PARAMS]
        vecs = [torch.tensor(v) for v in VECS]
        xt, yt = torch.tensor(X), torch.tensor(Y)

        def t_loss(*ps):
            h = xt
            for i in range(0, len(ps) - 2, 2):
                h = torch.tanh(h @ ps[i] + ps[i + 1])
            return ((h @ ps[-2] + ps[-1] - yt) ** 2).sum() / BATCH

        def t_hvp():
            g = torch.autograd.grad(t_loss(*params), params, create_graph=True)
            return torch.autograd.grad(g, params, grad_outputs=vecs)

        cases.append(("MLP 64-64-64-10 loss, batch 32", "torch double backward hvp", t_hvp, 15))
        xh = torch.tensor(XH)
        t_f = lambda x: (torch.sin(x) * x ** 2).sum() + (x[:-1] * x[1:] ** 2).sum()
        cases.append((f"Hessian, n={N}", "torch hessian(vectorize=True)",
                      lambda: torch.autograd.functional.hessian(t_f, xh, vectorize=True), 15))
    except Exception as error:  # not installed, or installed without its native libraries
        cases.append(("(skipped)", f"torch: {type(error).__name__}", None, 0))
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        jparams = [jnp.asarray(p) for p in PARAMS]
        jvecs = [jnp.asarray(v) for v in VECS]

        def j_loss(ps):
            h = X
            for i in range(0, len(ps) - 2, 2):
                h = jnp.tanh(h @ ps[i] + ps[i + 1])
            return jnp.sum((h @ ps[-2] + ps[-1] - Y) ** 2) / BATCH

        j_hvp = lambda: jax.block_until_ready(jax.jvp(jax.grad(j_loss), (jparams,), (jvecs,))[1])
        cases.append(("MLP 64-64-64-10 loss, batch 32", "jax eager jvp(grad)", j_hvp, 5))
    except Exception as error:  # not installed, or installed without its native libraries
        cases.append(("(skipped)", f"jax: {type(error).__name__}", None, 0))
    return cases


if __name__ == "__main__":
    main()
