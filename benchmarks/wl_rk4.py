"""RK4 damped pendulum, 1000 steps: d(final angle) / d(damping, length).

The program is written once with `math.sin` on Python floats for dualtape.transforms (its
generated adjoint), and once generic in `sin` for the runtime modes and the peers. The
floor is a hand-written adjoint on Python floats (store the states, recompute each step's
stages backwards). JAX jit runs the same step in lax.fori_loop (a 1000-step Python loop
would unroll into a 40k-op trace).
"""

import math

import numpy as np

import dualtape as tf
import dualtape.transforms as dt

try:
    from . import peers
    from .harness import DUALTAPE, FLOOR, Case, Impl
except ImportError:
    import peers
    from harness import DUALTAPE, FLOOR, Case, Impl

G = 9.81
DT = 0.01


def pendulum(damping, length, steps, theta0=1.0, omega0=0.0):
    theta = theta0
    omega = omega0
    for _ in range(steps):
        k1t = omega
        k1w = -G / length * math.sin(theta) - damping * omega
        k2t = omega + 0.5 * DT * k1w
        k2w = -G / length * math.sin(theta + 0.5 * DT * k1t) - damping * k2t
        k3t = omega + 0.5 * DT * k2w
        k3w = -G / length * math.sin(theta + 0.5 * DT * k2t) - damping * k3t
        k4t = omega + DT * k3w
        k4w = -G / length * math.sin(theta + DT * k3t) - damping * k4t
        theta = theta + DT / 6.0 * (k1t + 2.0 * k2t + 2.0 * k3t + k4t)
        omega = omega + DT / 6.0 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w)
    return theta


def pendulum_with(sin, damping, length, steps, theta0=1.0, omega0=0.0):
    """The same RK4 program for the runtime modes, with the `sin` of a given library."""
    theta = theta0
    omega = omega0
    for _ in range(steps):
        k1t = omega
        k1w = -G / length * sin(theta) - damping * omega
        k2t = omega + 0.5 * DT * k1w
        k2w = -G / length * sin(theta + 0.5 * DT * k1t) - damping * k2t
        k3t = omega + 0.5 * DT * k2w
        k3w = -G / length * sin(theta + 0.5 * DT * k2t) - damping * k3t
        k4t = omega + DT * k3w
        k4w = -G / length * sin(theta + DT * k3t) - damping * k4t
        theta = theta + DT / 6.0 * (k1t + 2.0 * k2t + 2.0 * k3t + k4t)
        omega = omega + DT / 6.0 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w)
    return theta


def pendulum_adjoint_by_hand(damping, length, steps, theta0=1.0, omega0=0.0):
    """What a careful person writes: store the states, recompute each step's stages backwards."""
    c = -G / length
    h = 0.5 * DT
    states = []
    theta, omega = theta0, omega0
    for _ in range(steps):
        states.append((theta, omega))
        k1t = omega
        k1w = c * math.sin(theta) - damping * omega
        k2t = omega + h * k1w
        k2w = c * math.sin(theta + h * k1t) - damping * k2t
        k3t = omega + h * k2w
        k3w = c * math.sin(theta + h * k2t) - damping * k3t
        k4t = omega + DT * k3w
        k4w = c * math.sin(theta + DT * k3t) - damping * k4t
        theta = theta + DT / 6.0 * (k1t + 2.0 * k2t + 2.0 * k3t + k4t)
        omega = omega + DT / 6.0 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w)
    btheta, bomega, bdamping, bc = 1.0, 0.0, 0.0, 0.0
    w6 = DT / 6.0
    for theta, omega in reversed(states):
        k1t = omega
        s1 = math.sin(theta)
        k1w = c * s1 - damping * omega
        k2t = omega + h * k1w
        a2 = theta + h * k1t
        s2 = math.sin(a2)
        k2w = c * s2 - damping * k2t
        k3t = omega + h * k2w
        a3 = theta + h * k2t
        s3 = math.sin(a3)
        k3w = c * s3 - damping * k3t
        k4t = omega + DT * k3w
        a4 = theta + DT * k3t
        s4 = math.sin(a4)
        # theta' = theta + w6 (k1t + 2 k2t + 2 k3t + k4t); omega' likewise with the k*w
        bk1t, bk2t, bk3t, bk4t = w6 * btheta, 2 * w6 * btheta, 2 * w6 * btheta, w6 * btheta
        bk1w, bk2w, bk3w, bk4w = w6 * bomega, 2 * w6 * bomega, 2 * w6 * bomega, w6 * bomega
        bth, bom = btheta, bomega
        # k4w = c s4 - damping k4t
        bc += bk4w * s4
        ba4 = bk4w * c * math.cos(a4)
        bdamping -= bk4w * k4t
        bk4t -= bk4w * damping
        bth += ba4
        bk3t += ba4 * DT
        bom += bk4t
        bk3w += bk4t * DT
        # k3w
        bc += bk3w * s3
        ba3 = bk3w * c * math.cos(a3)
        bdamping -= bk3w * k3t
        bk3t -= bk3w * damping
        bth += ba3
        bk2t += ba3 * h
        bom += bk3t
        bk2w += bk3t * h
        # k2w
        bc += bk2w * s2
        ba2 = bk2w * c * math.cos(a2)
        bdamping -= bk2w * k2t
        bk2t -= bk2w * damping
        bth += ba2
        bk1t += ba2 * h
        bom += bk2t
        bk1w += bk2t * h
        # k1w = c s1 - damping omega; k1t = omega
        bc += bk1w * s1
        bth += bk1w * c * math.cos(theta)
        bdamping -= bk1w * omega
        bom -= bk1w * damping
        bom += bk1t
        btheta, bomega = bth, bom
    blength = bc * G / (length * length)
    return bdamping, blength


def rk4_step(sin, damping, length, theta, omega):
    k1t = omega
    k1w = -G / length * sin(theta) - damping * omega
    k2t = omega + 0.5 * DT * k1w
    k2w = -G / length * sin(theta + 0.5 * DT * k1t) - damping * k2t
    k3t = omega + 0.5 * DT * k2w
    k3w = -G / length * sin(theta + 0.5 * DT * k2t) - damping * k3t
    k4t = omega + DT * k3w
    k4w = -G / length * sin(theta + DT * k3t) - damping * k4t
    return (theta + DT / 6.0 * (k1t + 2.0 * k2t + 2.0 * k3t + k4t),
            omega + DT / 6.0 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w))


def cases(quick):
    steps = 5 if quick else 1000
    args = (0.3, 1.2)

    def source():
        g = dt.grad(pendulum, wrt=(0, 1))
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
               Impl("GradientTape", DUALTAPE, tape),
               Impl("dualtape.grad (functional)", DUALTAPE, functional),
               Impl("torch eager", "torch", torch_grad),
               Impl("autograd grad", "autograd", ag_grad),
               Impl("JAX eager grad", "jax", jax_grad(False)),
               Impl("JAX jit(grad)", "jax.jit", jax_grad(True), note="lax.fori_loop")])]
