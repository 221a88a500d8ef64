"""Draw the pictures of docs/jacobians.md into docs/plots/ (the page's code has no matplotlib).

Run: python docs/make_jacobian_plots.py. It repeats the page's examples with fixed seeds:
the sigmoid and its jacobian, the Hessian of a two-layer model, and the (batch, batch)
patches of a full jacobian, without and with BatchNormalization.
"""

import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import dualtape as tf  # noqa: E402

PLOTS = pathlib.Path(__file__).resolve().parent / "plots"


def imshow_zero_center(image, **kwargs):
    lim = tf.reduce_max(abs(image))
    plt.imshow(image, vmin=-lim, vmax=lim, cmap="seismic", **kwargs)
    plt.colorbar()


def plot_as_patches(j):
    # Reorder axes so the diagonals will each form a contiguous patch.
    j = tf.transpose(j, [1, 0, 3, 2])
    # Pad in between each patch.
    lim = tf.reduce_max(abs(j))
    j = tf.pad(j, [[0, 0], [1, 1], [0, 0], [1, 1]], constant_values=-lim)
    # Reshape to form a single image.
    s = j.shape
    j = tf.reshape(j, [s[0] * s[1], s[2] * s[3]])
    imshow_zero_center(j, extent=[-0.5, s[2] - 0.5, s[0] - 0.5, -0.5])


def save(name):
    plt.tight_layout()
    plt.savefig(PLOTS / name, dpi=90)
    plt.close()
    print("wrote", PLOTS / name)


def sigmoid_plot():
    x = tf.linspace(-10.0, 10.0, 200 + 1)
    delta = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        y = tf.nn.sigmoid(x + delta)
    dy_dx = tape.jacobian(y, delta)
    plt.figure(figsize=(6, 4))
    plt.plot(x.numpy(), y, label="y")
    plt.plot(x.numpy(), dy_dx, label="dy/dx")
    plt.legend()
    plt.xlabel("x")
    save("jacobian_sigmoid.png")


def hessian_plot():
    x = tf.random.normal([7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.relu)
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.relu)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            x = layer1(x)
            x = layer2(x)
            loss = tf.reduce_mean(x**2)
        g = t1.gradient(loss, layer1.kernel)
    h = t2.jacobian(g, layer1.kernel)
    n_params = tf.reduce_prod(layer1.kernel.shape)
    h_mat = tf.reshape(h, [n_params, n_params])
    plt.figure(figsize=(5, 4))
    imshow_zero_center(h_mat)
    plt.title("Hessian of the loss w.r.t. layer1.kernel")
    save("hessian.png")


def batch_plots():
    x = tf.random.normal([7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer2(layer1(x))
    j = tape.jacobian(y, x)
    plt.figure(figsize=(5, 4))
    imshow_zero_center(j[:, 0, :, 0])
    plt.title("A (batch, batch) slice")
    save("batch_slice.png")
    plt.figure(figsize=(5, 5))
    plot_as_patches(j)
    plt.title("All (batch, batch) slices are diagonal")
    save("batch_jacobian_patches.png")

    bn = tf.keras.layers.BatchNormalization()
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer2(bn(layer1(x), training=True))
    j = tape.jacobian(y, x)
    plt.figure(figsize=(5, 5))
    plot_as_patches(j)
    plt.title("These slices are not diagonal")
    plt.xlabel("Don't use `batch_jacobian`")
    save("batch_norm_patches.png")


def main():
    PLOTS.mkdir(exist_ok=True)
    tf.random.set_seed(0)
    np.random.seed(0)
    sigmoid_plot()
    hessian_plot()
    batch_plots()


if __name__ == "__main__":
    main()
