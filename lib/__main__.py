"""`python -m dualtape`: a short tour printing a gradient by each mode and generated code."""

import math

import numpy as np

import dualtape as tf


def main():
    print("== Reverse mode: GradientTape (TF's API) ==")
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x ** 2
    print("d(x**2)/dx at 3:", tape.gradient(y, x))

    x = tf.constant([1.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    print("persistent tape, dz/dx:", tape.gradient(z, x).numpy(), " dy/dx:", tape.gradient(y, x).numpy())

    x = tf.Variable(1.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
        dy_dx = t1.gradient(y, x)
    print("nested tapes: dy/dx =", dy_dx.numpy(), " d2y/dx2 =", t2.gradient(dy_dx, x).numpy())

    w = tf.constant(np.array([[1.0, 2.0], [3.0, 4.0]]))
    with tf.GradientTape() as tape:
        tape.watch(w)
        loss = np.sum(np.tanh(w) ** 2)  # plain NumPy calls on a tensor are recorded
    print("NumPy code on a tape, d loss/dw:\n", tape.gradient(loss, w).numpy())

    _tour_forward()
    _tour_transforms()


def _tour_forward():
    try:
        from dualtape.functional import hessian, jvp
    except ImportError:
        return
    print("\n== Forward mode: dual numbers ==")
    f = lambda x: np.sin(x) * x ** 2  # noqa: E731
    out, tangent = jvp(f, (1.0,), (1.0,))
    print(f"f(x) = sin(x) * x**2 at x = 1: f = {float(out):.6f}, f' by jvp = {float(tangent):.6f}")
    print("Hessian of sum(x**3) at [1, 2] (forward over reverse):\n",
          hessian(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0])))
    loss = lambda w, x: np.sum(np.tanh(x @ w) ** 2)  # noqa: E731
    xs = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    print("per-example gradients by vmap(grad(loss)), one row per example:\n",
          tf.vmap(tf.grad(loss), in_axes=(None, 0))(np.array([0.5, -0.25]), xs))


def _tour_transforms():
    try:
        from dualtape import transforms
        df = transforms.grad(_pendulum_step)
    except (ImportError, AttributeError):
        return
    print("\n== Source transformation: generated adjoint code ==")
    print("gradient at 0.5:", df(0.5))
    print(df.source_for(0.5))


def _pendulum_step(theta):
    omega = -math.sin(theta) * 0.1
    theta = theta + 0.1 * omega
    return theta * theta


if __name__ == "__main__":
    main()
