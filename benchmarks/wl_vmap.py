"""Per-example gradients of the MLP 64-64-64-10 (tanh, squared error, float64), batch 128.

`dualtape.vmap(dualtape.grad(loss), in_axes=(None, 0, 0))` against a Python loop of
`dualtape.grad` over the examples (issue 22 asks for at least 10x), a hand-written NumPy
floor (the backward pass with one outer product per example, as einsum), and the peers'
vectorized maps: `jax.vmap(jax.grad)` eager and jit, `torch.func.vmap(torch.func.grad)`.
"""

import numpy as np

import dualtape as tf
from dualtape import dnp

try:
    from . import peers
    from .harness import DUALTAPE, FLOOR, Case, Impl
    from .wl_mlp import data
except ImportError:
    import peers
    from harness import DUALTAPE, FLOOR, Case, Impl
    from wl_mlp import data


def floor_per_example(params, x, y):
    """Each example's gradient of its own loss sum((out - y)^2), by hand, for the whole batch."""
    w1, b1, w2, b2, w3, b3 = params
    h1 = np.tanh(x @ w1 + b1)
    h2 = np.tanh(h1 @ w2 + b2)
    dout = 2 * (h2 @ w3 + b3 - y)
    da2 = (dout @ w3.T) * (1 - h2 * h2)
    da1 = (da2 @ w2.T) * (1 - h1 * h1)
    outer = lambda a, b: np.einsum("bi,bj->bij", a, b)
    return [outer(x, da1), da1, outer(h1, da2), da2, outer(h2, dout), dout]


def loss(params, x, y):
    """One example's loss, as a user writes it for vmap."""
    h = x
    for i in range(0, len(params) - 2, 2):
        h = dnp.tanh(h @ params[i] + params[i + 1])
    return dnp.sum((h @ params[-2] + params[-1] - y) ** 2)


def cases(quick):
    sizes, batch = ((8, 8, 8, 3), 8) if quick else ((64, 64, 64, 10), 128)
    params, _, x, y = data(sizes, batch)
    params = tuple(params)
    label = "-".join(map(str, sizes))

    def vmap_grad():
        g = tf.vmap(tf.grad(loss), in_axes=(None, 0, 0))
        return lambda: list(g(params, x, y))

    def loop_grad():
        g = tf.grad(loss)

        def run():
            rows = [g(params, x[k], y[k]) for k in range(batch)]
            return [np.stack([r[j] for r in rows]) for j in range(len(params))]
        return run

    def jax_vmap(jit):
        def make():
            jax, jnp = peers.jax()
            ps = tuple(jnp.asarray(p) for p in params)
            xj, yj = jnp.asarray(x), jnp.asarray(y)

            def jloss(q, xe, ye):
                h = xe
                for i in range(0, len(q) - 2, 2):
                    h = jnp.tanh(h @ q[i] + q[i + 1])
                return jnp.sum((h @ q[-2] + q[-1] - ye) ** 2)
            g = jax.vmap(jax.grad(jloss), in_axes=(None, 0, 0))
            g = jax.jit(g) if jit else g
            return lambda: list(jax.block_until_ready(g(ps, xj, yj)))
        return make

    def torch_vmap():
        torch = peers.torch()
        from torch.func import grad, vmap
        ps = tuple(torch.tensor(p) for p in params)
        xt, yt = torch.tensor(x), torch.tensor(y)

        def tloss(q, xe, ye):
            h = xe
            for i in range(0, len(q) - 2, 2):
                h = torch.tanh(h @ q[i] + q[i + 1])
            return ((h @ q[-2] + q[-1] - ye) ** 2).sum()
        g = vmap(grad(tloss), in_dims=(None, 0, 0))
        return lambda: [t.numpy() for t in g(ps, xt, yt)]

    return [Case(
        f"MLP {label} per-example gradients, batch {batch}", rtol=1e-9, atol=1e-12,
        description="Each example's gradient w.r.t. all six parameter arrays (float64), stacked.",
        impls=[Impl("hand-written NumPy (einsum outer products)", FLOOR,
                    lambda: lambda: floor_per_example(params, x, y)),
               Impl("dualtape.vmap(dualtape.grad)", DUALTAPE, vmap_grad),
               Impl("Python loop of dualtape.grad", DUALTAPE, loop_grad),
               Impl("torch.func.vmap(grad)", "torch", torch_vmap),
               Impl("JAX eager vmap(grad)", "jax", jax_vmap(False)),
               Impl("JAX jit(vmap(grad))", "jax.jit", jax_vmap(True))])]
