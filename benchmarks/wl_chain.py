"""Per-op overhead: long chains of cheap ops, where the time is the library's, not NumPy's.

1. A 1000-op scalar chain (200 steps of x = sin(x)·1.0001 + 0.01·x·x, 5 recorded ops each):
   reverse mode on a GradientTape vs forward mode with a ForwardAccumulator (both give
   d x_final / d x0), against a hand-written forward and reverse sweep.
2. The 1000-step chain on a length-10 vector: d sum(x_final) / d x0 by the generated adjoint
   (dualtape.transforms.grad) and the tape, against the hand-written NumPy sweep.
3. Per recorded op on 64-wide arrays: the gradient through 200 ops y = y * c, time per op.
"""

import numpy as np

import dualtape as tf
import dualtape.transforms as dt
from dualtape import dnp

try:
    from . import peers
    from .harness import DUALTAPE, FLOOR, Case, Impl, peer_impls
    from .workloads_src import chain_np, floor_chain
except ImportError:
    import peers
    from harness import DUALTAPE, FLOOR, Case, Impl, peer_impls
    from workloads_src import chain_np, floor_chain

STEPS = {"scalar": 200, "vector": 1000}


def chain_impls(x0, steps, fori_jit):
    """Implementations shared by the scalar and the vector chain."""

    def dnp_chain(x):
        for _ in range(steps):
            x = dnp.sin(x) * 1.0001 + 0.01 * x * x
        return dnp.sum(x)

    def tape():
        x = tf.constant(np.asarray(x0, dtype=np.float64))

        def run():
            with tf.GradientTape() as t:
                t.watch(x)
                y = dnp_chain(x)
            return t.gradient(y, x)
        return run

    def functional():
        g = tf.grad(dnp_chain)
        x = np.asarray(x0, dtype=np.float64)
        return lambda: g(x)

    def source():
        g = dt.grad(chain_np)
        x = np.asarray(x0, dtype=np.float64)
        return lambda: g(x, steps)

    def compiled():  # numba, elementwise runs fused into single loops (transforms/jit/fusion.py)
        __import__("numba")  # (an optional extra: "not installed" without it)
        g = dt.grad(chain_np, jit=True)
        x = np.asarray(x0, dtype=np.float64) if np.ndim(x0) else float(x0)
        g(x, steps)  # compile
        return lambda: g(x, steps)

    def torch_grad():
        torch = peers.torch()

        def run():
            x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
            y = x
            for _ in range(steps):
                y = torch.sin(y) * 1.0001 + 0.01 * y * y
            y.sum().backward()
            return x.grad
        return run

    def ag_grad():
        autograd, anp = peers.autograd()

        def f(x):
            for _ in range(steps):
                x = anp.sin(x) * 1.0001 + 0.01 * x * x
            return anp.sum(x)
        g = autograd.grad(f)
        x = np.asarray(x0, dtype=np.float64)
        return lambda: g(x)

    def jax_grad(jit):
        def make():
            jax, jnp = peers.jax()

            def step(_, x):
                return jnp.sin(x) * 1.0001 + 0.01 * x * x

            def f(x):
                if jit and fori_jit:
                    return jnp.sum(jax.lax.fori_loop(0, steps, step, x))
                for i in range(steps):
                    x = step(i, x)
                return jnp.sum(x)
            g = jax.jit(jax.grad(f)) if jit else jax.grad(f)
            x = jnp.asarray(np.asarray(x0, dtype=np.float64))
            return lambda: jax.block_until_ready(g(x))
        return make

    jit_note = "lax.fori_loop" if fori_jit else "Python loop, unrolled at trace"
    return {"floor": Impl("hand-written NumPy sweep", FLOOR, lambda: lambda: floor_chain(x0, steps)),
            "tape": Impl("GradientTape", DUALTAPE, tape),
            "functional": Impl("dualtape.grad (functional)", DUALTAPE, functional),
            "source": Impl("dualtape.transforms.grad (generated)", DUALTAPE, source),
            "compiled": Impl("dualtape.transforms.grad(jit=True)", DUALTAPE, compiled, note="numba"),
            "peers": peer_impls(torch_grad, ag_grad, jax_grad,
                                ("torch eager backward", "autograd grad", "JAX eager grad", "JAX jit(grad)"),
                                jit_note=jit_note)}


def scalar_case(steps):
    x0 = 0.3
    impls = chain_impls(x0, steps, fori_jit=False)

    def accumulator():
        x = tf.constant(np.float64(x0))
        one = tf.constant(np.float64(1.0))

        def run():
            with tf.autodiff.ForwardAccumulator(x, one) as acc:
                y = x
                for _ in range(steps):
                    y = dnp.sin(y) * 1.0001 + 0.01 * y * y
            return acc.jvp(y)
        return run

    return Case(
        f"{5 * steps}-op scalar chain ({steps} steps × 5 ops), float64", rtol=1e-10, atol=1e-12,
        description="x = sin(x)·1.0001 + 0.01·x·x; d x_final / d x0.",
        impls=[impls["floor"], impls["tape"],
               Impl("ForwardAccumulator (forward mode)", DUALTAPE, accumulator),
               impls["functional"], impls["source"], impls["compiled"]] + impls["peers"])


def vector_case(steps, n):
    impls = chain_impls(np.full(n, 0.3), steps, fori_jit=True)
    return Case(
        f"{steps}-step chain on a length-{n} vector, float64", rtol=1e-10, atol=1e-12,
        description="x = sin(x)·1.0001 + 0.01·x·x elementwise; d sum(x_final) / d x0.",
        impls=[impls["floor"], impls["source"], impls["compiled"], impls["tape"], impls["functional"]]
        + impls["peers"])


def per_op_case(ops, width):
    c = 1.0001
    x0 = np.linspace(0.1, 1.0, width)

    def floor():
        y = x0
        for _ in range(ops):      # forward, as the tape would run it
            y = y * c
        g = np.ones(width)
        for _ in range(ops):      # backward: one multiply per op
            g = g * c
        return g

    def tape():
        x = tf.constant(x0)

        def run():
            with tf.GradientTape() as t:
                t.watch(x)
                y = x
                for _ in range(ops):
                    y = y * c
            return t.gradient(y, x)   # the gradient of sum(y)
        return run

    def functional():
        def f(x):
            for _ in range(ops):
                x = x * c
            return dnp.sum(x)
        g = tf.grad(f)
        return lambda: g(x0)

    def torch_grad():
        torch = peers.torch()

        def run():
            x = torch.tensor(x0, requires_grad=True)
            y = x
            for _ in range(ops):
                y = y * c
            y.sum().backward()
            return x.grad
        return run

    def ag_grad():
        autograd, anp = peers.autograd()

        def f(x):
            for _ in range(ops):
                x = x * c
            return anp.sum(x)
        g = autograd.grad(f)
        return lambda: g(x0)

    def jax_eager():
        jax, jnp = peers.jax()

        def f(x):
            for _ in range(ops):
                x = x * c
            return jnp.sum(x)
        g = jax.grad(f)
        x = jnp.asarray(x0)
        return lambda: jax.block_until_ready(g(x))

    return Case(
        f"Per recorded op, {width}-wide float64 arrays", rtol=1e-10, atol=1e-12, per=ops, unit="op",
        description=f"Gradient through {ops} ops y = y·c (forward + backward), time divided by {ops}.",
        impls=[Impl("hand-written NumPy (forward + backward multiply)", FLOOR, lambda: floor),
               Impl("GradientTape", DUALTAPE, tape),
               Impl("dualtape.grad (functional)", DUALTAPE, functional),
               Impl("torch eager backward", "torch", torch_grad),
               Impl("autograd grad", "autograd", ag_grad),
               Impl("JAX eager grad", "jax", jax_eager)])


def cases(quick):
    if quick:
        return [scalar_case(4), vector_case(5, 3), per_op_case(5, 4)]
    return [scalar_case(STEPS["scalar"]), vector_case(STEPS["vector"], 10), per_op_case(200, 64)]
