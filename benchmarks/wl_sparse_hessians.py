"""Structure-aware Hessians (issue 23): a banded Hessian from a few Hessian-vector products.

Hessian of the chained Rosenbrock function sum(100 (x[1:] - x[:-1]²)² + (1 - x[:-1])²), float64,
n=200 and n=2000: tridiagonal, so `dualtape.hessian(f, sparsity="auto")` needs 3 HVPs (one
batched forward-over-reverse pass) whatever n, where a dense Hessian needs n;
`dualtape.transforms.hessian(f, sparsity="auto")` runs the generated hvp code on the 3 directions. Against the
closed-form tridiagonal Hessian (the floor), the dense `dualtape.hessian`, and JAX's
jit(hessian) (dense: n HVPs, vectorized). `sparse_output=True` returns a scipy CSR matrix:
the value is checked as the dense array it holds, and the timing is of the CSR result.
"""

import numpy as np

import dualtape
import dualtape.transforms as dt
from dualtape import dnp

try:
    from . import peers
    from .harness import DUALTAPE, FLOOR, Case, Impl
except ImportError:
    import peers
    from harness import DUALTAPE, FLOOR, Case, Impl


def rosenbrock(x):
    return dnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_hessian(x):
    """The closed form: d/dx_i of the terms i-1 (as x[1:]) and i (as x[:-1])."""
    n = len(x)
    diagonal = np.zeros(n)
    diagonal[:-1] += 1200.0 * x[:-1] ** 2 - 400.0 * x[1:] + 2.0
    diagonal[1:] += 200.0
    off = -400.0 * x[:-1]
    h = np.zeros((n, n))
    index = np.arange(n)
    h[index, index] = diagonal
    h[index[:-1], index[1:]] = off
    h[index[1:], index[:-1]] = off
    return h


def rosenbrock_case(n):
    x = np.random.default_rng(0).uniform(-1.0, 1.0, n)

    def ours(**options):
        def make():
            h = dualtape.hessian(rosenbrock, **options)
            return lambda: h(x)
        return make

    def jax_hessian(jit):
        def make():
            jax, jnp = peers.jax()
            xj = jnp.asarray(x)

            def f(v):
                return jnp.sum(100.0 * (v[1:] - v[:-1] ** 2) ** 2 + (1.0 - v[:-1]) ** 2)
            h = jax.hessian(f)
            h = jax.jit(h) if jit else h
            return lambda: jax.block_until_ready(h(xj))
        return make

    def generated(**options):
        def make():
            h = dt.hessian(rosenbrock, sparsity="auto", **options)
            return lambda: h(x)
        return make

    impls = [Impl("closed form (tridiagonal)", FLOOR, lambda: lambda: rosenbrock_hessian(x)),
             Impl('dualtape.hessian(sparsity="auto")', DUALTAPE, ours(sparsity="auto")),
             Impl('dualtape.transforms.hessian(sparsity="auto") (generated)', DUALTAPE, generated(),
                  note="the generated hvp code on 3 directions"),
             Impl('dualtape.transforms.hessian(sparsity="auto", sparse_output=True)', DUALTAPE,
                  generated(sparse_output=True), to_numpy=lambda m: m.toarray()),
             Impl('dualtape.hessian(sparsity="auto", sparse_output=True)', DUALTAPE,
                  ours(sparsity="auto", sparse_output=True), to_numpy=lambda m: m.toarray(),
                  note="a scipy CSR matrix (3n - 2 entries)")]
    if n <= 500:
        impls.append(Impl("dualtape.hessian (dense, one chunk)", DUALTAPE, ours()))
        impls.append(Impl("JAX eager hessian", "jax", jax_hessian(False)))
    impls.append(Impl("JAX jit(hessian)", "jax.jit", jax_hessian(True)))
    return Case(f"Sparse Hessian (chained Rosenbrock), n={n}, float64", rtol=1e-10, atol=1e-8,
                description="Hessian of sum(100 (x[1:] - x[:-1]²)² + (1 - x[:-1])²): tridiagonal.",
                impls=impls)


def cases(quick):
    if quick:
        return [rosenbrock_case(8)]
    return [rosenbrock_case(200), rosenbrock_case(2000)]
