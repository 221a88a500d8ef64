"""Jacobian benchmarks (issue #4): vectorized tape.jacobian / batch_jacobian vs loops and peers.

Run: python benchmarks/bench_jacobians.py [--repeat N]. Peers (TensorFlow, JAX, torch.func)
are timed only where importable. Each time is the minimum over several repeats (the
machine may be shared with busy processes), in milliseconds, including the forward pass;
one BLAS thread everywhere.

1. J of tanh(W @ x + b) w.r.t. x, W 300x300: vectorized (one batched backward sweep)
   vs experimental_use_pfor=False (one sweep per output), TF's tape.jacobian, torch.func.jacrev.
2. batch_jacobian of a 32-64-32 elu MLP at batch 128 vs the full jacobian followed by the
   diagonal selection einsum('bxby->bxy'), JAX's vmap(jacrev), TF's batch_jacobian and
   torch.func.vmap(jacrev).
"""

import argparse
import os
import timeit

# One BLAS thread for every library (torch is pinned to one below): on a shared 2-core
# machine a multithreaded 300x300 GEMM can stall 10x behind busy neighbours. Override by
# setting OPENBLAS_NUM_THREADS yourself.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import dualtape as tf  # noqa: E402

RNG = np.random.default_rng(0)
N = 300
W = (RNG.standard_normal((N, N)) / np.sqrt(N)).astype(np.float32)
B = (RNG.standard_normal(N) * 0.1).astype(np.float32)
X = RNG.standard_normal(N).astype(np.float32)

BATCH, SIZES = 128, (32, 64, 32)
MLP = [((RNG.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32),
        (RNG.standard_normal(n) * 0.1).astype(np.float32)) for m, n in zip(SIZES[:-1], SIZES[1:])]
XB = RNG.standard_normal((BATCH, SIZES[0])).astype(np.float32)


def min_ms(fn, repeat):
    fn()  # warm up (imports, caches)
    number = max(1, int(0.05 / max(timeit.timeit(fn, number=1), 1e-6)))
    return 1e3 * min(timeit.repeat(fn, number=number, repeat=repeat)) / number


# -- dualtape ----------------------------------------------------------------------------------

def dense_jacobian(use_pfor=True):
    x = tf.constant(X)
    with tf.GradientTape(persistent=not use_pfor) as tape:
        tape.watch(x)
        y = tf.tanh(tf.linalg.matvec(W, x) + B)
    return tape.jacobian(y, x, experimental_use_pfor=use_pfor)


def mlp(x):
    for w, b in MLP:
        x = tf.nn.elu(tf.matmul(x, w) + b)
    return x


def mlp_batch_jacobian():
    x = tf.constant(XB)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = mlp(x)
    return tape.batch_jacobian(y, x)


def mlp_full_then_diagonal():
    x = tf.constant(XB)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = mlp(x)
    return tf.einsum("bxby->bxy", tape.jacobian(y, x))


# -- peers -------------------------------------------------------------------------------------

def peers():
    """{case: {name: fn}} for the peers that import."""
    found = {"dense": {}, "mlp": {}}
    try:
        import torch
        from torch.func import jacrev, vmap
        torch.set_num_threads(1)
        wt, bt, xt = torch.from_numpy(W), torch.from_numpy(B), torch.from_numpy(X)
        params = [(torch.from_numpy(w), torch.from_numpy(b)) for w, b in MLP]
        xbt = torch.from_numpy(XB)

        def torch_mlp(x):
            for w, b in params:
                x = torch.nn.functional.elu(x @ w + b)
            return x

        dense = jacrev(lambda x: torch.tanh(wt @ x + bt))
        per_example = vmap(jacrev(torch_mlp))
        found["dense"]["torch.func.jacrev"] = lambda: dense(xt)
        found["mlp"]["torch.func vmap(jacrev)"] = lambda: per_example(xbt)
    except ImportError:
        pass
    try:
        import jax
        import jax.numpy as jnp

        def jax_mlp(x):
            for w, b in MLP:
                x = jax.nn.elu(x @ w + b)
            return x

        dense = jax.jacrev(lambda x: jnp.tanh(W @ x + B))
        per_example = jax.vmap(jax.jacrev(jax_mlp))
        found["dense"]["jax jacrev (eager)"] = lambda: dense(X).block_until_ready()
        found["mlp"]["jax vmap(jacrev) (eager)"] = lambda: per_example(XB).block_until_ready()
    except ImportError:
        pass
    try:
        import tensorflow as real_tf

        def tf_dense():
            x = real_tf.constant(X)
            with real_tf.GradientTape() as tape:
                tape.watch(x)
                y = real_tf.tanh(real_tf.linalg.matvec(W, x) + B)
            return tape.jacobian(y, x)

        layers = [(real_tf.constant(w), real_tf.constant(b)) for w, b in MLP]

        def tf_mlp():
            x = real_tf.constant(XB)
            with real_tf.GradientTape() as tape:
                tape.watch(x)
                y = x
                for w, b in layers:
                    y = real_tf.nn.elu(y @ w + b)
            return tape.batch_jacobian(y, x)

        found["dense"]["tensorflow tape.jacobian"] = tf_dense
        found["mlp"]["tensorflow batch_jacobian"] = tf_mlp
    except ImportError:
        pass
    return found


def check():
    """The vectorized results equal the looped / full ones (a benchmark of wrong numbers is moot)."""
    np.testing.assert_allclose(np.asarray(dense_jacobian(True)), np.asarray(dense_jacobian(False)),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(mlp_batch_jacobian()), np.asarray(mlp_full_then_diagonal()),
                               rtol=1e-5, atol=1e-6)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="check and time once, no peers (tests)")
    args = parser.parse_args()
    check()
    if args.quick:
        args.repeat = 1
    others = {"dense": {}, "mlp": {}} if args.quick else peers()
    rows = []
    vectorized = min_ms(lambda: dense_jacobian(True), args.repeat)
    looped = min_ms(lambda: dense_jacobian(False), args.repeat)
    rows += [("tanh(W@x+b), 300x300", "dualtape tape.jacobian (vectorized)", vectorized, ""),
             ("", "dualtape experimental_use_pfor=False", looped, f"vectorized is {looped / vectorized:.1f}x faster")]
    for name, fn in others["dense"].items():
        t = min_ms(fn, args.repeat)
        rows.append(("", name, t, f"dualtape / peer = {vectorized / t:.2f}"))
    batched = min_ms(mlp_batch_jacobian, args.repeat)
    full = min_ms(mlp_full_then_diagonal, args.repeat)
    rows += [("elu MLP 32-64-32, batch 128", "dualtape batch_jacobian", batched, ""),
             ("", "dualtape jacobian + einsum('bxby->bxy')", full, f"batch_jacobian is {full / batched:.1f}x faster")]
    for name, fn in others["mlp"].items():
        t = min_ms(fn, args.repeat)
        rows.append(("", name, t, f"dualtape / peer = {batched / t:.2f}"))
    print(f"{'case':30s} {'method':42s} {'min ms':>10s}  note")
    for case, method, t, note in rows:
        print(f"{case:30s} {method:42s} {t:10.3f}  {note}")


if __name__ == "__main__":
    main()
