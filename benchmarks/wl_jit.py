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

import atexit
import math
import os
import shutil
import tempfile
import time
import types


import dualtape.transforms as dt
from dualtape.transforms.jit.disk_cache import ENV as CACHE_ENV
from dualtape.transforms.jit.native import ENV as NATIVE_ENV

try:
    from . import peers
    from .harness import DUALTAPE, FLOOR, Case, Impl
    from .workloads_src import chain, pendulum, pendulum_adjoint_by_hand, rk4_step
except ImportError:
    import peers
    from harness import DUALTAPE, FLOOR, Case, Impl
    from workloads_src import chain, pendulum, pendulum_adjoint_by_hand, rk4_step

STEPS = 1000
X0 = 0.3
RK4_ARGS = (0.3, 1.2)


def chain_adjoint_by_hand(x, steps):
    xs = []
    for _ in range(steps):
        xs.append(x)
        x = math.sin(x) * 1.0001 + 0.01 * x * x
    g = 1.0
    for i in range(steps - 1, -1, -1):  # (not reversed(xs): numba compiles this function too)
        g = g * (math.cos(xs[i]) * 1.0001 + 0.02 * xs[i])
    return g


def _numba_floors():
    """The hand-written adjoints compiled by numba, unchanged."""
    import numba
    return numba.njit(chain_adjoint_by_hand), numba.njit(pendulum_adjoint_by_hand)


def _fresh(f):
    """A new function object with f's code: a transform made of it compiles from scratch."""
    return types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__)


class _Env:
    """Environment variables set for the duration of a `with` block."""

    def __init__(self, **values):
        self.values, self.previous = values, {}

    def __enter__(self):
        for key, value in self.values.items():
            self.previous[key] = os.environ.get(key)
            os.environ[key] = value

    def __exit__(self, *exc):
        for key, value in self.previous.items():
            if value is None:
                del os.environ[key]
            else:
                os.environ[key] = value


def _jit_impl(name, f, wrt, args, fresh=False, note="", native=True):
    """The Impl of dualtape's compiled gradient. Unless `fresh`, make() compiles it (the first
    call: transform, probe, compilation) and writes that time into the note; the timed calls
    run the compiled code. fresh="cold": every call compiles (numba's disk cache off);
    fresh="cached": every call loads what numba compiled for an earlier call from the disk
    cache (a cache folder of its own, filled by make()), as a later run of the same script
    does. native=False sends the scalar code to numba instead of the native backend."""
    impl = Impl(name, DUALTAPE, None, note=note)
    backend = {} if native else {NATIVE_ENV: "0"}

    def make():
        import numba  # noqa: F401  (ImportError: reported as not installed)
        if fresh:
            folder = "0" if fresh == "cold" else tempfile.mkdtemp(prefix="dualtape-jit-cache-")
            if folder != "0":
                atexit.register(shutil.rmtree, folder, ignore_errors=True)

            def run():
                with _Env(**{CACHE_ENV: folder}, **backend):
                    return dt.grad(_fresh(f), wrt=wrt, jit=True)(*args)
            run()  # (compiles and, when cached, fills the cache)
            return run
        start = time.perf_counter()
        g = dt.grad(_fresh(f), wrt=wrt, jit=True)
        with _Env(**backend):
            g(*args)
        impl.note = (note + "; " if note else "") + (
            f"transform + probe + compile + first call {1e3 * (time.perf_counter() - start):,.0f} ms "
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
                    0, steps, lambda _, s: rk4_step(jnp.sin, damping, length, *s), state)
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
    jit_note = "native: LLVM compiles the scalar code (transforms/jit/native)"
    numba_note = "numba (DUALTAPE_JIT_NATIVE=0)"
    return [
        Case(f"Scalar chain, {steps} steps (Python float), gradient: compiled", rtol=1e-10, atol=1e-12,
             description="x = sin(x)·1.0001 + 0.01·x·x with math.sin; d x_final / d x0.",
             impls=[Impl("hand-written adjoint (Python floats)", FLOOR,
                         lambda: lambda: chain_adjoint_by_hand(*chain_args)),
                    Impl("hand-written adjoint, numba.njit", FLOOR, _numba_floor("chain", chain_args),
                         note="not checked: a second floor"),
                    _jit_impl("dualtape.transforms.grad(jit=True)", chain, 0, chain_args, note=jit_note),
                    _jit_impl("dualtape.transforms.grad(jit=True), numba", chain, 0, chain_args, note=numba_note,
                              native=False),
                    Impl("dualtape.transforms.grad (uncompiled)", DUALTAPE, _uncompiled(chain, 0, chain_args)),
                    Impl("JAX jit(grad), Python loop", "jax.jit", _jax_chain(steps, False),
                         note="unrolled at trace"),
                    Impl("JAX jit(grad), fori_loop", "jax.jit", _jax_chain(steps, True),
                         note="lax.fori_loop")]),
        Case(f"RK4 pendulum, {steps} steps, gradient w.r.t. (damping, length): compiled", rtol=1e-9,
             atol=1e-12, description="wl_rk4.py's program; the generated adjoint runs on math.sin.",
             impls=[Impl("hand-written adjoint (Python floats)", FLOOR,
                         lambda: lambda: pendulum_adjoint_by_hand(*rk4_args)),
                    Impl("hand-written adjoint, numba.njit", FLOOR, _numba_floor("rk4", rk4_args),
                         note="not checked: a second floor"),
                    _jit_impl("dualtape.transforms.grad(jit=True)", pendulum, (0, 1), rk4_args,
                              note=jit_note),
                    _jit_impl("dualtape.transforms.grad(jit=True), numba", pendulum, (0, 1), rk4_args,
                              note=numba_note, native=False),
                    Impl("dualtape.transforms.grad (uncompiled)", DUALTAPE,
                         _uncompiled(pendulum, (0, 1), rk4_args)),
                    Impl("JAX jit(grad)", "jax.jit", _jax_rk4(steps), note="lax.fori_loop")]),
        Case(f"Compile time: a fresh transform and its first call ({steps} steps)", rtol=1e-9, atol=1e-12,
             description="Each call makes the gradient of a fresh copy of f and calls it once: dualtape "
                         "transforms the source, runs it once uncompiled (the probe) and compiles it: the "
                         "native backend writes LLVM IR and compiles it with llvmlite (no cache); with "
                         "DUALTAPE_JIT_NATIVE=0, numba compiles (cold), or loads its code from its disk cache "
                         "(cached); JAX traces, lowers and compiles with XLA (its persistent cache off, as by "
                         "default). The time is the compile time.",
             impls=[Impl("hand-written adjoint (Python floats), RK4", FLOOR,
                         lambda: lambda: pendulum_adjoint_by_hand(*rk4_args)),
                    _jit_impl("dualtape jit=True, RK4", pendulum, (0, 1), rk4_args, fresh="cold",
                              note="native: LLVM compiles the scalar code"),
                    _jit_impl("dualtape jit=True, RK4, numba", pendulum, (0, 1), rk4_args, fresh="cold",
                              note="numba compiles (DUALTAPE_JIT_NATIVE=0, the disk cache off)", native=False),
                    _jit_impl("dualtape jit=True, RK4, numba, cached", pendulum, (0, 1), rk4_args, fresh="cached",
                              note="numba's code from its disk cache (a later run of the script)", native=False),
                    Impl("JAX jit(grad), RK4", "jax.jit", _jax_rk4(steps, fresh=True))]),
        Case(f"Compile time: scalar chain ({steps} steps)", rtol=1e-10, atol=1e-12,
             description="As above, for the scalar chain (JAX: the Python loop unrolled, and fori_loop).",
             impls=[Impl("hand-written adjoint (Python floats), chain", FLOOR,
                         lambda: lambda: chain_adjoint_by_hand(*chain_args)),
                    _jit_impl("dualtape jit=True, chain", chain, 0, chain_args, fresh="cold",
                              note="native: LLVM compiles the scalar code"),
                    _jit_impl("dualtape jit=True, chain, numba", chain, 0, chain_args, fresh="cold",
                              note="numba compiles (DUALTAPE_JIT_NATIVE=0, the disk cache off)", native=False),
                    _jit_impl("dualtape jit=True, chain, numba, cached", chain, 0, chain_args, fresh="cached",
                              note="numba's code from its disk cache (a later run of the script)", native=False),
                    Impl("JAX jit(grad), chain, Python loop", "jax.jit", _jax_chain(steps, False, fresh=True)),
                    Impl("JAX jit(grad), chain, fori_loop", "jax.jit", _jax_chain(steps, True, fresh=True))]),
    ]


def main(argv=None):
    import harness
    harness.main("wl_jit", cases, PINNING, argv, max_calls=400)


if __name__ == "__main__":
    main()
