"""Compiled generated gradients (issue 13, item 5): `dualtape.transforms.grad(f, jit=True)`.

Per call, against `jax.jit(jax.grad(f))`, the uncompiled generated gradient and the floors:

1. the 1000-step scalar chain x = sin(x)·1.0001 + 0.01·x·x on a Python float, d x_final / d x0;
2. the RK4 damped pendulum of wl_rk4.py, 1000 steps, d theta_final / d(damping, length);
3. compile time: a fresh transform of a fresh copy of f (dualtape: source transformation,
   probe run and numba compilation; JAX: trace, lowering and XLA compilation) and its first
   call, timed like any call (one call per round).

Floors: the hand-written adjoint on Python floats (the reference value), and the same adjoint
compiled by numba (`@numba.njit`), the best a compiled gradient can do. JAX jit runs the chain
as a Python loop (unrolled at trace, as the scalar chain of wl_chain.py) and as lax.fori_loop.

Run alone: `python benchmarks/wl_jit.py [--quick] [--rounds N]` (pinned, one thread, as
run_all.py); or add "wl_jit" to run_all.py's WORKLOADS.
"""

if __name__ == "__main__":
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import run_all
    PINNING = run_all.pin()  # one thread per library, pinned to CPU 0 (re-executes under taskset)

import math
import time
import types

import numpy as np

import dualtape.transforms as dt

try:
    from . import peers, wl_rk4
    from .harness import DUALTAPE, FLOOR, Case, Impl
except ImportError:
    import peers
    import wl_rk4
    from harness import DUALTAPE, FLOOR, Case, Impl

STEPS = 1000
X0 = 0.3
RK4_ARGS = (0.3, 1.2)


def chain(x, steps):
    for _ in range(steps):
        x = math.sin(x) * 1.0001 + 0.01 * x * x
    return x


def chain_adjoint_by_hand(x, steps):
    xs = []
    for _ in range(steps):
        xs.append(x)
        x = math.sin(x) * 1.0001 + 0.01 * x * x
    g = 1.0
    for x in reversed(xs):
        g = g * (math.cos(x) * 1.0001 + 0.02 * x)
    return g


def _numba_floors():
    import numba

    @numba.njit
    def chain_floor(x, steps):
        xs = np.empty(steps)
        for i in range(steps):
            xs[i] = x
            x = math.sin(x) * 1.0001 + 0.01 * x * x
        g = 1.0
        for i in range(steps - 1, -1, -1):
            x = xs[i]
            g = g * (math.cos(x) * 1.0001 + 0.02 * x)
        return g

    return chain_floor, numba.njit(_pendulum_floor_arrays)


def _pendulum_floor_arrays(damping, length, steps):
    """wl_rk4.pendulum_adjoint_by_hand with the states in an array (numba compiles it)."""
    G, DT = wl_rk4.G, wl_rk4.DT
    c = -G / length
    h = 0.5 * DT
    states = np.empty((steps, 2))
    theta, omega = 1.0, 0.0
    for i in range(steps):
        states[i, 0], states[i, 1] = theta, omega
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
    for i in range(steps - 1, -1, -1):
        theta, omega = states[i, 0], states[i, 1]
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
        bk1t, bk2t, bk3t, bk4t = w6 * btheta, 2 * w6 * btheta, 2 * w6 * btheta, w6 * btheta
        bk1w, bk2w, bk3w, bk4w = w6 * bomega, 2 * w6 * bomega, 2 * w6 * bomega, w6 * bomega
        bth, bom = btheta, bomega
        bc += bk4w * s4
        ba4 = bk4w * c * math.cos(a4)
        bdamping -= bk4w * k4t
        bk4t -= bk4w * damping
        bth += ba4
        bk3t += ba4 * DT
        bom += bk4t
        bk3w += bk4t * DT
        bc += bk3w * s3
        ba3 = bk3w * c * math.cos(a3)
        bdamping -= bk3w * k3t
        bk3t -= bk3w * damping
        bth += ba3
        bk2t += ba3 * h
        bom += bk3t
        bk2w += bk3t * h
        bc += bk2w * s2
        ba2 = bk2w * c * math.cos(a2)
        bdamping -= bk2w * k2t
        bk2t -= bk2w * damping
        bth += ba2
        bk1t += ba2 * h
        bom += bk2t
        bk1w += bk2t * h
        bc += bk1w * s1
        bth += bk1w * c * math.cos(theta)
        bdamping -= bk1w * omega
        bom -= bk1w * damping
        bom += bk1t
        btheta, bomega = bth, bom
    return bdamping, bc * G / (length * length)


def _fresh(f):
    """A new function object with f's code: a transform made of it compiles from scratch."""
    return types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__)


def _jit_impl(name, f, wrt, args, fresh=False, note=""):
    """The Impl of dualtape's compiled gradient. Unless `fresh`, make() compiles it (the first
    call: transform, probe, numba) and writes that time into the note; the timed calls run
    the compiled code."""
    impl = Impl(name, DUALTAPE, None, note=note)

    def make():
        import numba  # noqa: F401  (ImportError: reported as not installed)
        if fresh:
            return lambda: dt.grad(_fresh(f), wrt=wrt, jit=True)(*args)
        start = time.perf_counter()
        g = dt.grad(f, wrt=wrt, jit=True)
        g(*args)
        impl.note = (note + "; " if note else "") + (
            f"transform + probe + numba compile + first call {1e3 * (time.perf_counter() - start):,.0f} ms "
            "(not in the time)")
        return lambda: g(*args)
    impl.make = make
    return impl


def _uncompiled(f, wrt, args):
    def make():
        g = dt.grad(f, wrt=wrt)
        return lambda: g(*args)
    return make


def _jax_chain(steps, fori, fresh=False):
    def make():
        jax, jnp = peers.jax()

        def build():
            def step(_, x):
                return jnp.sin(x) * 1.0001 + 0.01 * x * x

            def f(x):
                if fori:
                    return jax.lax.fori_loop(0, steps, step, x)
                for i in range(steps):
                    x = step(i, x)
                return x
            return jax.jit(jax.grad(f))

        x = jnp.float64(X0)
        if fresh:
            return lambda: jax.block_until_ready(build()(x))
        g = build()
        return lambda: jax.block_until_ready(g(x))
    return make


def _jax_rk4(steps, fresh=False):
    def make():
        jax, jnp = peers.jax()

        def build():
            def f(damping, length):
                state = (jnp.float64(1.0), jnp.float64(0.0))
                state = jax.lax.fori_loop(
                    0, steps, lambda _, s: wl_rk4.rk4_step(jnp.sin, damping, length, *s), state)
                return state[0]
            return jax.jit(jax.grad(f, argnums=(0, 1)))

        a = (jnp.float64(RK4_ARGS[0]), jnp.float64(RK4_ARGS[1]))
        if fresh:
            return lambda: jax.block_until_ready(build()(*a))
        g = build()
        return lambda: jax.block_until_ready(g(*a))
    return make


def _numba_floor(which, args):
    def make():
        chain_floor, pendulum_floor = _numba_floors()
        fn = chain_floor if which == "chain" else pendulum_floor
        return lambda: fn(*args)
    return make


def cases(quick):
    steps = 5 if quick else STEPS
    chain_args = (X0, steps)
    rk4_args = RK4_ARGS + (steps,)
    jit_note = "numba"
    return [
        Case(f"Scalar chain, {steps} steps (Python float), gradient: compiled", rtol=1e-10, atol=1e-12,
             description="x = sin(x)·1.0001 + 0.01·x·x with math.sin; d x_final / d x0.",
             impls=[Impl("hand-written adjoint (Python floats)", FLOOR,
                         lambda: lambda: chain_adjoint_by_hand(*chain_args)),
                    Impl("hand-written adjoint, numba.njit", FLOOR, _numba_floor("chain", chain_args),
                         note="not checked: a second floor"),
                    _jit_impl("dualtape.transforms.grad(jit=True)", chain, 0, chain_args, note=jit_note),
                    Impl("dualtape.transforms.grad (uncompiled)", DUALTAPE, _uncompiled(chain, 0, chain_args)),
                    Impl("JAX jit(grad), Python loop", "jax.jit", _jax_chain(steps, False),
                         note="unrolled at trace"),
                    Impl("JAX jit(grad), fori_loop", "jax.jit", _jax_chain(steps, True),
                         note="lax.fori_loop")]),
        Case(f"RK4 pendulum, {steps} steps, gradient w.r.t. (damping, length): compiled", rtol=1e-9,
             atol=1e-12, description="wl_rk4.py's program; the generated adjoint runs on math.sin.",
             impls=[Impl("hand-written adjoint (Python floats)", FLOOR,
                         lambda: lambda: wl_rk4.pendulum_adjoint_by_hand(*rk4_args)),
                    Impl("hand-written adjoint, numba.njit", FLOOR, _numba_floor("rk4", rk4_args),
                         note="not checked: a second floor"),
                    _jit_impl("dualtape.transforms.grad(jit=True)", wl_rk4.pendulum, (0, 1), rk4_args,
                              note=jit_note),
                    Impl("dualtape.transforms.grad (uncompiled)", DUALTAPE,
                         _uncompiled(wl_rk4.pendulum, (0, 1), rk4_args)),
                    Impl("JAX jit(grad)", "jax.jit", _jax_rk4(steps), note="lax.fori_loop")]),
        Case(f"Compile time: a fresh transform and its first call ({steps} steps)", rtol=1e-9, atol=1e-12,
             description="Each call makes the gradient of a fresh copy of f and calls it once: dualtape "
                         "transforms the source, runs it once uncompiled (the probe) and compiles with numba; "
                         "JAX traces, lowers and compiles with XLA. The time is the compile time.",
             impls=[Impl("hand-written adjoint (Python floats), RK4", FLOOR,
                         lambda: lambda: wl_rk4.pendulum_adjoint_by_hand(*rk4_args)),
                    _jit_impl("dualtape jit=True, RK4", wl_rk4.pendulum, (0, 1), rk4_args, fresh=True),
                    Impl("JAX jit(grad), RK4", "jax.jit", _jax_rk4(steps, fresh=True))]),
        Case(f"Compile time: scalar chain ({steps} steps)", rtol=1e-10, atol=1e-12,
             description="As above, for the scalar chain (JAX: the Python loop unrolled, and fori_loop).",
             impls=[Impl("hand-written adjoint (Python floats), chain", FLOOR,
                         lambda: lambda: chain_adjoint_by_hand(*chain_args)),
                    _jit_impl("dualtape jit=True, chain", chain, 0, chain_args, fresh=True),
                    Impl("JAX jit(grad), chain, Python loop", "jax.jit", _jax_chain(steps, False, fresh=True)),
                    Impl("JAX jit(grad), chain, fori_loop", "jax.jit", _jax_chain(steps, True, fresh=True))]),
    ]


def main(argv=None):
    import argparse

    import harness
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", default="")
    args = parser.parse_args(argv)
    target_s, budget_s, max_calls = (0.002, 1.0, 3) if args.quick else (0.25, 40.0, 400)
    print(f"# wl_jit ({PINNING})\n")
    for case in cases(args.quick):
        if args.only.lower() not in case.name.lower():
            continue
        results = harness.run_case(case, args.rounds, target_s=target_s, budget_s=budget_s, max_calls=max_calls)
        print()
        print(harness.table(case, results))
        print(flush=True)


if __name__ == "__main__":
    main()
