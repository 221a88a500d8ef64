"""Jacobians and Hessians: a dense 300x300 jacobian, an elu MLP batch_jacobian, a Hessian n=200.

1. J of tanh(W @ x + b) w.r.t. x, with W 300x300 and x, b (300, 1) float32 columns:
   tape.jacobian vectorized (pfor: one batched backward sweep) vs experimental_use_pfor=False
   (one backward sweep per output row), against the closed form (1 - y**2) * W.
2. batch_jacobian of a 32-64-32 elu MLP at batch 128 (float32) vs the full jacobian then
   einsum('bxby->bxy'), against the hand-written per-example chain rule.
3. Hessian of sum(sin(x) x**2) + sum(x[:-1] x[1:]**2), n=200, float64, against its
   closed-form tridiagonal Hessian; dense, and with sparsity="auto" (3 HVPs).
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


def dense_case(n):
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32)
    b = (rng.standard_normal((n, 1)) * 0.1).astype(np.float32)
    x = rng.standard_normal((n, 1)).astype(np.float32)

    def floor():
        y = np.tanh(w @ x + b)
        return ((1 - y * y) * w).reshape(n, 1, n, 1)

    def ours(use_pfor):
        def make():
            xt = tf.constant(x)

            def run():
                with tf.GradientTape(persistent=not use_pfor) as tape:
                    tape.watch(xt)
                    y = tf.tanh(tf.matmul(w, xt) + b)
                return tape.jacobian(y, xt, experimental_use_pfor=use_pfor)
            return run
        return make

    def torch_jacrev(column=True):
        def make():
            torch = peers.torch()
            from torch.func import jacrev
            wt, bt, xt = torch.from_numpy(w), torch.from_numpy(b), torch.from_numpy(x)
            if not column:
                bt, xt = bt[:, 0], xt[:, 0]
            j = jacrev(lambda v: torch.tanh(wt @ v + bt))
            return lambda: j(xt)
        return make

    def ag_jacobian():
        autograd, anp = peers.autograd()
        j = autograd.jacobian(lambda v: anp.tanh(w @ v + b))
        return lambda: j(x)

    def jax_jacrev(jit, column=True):
        def make():
            jax, jnp = peers.jax()
            wj, bj, xj = jnp.asarray(w), jnp.asarray(b), jnp.asarray(x)
            if not column:
                bj, xj = bj[:, 0], xj[:, 0]
            j = jax.jacrev(lambda v: jnp.tanh(wj @ v + bj))
            j = jax.jit(j) if jit else j
            return lambda: jax.block_until_ready(j(xj))
        return make

    return Case(
        f"Jacobian of tanh(W @ x + b), {n}x{n}, float32", rtol=1e-4, atol=1e-6,
        description="x and b are (n, 1) columns; the jacobian is (n, 1, n, 1).",
        impls=[Impl("closed form (1 - y²) · W", FLOOR, lambda: floor),
               Impl("tape.jacobian (vectorized, pfor)", DUALTAPE, ours(True)),
               Impl("tape.jacobian experimental_use_pfor=False (per-row loop)", DUALTAPE, ours(False)),
               Impl("torch.func.jacrev", "torch", torch_jacrev()),
               Impl("torch.func.jacrev, x and b as (n,) vectors", "torch", torch_jacrev(False),
                    note="same jacobian, reshaped"),
               Impl("autograd.jacobian", "autograd", ag_jacobian),
               Impl("JAX eager jacrev", "jax", jax_jacrev(False)),
               Impl("JAX eager jacrev, x and b as (n,) vectors", "jax", jax_jacrev(False, False)),
               Impl("JAX jit(jacrev)", "jax.jit", jax_jacrev(True)),
               Impl("JAX jit(jacrev), x and b as (n,) vectors", "jax.jit", jax_jacrev(True, False))])


def batch_jacobian_case(sizes, batch):
    rng = np.random.default_rng(1)
    layers = [((rng.standard_normal((m, k)) / np.sqrt(m)).astype(np.float32),
               (rng.standard_normal(k) * 0.1).astype(np.float32)) for m, k in zip(sizes[:-1], sizes[1:])]
    xb = rng.standard_normal((batch, sizes[0])).astype(np.float32)

    def floor():
        """Per example: J = diag(elu'(z_L)) W_L^T ... diag(elu'(z_1)) W_1^T, batched."""
        h, jac = xb, None
        for w, b in layers:
            z = h @ w + b
            h = np.where(z > 0, z, np.expm1(z))
            slope = np.where(z > 0, np.float32(1), np.exp(z))[:, :, None]
            jac = slope * (w.T if jac is None else w.T @ jac)
        return jac

    def mlp(x):
        for w, b in layers:
            x = tf.nn.elu(tf.matmul(x, w) + b)
        return x

    def ours_batch():
        x = tf.constant(xb)

        def run():
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = mlp(x)
            return tape.batch_jacobian(y, x)
        return run

    def ours_full():
        x = tf.constant(xb)

        def run():
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = mlp(x)
            return tf.einsum("bxby->bxy", tape.jacobian(y, x))
        return run

    def torch_vmap():
        torch = peers.torch()
        from torch.func import jacrev, vmap
        ps = [(torch.from_numpy(w), torch.from_numpy(b)) for w, b in layers]
        xt = torch.from_numpy(xb)

        def f(x):
            for w, b in ps:
                x = torch.nn.functional.elu(x @ w + b)
            return x
        j = vmap(jacrev(f))
        return lambda: j(xt)

    def ag_batch():
        """autograd has no vmap: the examples are independent, so the jacobian of the sum
        over the batch, (out, batch, in), holds every per-example jacobian."""
        autograd, anp = peers.autograd()

        def f(x):
            for w, b in layers:
                z = x @ w + b
                x = anp.where(z > 0, z, anp.expm1(anp.minimum(z, 0.0)))
            return anp.sum(x, axis=0)
        j = autograd.jacobian(f)
        return lambda: np.transpose(j(xb), (1, 0, 2))

    def jax_vmap(jit):
        def make():
            jax, jnp = peers.jax()
            ps = [(jnp.asarray(w), jnp.asarray(b)) for w, b in layers]
            xj = jnp.asarray(xb)

            def f(x):
                for w, b in ps:
                    x = jax.nn.elu(x @ w + b)
                return x
            j = jax.vmap(jax.jacrev(f))
            j = jax.jit(j) if jit else j
            return lambda: jax.block_until_ready(j(xj))
        return make

    label = "-".join(map(str, sizes))
    return Case(
        f"batch_jacobian of an elu MLP {label}, batch {batch}, float32", rtol=1e-4, atol=1e-6,
        impls=[Impl("hand-written per-example chain rule", FLOOR, lambda: floor),
               Impl("tape.batch_jacobian", DUALTAPE, ours_batch),
               Impl("tape.jacobian + einsum('bxby->bxy')", DUALTAPE, ours_full)]
        + peer_impls(torch_vmap, ag_batch, jax_vmap, ("torch.func vmap(jacrev)", "autograd.jacobian of the batch sum",
                                                      "JAX eager vmap(jacrev)", "JAX jit(vmap(jacrev))")))


def hessian_case(n):
    xh = np.linspace(-1.0, 1.0, n)

    def coupled(x):
        return dnp.sum(dnp.sin(x) * x ** 2) + dnp.sum(x[:-1] * x[1:] ** 2)

    def floor():
        d = 2 * np.sin(xh) + 4 * xh * np.cos(xh) - xh * xh * np.sin(xh)
        d[1:] += 2 * xh[:-1]
        off = 2 * xh[1:]
        return np.diag(d) + np.diag(off, 1) + np.diag(off, -1)

    def ours(chunk, **options):
        def make():
            h = tf.hessian(coupled, chunk_size=chunk, **options)
            return lambda: h(xh)
        return make

    def coupled_np(x):  # (the same function in NumPy, as the source transformer reads it)
        return np.sum(np.sin(x) * x ** 2) + np.sum(x[:-1] * x[1:] ** 2)

    def generated(**options):
        def make():
            if options.get("jit"):
                __import__("numba")  # (an optional extra: "not installed" without it)
            h = dt.hessian(coupled_np, sparsity="auto", **options)
            h(xh)  # detect the pattern and compile
            return lambda: h(xh)
        return make

    def torch_hessian():
        torch = peers.torch()
        xt = torch.tensor(xh)

        def f(x):
            return (torch.sin(x) * x ** 2).sum() + (x[:-1] * x[1:] ** 2).sum()
        return lambda: torch.autograd.functional.hessian(f, xt, vectorize=True)

    def ag_hessian():
        autograd, anp = peers.autograd()
        h = autograd.hessian(lambda x: anp.sum(anp.sin(x) * x ** 2) + anp.sum(x[:-1] * x[1:] ** 2))
        return lambda: h(xh)

    def jax_hessian(jit):
        def make():
            jax, jnp = peers.jax()
            xj = jnp.asarray(xh)
            h = jax.hessian(lambda x: jnp.sum(jnp.sin(x) * x ** 2) + jnp.sum(x[:-1] * x[1:] ** 2))
            h = jax.jit(h) if jit else h
            return lambda: jax.block_until_ready(h(xj))
        return make

    return Case(
        f"Hessian, n={n}, float64", rtol=1e-10, atol=1e-10,
        description="Hessian of sum(sin(x)·x²) + sum(x[:-1]·x[1:]²).",
        impls=[Impl("closed form (tridiagonal)", FLOOR, lambda: floor),
               Impl("dualtape.hessian (one chunk)", DUALTAPE, ours(None)),
               Impl("dualtape.hessian (chunk_size=50)", DUALTAPE, ours(max(1, n // 4))),
               Impl('dualtape.hessian(sparsity="auto")', DUALTAPE, ours(None, sparsity="auto"),
                    note="3 colors: 3 HVPs in one batched pass"),
               Impl('dualtape.transforms.hessian(sparsity="auto")', DUALTAPE, generated(),
                    note="the generated hvp code, 3 directions in one batched call"),
               Impl('dualtape.transforms.hessian(sparsity="auto", jit=True)', DUALTAPE, generated(jit=True),
                    note="numba: one compiled hvp call per color")]
        + peer_impls(torch_hessian, ag_hessian, jax_hessian,
                     ("torch hessian(vectorize=True)", "autograd.hessian", "JAX eager hessian", "JAX jit(hessian)")))


def cases(quick):
    if quick:
        return [dense_case(6), batch_jacobian_case((4, 5, 3), 3), hessian_case(6)]
    return [dense_case(300), batch_jacobian_case((32, 64, 32), 128), hessian_case(200)]
