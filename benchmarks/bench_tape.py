"""Reverse-mode tape benchmarks, side by side in one process: dualtape vs peers vs NumPy.

1. Per-op overhead: gradient of a 1000-step chain x = sin(x) * 1.0001 + 0.01 * x * x, on a
   scalar and on a length-10 vector (dualtape, HIPS autograd, PyTorch eager, hand-written).
2. Gradient of a 784-512-512-10 tanh MLP with softmax cross-entropy, batch 256, float64,
   against a hand-written NumPy backward pass; and the gradient/forward time ratio.

Peers that are not installed are skipped. `--quick` runs toy sizes (used by the tests).
Run: python benchmarks/bench_tape.py [--quick]
"""

import argparse
import sys
import time

import numpy as np

import dualtape as tf
from dualtape import dnp


def best_of(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


# -- 1. the scalar chain ---------------------------------------------------------------------------

def chain_dualtape(x0, steps):
    x = tf.constant(np.asarray(x0, dtype=np.float64))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(steps):
            y = dnp.sin(y) * 1.0001 + 0.01 * y * y
        total = dnp.sum(y)
    return tape.gradient(total, x)


def chain_numpy(x0, steps):
    """Hand-written forward and reverse sweep of the same chain."""
    xs = []
    x = np.array(x0, dtype=np.float64)
    for _ in range(steps):
        xs.append(x)
        x = np.sin(x) * 1.0001 + 0.01 * x * x
    g = np.ones_like(x)
    for x in reversed(xs):
        g = g * (np.cos(x) * 1.0001 + 0.02 * x)
    return g


def chain_autograd(steps):
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        return None

    def f(x):
        for _ in range(steps):
            x = anp.sin(x) * 1.0001 + 0.01 * x * x
        return anp.sum(x)

    g = autograd.grad(f)
    return lambda x0: g(np.array(x0, dtype=np.float64))


def chain_torch(steps):
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)

    def grad(x0):
        x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
        y = x
        for _ in range(steps):
            y = torch.sin(y) * 1.0001 + 0.01 * y * y
        y.sum().backward()
        return x.grad

    return grad


def bench_chain(steps, repeat):
    rows = []
    for label, x0 in (("scalar", 0.3), ("vector[10]", np.full(10, 0.3))):
        expected = chain_numpy(x0, steps)
        np.testing.assert_allclose(chain_dualtape(x0, steps).numpy(), expected, rtol=1e-10)
        row = {"case": f"chain {steps} steps, {label}",
               "dualtape": best_of(lambda: chain_dualtape(x0, steps), repeat),
               "numpy (hand-written)": best_of(lambda: chain_numpy(x0, steps), repeat)}
        for name, make in (("autograd", chain_autograd), ("torch", chain_torch)):
            fn = make(steps)
            if fn is not None:
                np.testing.assert_allclose(np.asarray(fn(x0)), expected, rtol=1e-10)
                row[name] = best_of(lambda: fn(x0), repeat)
        rows.append(row)
    return rows


# -- 2. the MLP -------------------------------------------------------------------------------------

def mlp_params(sizes, rng):
    return [(rng.standard_normal((m, n)) / np.sqrt(m), np.zeros(n)) for m, n in zip(sizes[:-1], sizes[1:])]


def mlp_loss(params, x, labels):
    h = x
    for w, b in params[:-1]:
        h = dnp.tanh(dnp.matmul(h, w) + b)
    w, b = params[-1]
    logits = dnp.matmul(h, w) + b
    return -dnp.mean(dnp.sum(labels * dnp.log_softmax(logits, axis=-1), axis=-1))


def mlp_grad_dualtape(tensors, x, labels):
    """The parameters are tensors made once (as variables would be), the data constants."""
    with tf.GradientTape() as tape:
        tape.watch(tensors)
        loss = mlp_loss(tensors, x, labels)
    return tape.gradient(loss, tensors)


def mlp_grad_numpy(params, x, labels):
    """Hand-written forward and backward pass: the speed of light for this model."""
    hs = [x]
    for w, b in params[:-1]:
        hs.append(np.tanh(hs[-1] @ w + b))
    w, b = params[-1]
    logits = hs[-1] @ w + b
    shifted = logits - logits.max(axis=-1, keepdims=True)
    softmax = np.exp(shifted)
    softmax /= softmax.sum(axis=-1, keepdims=True)
    g = (softmax * labels.sum(axis=-1, keepdims=True) - labels) / x.shape[0]
    grads = []
    for i in range(len(params) - 1, -1, -1):
        w, _ = params[i]
        grads.append((hs[i].T @ g, g.sum(axis=0)))
        if i:
            g = (g @ w.T) * (1 - hs[i] * hs[i])
    return grads[::-1]


def bench_mlp(sizes, batch, repeat):
    rng = np.random.default_rng(0)
    params = mlp_params(sizes, rng)
    x = rng.standard_normal((batch, sizes[0]))
    labels = np.eye(sizes[-1])[rng.integers(0, sizes[-1], batch)]
    tensors = [(tf.constant(w), tf.constant(b)) for w, b in params]
    x_t, labels_t = tf.constant(x), tf.constant(labels)
    ours = mlp_grad_dualtape(tensors, x_t, labels_t)
    for (gw, gb), (ew, eb) in zip(ours, mlp_grad_numpy(params, x, labels)):
        np.testing.assert_allclose(gw.numpy(), ew, rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(gb.numpy(), eb, rtol=1e-8, atol=1e-12)
    return [{"case": f"MLP {'-'.join(map(str, sizes))} batch {batch} gradient",
             "dualtape": best_of(lambda: mlp_grad_dualtape(tensors, x_t, labels_t), repeat),
             "numpy (hand-written)": best_of(lambda: mlp_grad_numpy(params, x, labels), repeat),
             "dualtape forward only": best_of(lambda: mlp_loss(params, x, labels), repeat)}]


def print_table(rows):
    for row in rows:
        base = row["dualtape"]
        print(row["case"])
        for name, seconds in row.items():
            if name == "case":
                continue
            print(f"  {name:24s} {seconds * 1e3:9.3f} ms   {seconds / base:6.2f}x dualtape's time")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="toy sizes, for the test suite")
    args = parser.parse_args(argv)
    if args.quick:
        rows = bench_chain(20, 2) + bench_mlp([8, 6, 6, 3], 4, 2)
    else:
        rows = bench_chain(1000, 15) + bench_mlp([784, 512, 512, 10], 256, 10)
    print_table(rows)
    return rows


if __name__ == "__main__":
    sys.exit(main() and 0)
