"""Per-call overhead of reading module globals in generated code (issue 19, item 1).

Generated code runs in a namespace made from the user's module globals when it is compiled;
each call first checks, by identity, that the globals it was made from are still bound to
the same objects (transforms/cache.py, `Guard`), so that `module.G = 1.62` is seen as plain
Python sees it. This workload times that check where it weighs most: tiny functions whose
gradient is a few arithmetic operations, reading a module constant, a module array and a
helper (which reads the constant too).

1. d f / d x of a Python float: the uncompiled gradient, jvp, and the numba-compiled gradient.
2. d f / d x of a 3-vector: the gradient of a shape seen before (its fastest path), compiled
   (where numba froze W into the code, each call also compares W's bytes) and hvp.

Run alone: `python benchmarks/wl_globals.py [--quick] [--rounds N]` (pinned, one thread, as
run_all.py).
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
    from .harness import DUALTAPE, FLOOR, Case, Impl
except ImportError:
    from harness import DUALTAPE, FLOOR, Case, Impl

G = 9.81
W = np.array([0.5, -1.0, 2.0])
X0 = 0.7


def potential(x):
    return G * x * x


def energy(x):
    """A scalar: reads the global G directly and through `potential`."""
    return potential(x) + G * x


def weighted(x):
    """A vector argument: reads the global array W and G."""
    return np.sum(W * x * x) + G * np.sum(x)


def _grad_impl(name, make_transform, args, tangent=None):
    def make():
        g = make_transform()
        extra = () if tangent is None else (tangent,)
        return lambda: g(*args, *extra)
    return Impl(name, DUALTAPE, make)


def _jit_grad(f=None):
    import numba  # noqa: F401  (ImportError: reported as not installed)
    return dt.grad(energy if f is None else f, jit=True)


def cases(quick):
    x = np.array([0.3, -0.2, 1.1])
    v = np.array([1.0, 0.0, 0.0])
    return [
        Case("Module globals, Python float: per-call overhead of the gradient", rtol=1e-12, atol=1e-12,
             description="energy(x) = G·x² (in a helper) + G·x, G a module global; d/dx at x = 0.7. "
                         "Each dualtape call checks that G and the helper are still bound as when compiled.",
             impls=[Impl("hand-written derivative", FLOOR, lambda: lambda: 2 * G * X0 + G),
                    _grad_impl("dualtape.transforms.grad", lambda: dt.grad(energy), (X0,)),
                    _grad_impl("dualtape.transforms.grad(jit=True)", _jit_grad, (X0,))]),
        Case("Module globals, Python float: per-call overhead of jvp", rtol=1e-12, atol=1e-12,
             description="As above, forward mode: (energy(x), d energy / dx · 1.0).",
             impls=[Impl("hand-written value and tangent", FLOOR, lambda: lambda: (G * X0 * X0 + G * X0,
                                                                                  2 * G * X0 + G)),
                    _grad_impl("dualtape.transforms.jvp", lambda: dt.jvp(energy), (X0,), 1.0)]),
        Case("Module globals, 3-vector: per-call overhead of the gradient", rtol=1e-12, atol=1e-12,
             description="weighted(x) = sum(W·x²) + G·sum(x), W a module array; the gradient (shapes seen "
                         "before: its fastest path) and H·v.",
             impls=[Impl("hand-written gradient", FLOOR, lambda: lambda: 2 * W * x + G),
                    _grad_impl("dualtape.transforms.grad", lambda: dt.grad(weighted), (x,)),
                    _grad_impl("dualtape.transforms.grad(jit=True)", lambda: _jit_grad(weighted), (x,))]),
        Case("Module globals, 3-vector: per-call overhead of hvp", rtol=1e-12, atol=1e-12,
             description="H·v of weighted(x), v = e0.",
             impls=[Impl("hand-written H·v", FLOOR, lambda: lambda: 2 * W * v),
                    _grad_impl("dualtape.transforms.hvp", lambda: dt.hvp(weighted), (x,), v)]),
    ]


def main(argv=None):
    import harness
    harness.main("wl_globals", cases, PINNING, argv, max_calls=2000)


if __name__ == "__main__":
    main()
