"""Benchmarks of dualtape.transforms (issue #5): run `python benchmarks/bench_transforms.py`.

1. RK4 damped pendulum, 1000 steps, d(final angle)/d(damping, length), written with
   math.sin: the generated gradient vs a hand-written adjoint on Python floats, and vs the
   tape's gradient of the same program written with np.sin.
2. The 784-512-512-10 MLP loss gradient vs hand-written NumPy.
3. (issue #6) Source HVP (forward over source reverse, one generated function) of the RK4
   pendulum and of the 64-64-64-10 tanh MLP loss: vs the source gradient (target <= 4x) and
   vs the runtime forward-over-reverse `dualtape.functional.hvp` (target: faster).
"""

import dualtape.functional as F

import math
import timeit

import numpy as np

import dualtape
import dualtape.transforms as dt

G = 9.81
DT = 0.01
STEPS = 1000


def pendulum(damping, length, theta0=1.0, omega0=0.0):
    theta = theta0
    omega = omega0
    for _ in range(STEPS):
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


def pendulum_with(sin, damping, length, theta0=1.0, omega0=0.0):
    """The same RK4 program for the runtime modes, with the `sin` of a given library."""
    theta = theta0
    omega = omega0
    for _ in range(STEPS):
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


def pendulum_np(damping, length, theta0=1.0, omega0=0.0):
    return pendulum_with(np.sin, damping, length, theta0, omega0)


def pendulum_adjoint_by_hand(damping, length, theta0=1.0, omega0=0.0):
    """What a careful person writes: store the states, recompute each step's stages backwards."""
    c = -G / length
    h = 0.5 * DT
    states = []
    theta, omega = theta0, omega0
    for _ in range(STEPS):
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


def tape_gradient(damping, length):
    d = dualtape.constant(np.float64(damping))
    ell = dualtape.constant(np.float64(length))
    with dualtape.GradientTape() as tape:
        tape.watch(d)
        tape.watch(ell)
        y = pendulum_np(d, ell)
    return tape.gradient(y, [d, ell])


def torch_gradient(damping, length):
    """The same program on PyTorch eager tensors (None when torch is not installed)."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    d = torch.tensor(damping, dtype=torch.float64, requires_grad=True)
    ell = torch.tensor(length, dtype=torch.float64, requires_grad=True)
    y = pendulum_with(torch.sin, d, ell, torch.tensor(1.0, dtype=torch.float64),
                      torch.tensor(0.0, dtype=torch.float64))
    y.backward()
    return [d.grad.item(), ell.grad.item()]


def mlp_loss(w1, b1, w2, b2, w3, b3, x, y):
    h1 = np.tanh(x @ w1 + b1)
    h2 = np.tanh(h1 @ w2 + b2)
    out = h2 @ w3 + b3
    return np.mean((out - y) ** 2)


def mlp_grad_by_hand(w1, b1, w2, b2, w3, b3, x, y):
    h1 = np.tanh(x @ w1 + b1)
    h2 = np.tanh(h1 @ w2 + b2)
    out = h2 @ w3 + b3
    bout = 2.0 * (out - y) / out.size
    bw3 = h2.T @ bout
    bb3 = bout.sum(axis=0)
    bz2 = (bout @ w3.T) * (1 - h2 * h2)
    bw2 = h1.T @ bz2
    bb2 = bz2.sum(axis=0)
    bz1 = (bz2 @ w2.T) * (1 - h1 * h1)
    bw1 = x.T @ bz1
    bb1 = bz1.sum(axis=0)
    return bw1, bb1, bw2, bb2, bw3, bb3


def best(fn, number, repeat=7):
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def best_pair(fn_a, fn_b, number, rounds=15):
    """Min time of each, alternating a and b so load on a shared machine hits both alike."""
    ta, tb = [], []
    for _ in range(rounds):
        ta.append(timeit.timeit(fn_a, number=number) / number)
        tb.append(timeit.timeit(fn_b, number=number) / number)
    return min(ta), min(tb)


def main():
    dpend = dt.grad(pendulum, wrt=(0, 1))
    args = (0.3, 1.2)
    gen = dpend(*args)
    hand = pendulum_adjoint_by_hand(*args)
    taped = [float(np.asarray(g)) for g in tape_gradient(*args)]
    assert np.allclose(gen, hand, rtol=1e-9) and np.allclose(gen, taped, rtol=1e-9), (gen, hand, taped)
    t_gen, t_hand = best_pair(lambda: dpend(*args), lambda: pendulum_adjoint_by_hand(*args), 20)
    torched = torch_gradient(*args)
    if torched is not None:
        assert np.allclose(gen, torched, rtol=1e-9), (gen, torched)
        t_tape, t_torch = best_of([lambda: tape_gradient(*args), lambda: torch_gradient(*args)], 1, rounds=3)
    else:
        t_tape = best(lambda: tape_gradient(*args), 1, repeat=3)
    print("RK4 pendulum, 1000 steps, d theta_final / d(damping, length)")
    print(f"  generated (math.sin)        {t_gen * 1e3:8.3f} ms")
    print(f"  hand-written adjoint        {t_hand * 1e3:8.3f} ms   generated / hand = {t_gen / t_hand:.2f}x")
    print(f"  GradientTape (np.sin)       {t_tape * 1e3:8.3f} ms   tape / generated = {t_tape / t_gen:.1f}x")
    if torched is not None:
        print(f"  PyTorch eager (same code)   {t_torch * 1e3:8.3f} ms   torch / tape = {t_torch / t_tape:.2f}x")

    rng = np.random.default_rng(0)
    sizes = [784, 512, 512, 10]
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        params += [rng.standard_normal((n_in, n_out)) / np.sqrt(n_in), np.zeros(n_out)]
    x = rng.standard_normal((128, 784))
    y = rng.standard_normal((128, 10))
    dmlp = dt.grad(mlp_loss, wrt=(0, 1, 2, 3, 4, 5))
    gen = dmlp(*params, x, y)
    hand = mlp_grad_by_hand(*params, x, y)
    for a, b in zip(gen, hand):
        assert np.allclose(a, b, rtol=1e-9, atol=1e-12)
    t_gen, t_hand = best_pair(lambda: dmlp(*params, x, y), lambda: mlp_grad_by_hand(*params, x, y), 5, rounds=30)
    print("MLP 784-512-512-10 loss gradient, batch 128")
    print(f"  generated                   {t_gen * 1e3:8.3f} ms")
    print(f"  hand-written NumPy          {t_hand * 1e3:8.3f} ms   generated / hand = {t_gen / t_hand:.2f}x")


def best_of(fns, number, rounds=15):
    """Min time of each contender, alternating them round by round (the machine is shared)."""
    times = [[] for _ in fns]
    for _ in range(rounds):
        for t, fn in zip(times, fns):
            t.append(timeit.timeit(fn, number=number) / number)
    return [min(t) for t in times]


def hvp_main():
    args, v = (0.3, 1.2), (1.0, 0.5)
    dpend = dt.grad(pendulum, wrt=(0, 1))
    hpend = dt.hvp(pendulum, wrt=(0, 1))
    got = hpend(*args, v)
    ref = F.hvp(pendulum_np, args, v)
    assert np.allclose(got, [float(np.asarray(r)) for r in ref], rtol=1e-9), (got, ref)
    t_grad, t_hvp = best_of([lambda: dpend(*args), lambda: hpend(*args, v)], 10)
    (t_rt,) = best_of([lambda: F.hvp(pendulum_np, args, v)], 1, rounds=3)
    print("RK4 pendulum, 1000 steps: Hessian-vector product w.r.t. (damping, length)")
    print(f"  source gradient             {t_grad * 1e3:8.3f} ms")
    print(f"  source hvp                  {t_hvp * 1e3:8.3f} ms   hvp / gradient = {t_hvp / t_grad:.2f}x")
    print(f"  runtime hvp (functional)    {t_rt * 1e3:8.3f} ms   runtime / source hvp = {t_rt / t_hvp:.1f}x")

    rng = np.random.default_rng(0)
    sizes = [64, 64, 64, 10]
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        params += [rng.standard_normal((n_in, n_out)) / np.sqrt(n_in), np.zeros(n_out)]
    x = rng.standard_normal((128, 64))
    y = rng.standard_normal((128, 10))
    vs = tuple(rng.standard_normal(np.shape(p)) for p in params)
    wrt = (0, 1, 2, 3, 4, 5)
    dmlp = dt.grad(mlp_loss, wrt=wrt)
    hmlp = dt.hvp(mlp_loss, wrt=wrt)

    def runtime():
        return F.hvp(lambda *ps: mlp_loss(*ps, x, y), tuple(params), vs)

    for a, b in zip(hmlp(*params, x, y, vs), runtime()):
        assert np.allclose(a, b, rtol=1e-9, atol=1e-12)
    t_grad, t_hvp, t_rt = best_of([lambda: dmlp(*params, x, y), lambda: hmlp(*params, x, y, vs), runtime], 10)
    print("MLP 64-64-64-10 tanh loss, batch 128: Hessian-vector product w.r.t. all parameters")
    print(f"  source gradient             {t_grad * 1e3:8.3f} ms")
    print(f"  source hvp                  {t_hvp * 1e3:8.3f} ms   hvp / gradient = {t_hvp / t_grad:.2f}x")
    print(f"  runtime hvp (functional)    {t_rt * 1e3:8.3f} ms   runtime / source hvp = {t_rt / t_hvp:.1f}x")


if __name__ == "__main__":
    import sys
    if "--hvp" not in sys.argv:
        main()
    hvp_main()
