"""RK4 damped pendulum, 1000 steps: d(final angle) / d(damping, length).

The program (workloads_src.py) is written once with `math.sin` on Python floats for
dualtape.transforms (its generated adjoint), and once generic in `sin` for the runtime modes
and the peers. The
floor is a hand-written adjoint on Python floats (store the states, recompute each step's
stages backwards). JAX jit runs the same step in lax.fori_loop (a 1000-step Python loop
would unroll into a 40k-op trace).
"""

import numpy as np

import dualtape as tf
import dualtape.transforms as dt

try:
    from . import peers
    from .harness import DUALTAPE, FLOOR, Case, Impl, peer_impls
    from .workloads_src import DT, G, pendulum, pendulum_adjoint_by_hand, pendulum_with, rk4_step  # noqa: F401
except ImportError:
    import peers
    from harness import DUALTAPE, FLOOR, Case, Impl, peer_impls
    from workloads_src import DT, G, pendulum, pendulum_adjoint_by_hand, pendulum_with, rk4_step  # noqa: F401

def cases(quick):
    steps = 5 if quick else 1000
    args = (0.3, 1.2)

    def source():
        g = dt.grad(pendulum, wrt=(0, 1))
        return lambda: g(*args, steps)

    def compiled():
        __import__("numba")  # (an optional extra: "not installed" without it)
        g = dt.grad(pendulum, wrt=(0, 1), jit=True)
        g(*args, steps)  # compile (wl_jit.py times the compilation)
        return lambda: g(*args, steps)

    def tape():
        d = tf.constant(np.float64(args[0]))
        ell = tf.constant(np.float64(args[1]))

        def run():
            with tf.GradientTape() as t:
                t.watch(d)
                t.watch(ell)
                y = pendulum_with(np.sin, d, ell, steps)
            return t.gradient(y, [d, ell])
        return run

    def functional():
        g = tf.grad(lambda d, ell: pendulum_with(np.sin, d, ell, steps), argnums=(0, 1))
        return lambda: g(*args)

    def torch_grad():
        torch = peers.torch()

        def run():
            d = torch.tensor(args[0], dtype=torch.float64, requires_grad=True)
            ell = torch.tensor(args[1], dtype=torch.float64, requires_grad=True)
            y = pendulum_with(torch.sin, d, ell, steps, torch.tensor(1.0, dtype=torch.float64),
                              torch.tensor(0.0, dtype=torch.float64))
            return torch.autograd.grad(y, [d, ell])
        return run

    def ag_grad():
        autograd, anp = peers.autograd()
        g = autograd.grad(lambda d, ell: pendulum_with(anp.sin, d, ell, steps), argnum=(0, 1))
        return lambda: g(*args)

    def jax_grad(jit):
        def make():
            jax, jnp = peers.jax()

            def f(damping, length):
                if not jit:
                    return pendulum_with(jnp.sin, damping, length, steps)
                state = (jnp.float64(1.0), jnp.float64(0.0))
                state = jax.lax.fori_loop(
                    0, steps, lambda _, s: rk4_step(jnp.sin, damping, length, *s), state)
                return state[0]
            g = jax.grad(f, argnums=(0, 1))
            g = jax.jit(g) if jit else g
            a = (jnp.float64(args[0]), jnp.float64(args[1]))
            return lambda: jax.block_until_ready(g(*a))
        return make

    return [Case(
        f"RK4 pendulum, {steps} steps, gradient w.r.t. (damping, length)", rtol=1e-9, atol=1e-12,
        description="Scalar float64 code; the generated adjoint runs on `math.sin`, the runtime modes on `np.sin`.",
        impls=[Impl("hand-written adjoint (Python floats)", FLOOR, lambda: lambda: pendulum_adjoint_by_hand(*args, steps)),
               Impl("dualtape.transforms.grad (generated)", DUALTAPE, source),
               Impl("dualtape.transforms.grad(jit=True)", DUALTAPE, compiled, note="native (transforms/jit/native); compile time: wl_jit.py"),
               Impl("GradientTape", DUALTAPE, tape),
               Impl("dualtape.grad (functional)", DUALTAPE, functional)]
        + peer_impls(torch_grad, ag_grad, jax_grad,
                     ("torch eager", "autograd grad", "JAX eager grad", "JAX jit(grad)"), jit_note="lax.fori_loop"))]
