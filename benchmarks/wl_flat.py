"""MLP 64-64-64-10 with its parameters in one flat vector (tanh, squared error, batch 32, float64).

The loss slices and reshapes each layer's weights out of `theta` (`W1 = theta[0:i1].reshape(...)`,
offsets computed from the shapes), as optimizers over one flat vector (L-BFGS, scipy.optimize)
want. Gradient and Hessian-vector product w.r.t. theta: dualtape.transforms.grad / hvp (the
generated adjoint writes each slice's adjoint into one flat array: optimize/slices.py), against a
hand-written NumPy floor (wl_mlp's backward pass and R-op, written into one flat array) and
jax.jit. Run alone: `python benchmarks/wl_flat.py [--quick] [--rounds N]` (pinned, one thread).
"""

if __name__ == "__main__":
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import run_all
    PINNING = run_all.pin()  # one thread per library, pinned to CPU 0 (re-executes under taskset)

import numpy as np

import dualtape.transforms as dt

try:
    from . import peers
    from .harness import DUALTAPE, FLOOR, Case, Impl
    from .wl_mlp import data, floor_grad, floor_hvp
    from .workloads_src import HIDDEN, flat_mlp_loss
except ImportError:
    import peers
    from harness import DUALTAPE, FLOOR, Case, Impl
    from wl_mlp import data, floor_grad, floor_hvp
    from workloads_src import HIDDEN, flat_mlp_loss


def flat(arrays):
    """The arrays' items in one vector, in order (the floors' output and theta itself)."""
    out = np.empty(sum(a.size for a in arrays))
    start = 0
    for a in arrays:
        out[start:start + a.size] = a.ravel()
        start += a.size
    return out


def cases(quick):
    sizes, batch = ((8, HIDDEN, HIDDEN, 3), 4) if quick else ((64, HIDDEN, HIDDEN, 10), 32)
    params, vecs, x, y = data(sizes, batch)
    theta, v = flat(params), flat(vecs)
    label = "-".join(map(str, sizes))

    def source_grad():
        g = dt.grad(flat_mlp_loss, wrt=0)
        return lambda: g(theta, x, y)

    def source_hvp():
        h = dt.hvp(flat_mlp_loss, wrt=0)
        return lambda: h(theta, x, y, v)

    def jax_setup():
        jax, jnp = peers.jax()
        return jax, jnp.asarray(theta), jnp.asarray(v), jnp.asarray(x), jnp.asarray(y)

    def jax_grad():
        jax, t, _, xj, yj = jax_setup()
        g = jax.jit(jax.grad(flat_mlp_loss_jax(jax)))
        return lambda: jax.block_until_ready(g(t, xj, yj))

    def jax_hvp():
        jax, t, vj, xj, yj = jax_setup()
        loss = flat_mlp_loss_jax(jax)
        h = jax.jit(lambda t, v, xj, yj: jax.jvp(lambda s: jax.grad(loss)(s, xj, yj), (t,), (v,))[1])
        return lambda: jax.block_until_ready(h(t, vj, xj, yj))

    grad_case = Case(
        f"Flat-parameter MLP {label} gradient, batch {batch}", rtol=1e-9, atol=1e-12,
        description="Gradient w.r.t. one flat parameter vector that the loss slices and reshapes (float64).",
        impls=[Impl("hand-written NumPy backward, written into one flat array", FLOOR,
                    lambda: lambda: flat(floor_grad(params, x, y))),
               Impl("dualtape.transforms.grad (generated)", DUALTAPE, source_grad),
               Impl("JAX jit(grad)", "jax.jit", jax_grad)])
    hvp_case = Case(
        f"Flat-parameter MLP {label} Hessian-vector product, batch {batch}", rtol=1e-9, atol=1e-12,
        description="H·v w.r.t. one flat parameter vector (float64).",
        impls=[Impl("hand-written NumPy R-op, written into one flat array", FLOOR,
                    lambda: lambda: flat(floor_hvp(params, vecs, x, y))),
               Impl("dualtape.transforms.hvp (generated)", DUALTAPE, source_hvp),
               Impl("JAX jit(jvp(grad))", "jax.jit", jax_hvp)])
    return [grad_case, hvp_case]


def flat_mlp_loss_jax(jax):
    """flat_mlp_loss in jax.numpy (the same slices and reshapes)."""
    jnp = jax.numpy

    def loss(theta, x, y):
        n_in, n_out, hidden = x.shape[1], y.shape[1], HIDDEN
        i1 = n_in * hidden
        i2 = i1 + hidden
        i3 = i2 + hidden * hidden
        i4 = i3 + hidden
        i5 = i4 + hidden * n_out
        h1 = jnp.tanh(x @ theta[0:i1].reshape(n_in, hidden) + theta[i1:i2])
        h2 = jnp.tanh(h1 @ theta[i2:i3].reshape(hidden, hidden) + theta[i3:i4])
        out = h2 @ theta[i4:i5].reshape(hidden, n_out) + theta[i5:i5 + n_out]
        return jnp.sum((out - y) ** 2) / x.shape[0]
    return loss


def main(argv=None):
    import harness
    harness.main("wl_flat", cases, PINNING, argv, max_calls=400)


if __name__ == "__main__":
    main()
