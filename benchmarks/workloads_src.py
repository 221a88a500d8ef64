"""The workload programs shared by the benchmarks and the tests, defined once.

Module-level functions in a real file, as dualtape.transforms reads their source:

- `chain` (math.sin on a Python float) and `chain_np` (NumPy, any shape): the scalar chain
  x = sin(x)·1.0001 + 0.01·x·x, with `floor_chain`, its hand-written NumPy sweep;
- the RK4 damped pendulum: `pendulum` (math.sin, for the transformer), `rk4_step` and
  `pendulum_with` (generic in `sin`, for the runtime modes and the peers), and
  `pendulum_adjoint_by_hand` (the floor; numba compiles it unchanged);
- the losses of the Dask workload: `least_squares` and `logistic`;
- `flat_mlp_loss`: wl_mlp's 3-layer tanh MLP with its parameters in one flat vector, each
  layer's weights sliced and reshaped out of it (offsets from the shapes; HIDDEN units).
"""

import math

import numpy as np


def chain(x, steps):
    for _ in range(steps):
        x = math.sin(x) * 1.0001 + 0.01 * x * x
    return x


def chain_np(x, steps):
    """The chain in plain NumPy, as dualtape.transforms reads it."""
    for _ in range(steps):
        x = np.sin(x) * 1.0001 + 0.01 * x * x
    return np.sum(x)


def floor_chain(x0, steps):
    """Hand-written forward and reverse sweep."""
    xs = []
    x = np.array(x0, dtype=np.float64)
    for _ in range(steps):
        xs.append(x)
        x = np.sin(x) * 1.0001 + 0.01 * x * x
    g = np.ones_like(x)
    for x in reversed(xs):
        g = g * (np.cos(x) * 1.0001 + 0.02 * x)
    return g


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
    for i in range(steps - 1, -1, -1):  # (not reversed(states): numba compiles this function too)
        theta, omega = states[i]
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


def pendulum_with(sin, damping, length, steps, theta0=1.0, omega0=0.0):
    """The same RK4 program for the runtime modes, with the `sin` of a given library."""
    theta = theta0
    omega = omega0
    for _ in range(steps):
        theta, omega = rk4_step(sin, damping, length, theta, omega)
    return theta


def least_squares(w, X, y):
    r = X @ w - y
    return np.sum(r * r) / 2.0


def logistic(w, X, y):
    z = X @ w
    return np.mean(np.log1p(np.exp(z)) - y * z)


HIDDEN = 64


def flat_mlp_loss(theta, x, y):
    n_in, n_out, hidden = x.shape[1], y.shape[1], HIDDEN
    i1 = n_in * hidden
    i2 = i1 + hidden
    i3 = i2 + hidden * hidden
    i4 = i3 + hidden
    i5 = i4 + hidden * n_out
    W1 = theta[0:i1].reshape(n_in, hidden)
    b1 = theta[i1:i2]
    W2 = theta[i2:i3].reshape(hidden, hidden)
    b2 = theta[i3:i4]
    W3 = theta[i4:i5].reshape(hidden, n_out)
    b3 = theta[i5:i5 + n_out]
    h1 = np.tanh(x @ W1 + b1)
    h2 = np.tanh(h1 @ W2 + b2)
    out = h2 @ W3 + b3
    return np.sum((out - y) ** 2) / x.shape[0]
