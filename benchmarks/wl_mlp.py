"""MLP 64-64-64-10 (tanh, squared error, batch 32, float64): loss gradient and HVP.

Gradient: dualtape.grad (functional), GradientTape, dualtape.transforms.grad (generated
adjoint), against a hand-written NumPy backward pass and the peers. HVP: dualtape.hvp
(forward over reverse), ForwardAccumulator around a GradientTape, dualtape.transforms.hvp,
against hand-written backprop + Pearlmutter's R-op, torch double backward, autograd
reverse-over-reverse, JAX jvp(grad).
"""

import numpy as np

import dualtape as tf
import dualtape.transforms as dt
from dualtape import dnp

try:
    from . import peers
    from .harness import DUALTAPE, FLOOR, Case, Impl, peer_impls
except ImportError:
    import peers
    from harness import DUALTAPE, FLOOR, Case, Impl, peer_impls


def np_loss(w1, b1, w2, b2, w3, b3, x, y):
    """The loss in plain NumPy, as dualtape.transforms reads it."""
    h1 = np.tanh(x @ w1 + b1)
    h2 = np.tanh(h1 @ w2 + b2)
    out = h2 @ w3 + b3
    return np.sum((out - y) ** 2) / x.shape[0]


def floor_grad(params, x, y):
    w1, b1, w2, b2, w3, b3 = params
    h1 = np.tanh(x @ w1 + b1)
    h2 = np.tanh(h1 @ w2 + b2)
    dout = 2 * (h2 @ w3 + b3 - y) / x.shape[0]
    da2 = (dout @ w3.T) * (1 - h2 * h2)
    da1 = (da2 @ w2.T) * (1 - h1 * h1)
    return [x.T @ da1, da1.sum(0), h1.T @ da2, da2.sum(0), h2.T @ dout, dout.sum(0)]


def floor_hvp(params, vecs, x, y):
    """Hand-written backprop and Pearlmutter's R-op for the 3-layer tanh MLP."""
    w1, b1, w2, b2, w3, b3 = params
    v1, c1, v2, c2, v3, c3 = vecs
    n = x.shape[0]
    h1 = np.tanh(x @ w1 + b1)
    h2 = np.tanh(h1 @ w2 + b2)
    out = h2 @ w3 + b3
    dout = 2 * (out - y) / n
    dh2 = dout @ w3.T
    da2 = dh2 * (1 - h2 * h2)
    dh1 = da2 @ w2.T
    rh1 = (1 - h1 * h1) * (x @ v1 + c1)
    rh2 = (1 - h2 * h2) * (rh1 @ w2 + h1 @ v2 + c2)
    rout = rh2 @ w3 + h2 @ v3 + c3
    rdout = 2 * rout / n
    rdh2 = rdout @ w3.T + dout @ v3.T
    rda2 = rdh2 * (1 - h2 * h2) - 2 * dh2 * h2 * rh2
    rdh1 = rda2 @ w2.T + da2 @ v2.T
    rda1 = rdh1 * (1 - h1 * h1) - 2 * dh1 * h1 * rh1
    return [x.T @ rda1, rda1.sum(0), rh1.T @ da2 + h1.T @ rda2, rda2.sum(0),
            rh2.T @ dout + h2.T @ rdout, rdout.sum(0)]


def data(sizes, batch):
    rng = np.random.default_rng(0)
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        params += [rng.standard_normal((n_in, n_out)) / np.sqrt(n_in), rng.standard_normal(n_out) * 0.1]
    vecs = [rng.standard_normal(p.shape) for p in params]
    return params, vecs, rng.standard_normal((batch, sizes[0])), rng.standard_normal((batch, sizes[-1]))


def cases(quick):
    sizes, batch = ((8, 8, 8, 3), 4) if quick else ((64, 64, 64, 10), 32)
    params, vecs, x, y = data(sizes, batch)
    wrt = tuple(range(len(params)))
    label = "-".join(map(str, sizes))

    def dnp_loss(*ps):
        h = x
        for i in range(0, len(ps) - 2, 2):
            h = dnp.tanh(h @ ps[i] + ps[i + 1])
        return dnp.sum((h @ ps[-2] + ps[-1] - y) ** 2) / batch

    # -- dualtape ------------------------------------------------------------------------------
    def functional_grad():
        g = tf.grad(dnp_loss, argnums=wrt)
        return lambda: g(*params)

    def tape_grad():
        tensors = [tf.constant(p) for p in params]

        def run():
            with tf.GradientTape() as tape:
                tape.watch(tensors)
                loss = dnp_loss(*tensors)
            return tape.gradient(loss, tensors)
        return run

    def source_grad():
        g = dt.grad(np_loss, wrt=wrt)
        return lambda: g(*params, x, y)

    def functional_hvp():
        p, v = tuple(params), tuple(vecs)
        return lambda: tf.hvp(dnp_loss, p, v)

    def accumulator_hvp():
        tensors = [tf.constant(p) for p in params]
        tangents = [tf.constant(v) for v in vecs]

        def run():
            with tf.autodiff.ForwardAccumulator(tensors, tangents) as acc:
                with tf.GradientTape() as tape:
                    tape.watch(tensors)
                    loss = dnp_loss(*tensors)
                g = tape.gradient(loss, tensors)
            return acc.jvp(g)
        return run

    def source_hvp():
        h = dt.hvp(np_loss, wrt=wrt)
        v = tuple(vecs)
        return lambda: h(*params, x, y, v)

    # -- peers ---------------------------------------------------------------------------------
    def torch_setup():
        torch = peers.torch()
        ps = [torch.tensor(p, requires_grad=True) for p in params]
        vs = [torch.tensor(v) for v in vecs]
        xt, yt = torch.tensor(x), torch.tensor(y)

        def loss(*q):
            h = xt
            for i in range(0, len(q) - 2, 2):
                h = torch.tanh(h @ q[i] + q[i + 1])
            return ((h @ q[-2] + q[-1] - yt) ** 2).sum() / batch
        return torch, ps, vs, loss

    def torch_grad():
        torch, ps, _, loss = torch_setup()
        return lambda: torch.autograd.grad(loss(*ps), ps)

    def torch_hvp():
        torch, ps, vs, loss = torch_setup()

        def run():
            g = torch.autograd.grad(loss(*ps), ps, create_graph=True)
            return torch.autograd.grad(g, ps, grad_outputs=vs)
        return run

    def ag_setup():
        autograd, anp = peers.autograd()

        def loss(ps):
            h = x
            for i in range(0, len(ps) - 2, 2):
                h = anp.tanh(h @ ps[i] + ps[i + 1])
            return anp.sum((h @ ps[-2] + ps[-1] - y) ** 2) / batch
        return autograd, anp, loss

    def ag_grad():
        autograd, _, loss = ag_setup()
        g = autograd.grad(loss)
        return lambda: g(params)

    def ag_hvp():
        autograd, anp, loss = ag_setup()
        g = autograd.grad(loss)
        h = autograd.grad(lambda p, v: sum(anp.sum(a * b) for a, b in zip(g(p), v)))
        return lambda: h(params, vecs)

    def jax_setup():
        jax, jnp = peers.jax()
        ps = [jnp.asarray(p) for p in params]
        vs = [jnp.asarray(v) for v in vecs]
        xj, yj = jnp.asarray(x), jnp.asarray(y)

        def loss(q):
            h = xj
            for i in range(0, len(q) - 2, 2):
                h = jnp.tanh(h @ q[i] + q[i + 1])
            return jnp.sum((h @ q[-2] + q[-1] - yj) ** 2) / batch
        return jax, ps, vs, loss

    def jax_grad(jit):
        def make():
            jax, ps, _, loss = jax_setup()
            g = jax.grad(loss)
            g = jax.jit(g) if jit else g
            return lambda: jax.block_until_ready(g(ps))
        return make

    def jax_hvp(jit):
        def make():
            jax, ps, vs, loss = jax_setup()

            def h(p, v):
                return jax.jvp(jax.grad(loss), (p,), (v,))[1]
            h = jax.jit(h) if jit else h
            return lambda: jax.block_until_ready(h(ps, vs))
        return make

    grad_case = Case(
        f"MLP {label} gradient, batch {batch}", rtol=1e-9, atol=1e-12,
        description="Gradient of the loss w.r.t. all six parameter arrays (float64).",
        impls=[Impl("hand-written NumPy backward", FLOOR, lambda: lambda: floor_grad(params, x, y)),
               Impl("dualtape.grad (functional)", DUALTAPE, functional_grad),
               Impl("GradientTape", DUALTAPE, tape_grad),
               Impl("dualtape.transforms.grad (generated)", DUALTAPE, source_grad)]
        + peer_impls(torch_grad, ag_grad, jax_grad,
                     ("torch eager autograd.grad", "autograd grad", "JAX eager grad", "JAX jit(grad)")))
    hvp_case = Case(
        f"MLP {label} Hessian-vector product, batch {batch}", rtol=1e-9, atol=1e-12,
        description="H·v w.r.t. all six parameter arrays (float64).",
        impls=[Impl("hand-written NumPy R-op", FLOOR, lambda: lambda: floor_hvp(params, vecs, x, y)),
               Impl("dualtape.hvp (fwd-over-rev)", DUALTAPE, functional_hvp),
               Impl("ForwardAccumulator over GradientTape", DUALTAPE, accumulator_hvp),
               Impl("dualtape.transforms.hvp (generated)", DUALTAPE, source_hvp)]
        + peer_impls(torch_hvp, ag_hvp, jax_hvp,
                     ("torch double backward", "autograd rev-over-rev", "JAX eager jvp(grad)", "JAX jit(jvp(grad))")))
    return [grad_case, hvp_case]
