"""Draw the picture of docs/forward_mode.md: f, f' and f'' by every mode and nesting.

Run: python docs/make_forward_plots.py (needs matplotlib: pip install -e ".[docs]").
"""

import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import dualtape as tf  # noqa: E402

PLOTS = pathlib.Path(__file__).resolve().parent / "plots"


def f(x):
    return np.sin(x) * np.exp(-x * x / 4)


def main():
    xs = np.linspace(-4.0, 4.0, 161)
    ones = np.ones_like(xs)
    total = lambda x: tf.dnp.sum(f(x))  # noqa: E731
    curves = {
        "f": f(xs),
        "f' forward (jvp)": tf.jvp(f, (xs,), (ones,))[1],
        "f' reverse (grad)": tf.grad(total)(xs),
        "f'' forward over forward": tf.jvp(lambda x: tf.jvp(f, (x,), (np.ones_like(x),))[1], (xs,), (ones,))[1],
        "f'' forward over reverse (hvp)": tf.hvp(total, (xs,), (ones,)),
        "f'' reverse over reverse": tf.grad(lambda x: tf.dnp.sum(tf.grad(total)(x)))(xs),
    }
    styles = ["-", "-", "--", "-", "--", ":"]
    fig, ax = plt.subplots(figsize=(7, 4))
    for (label, values), style in zip(curves.items(), styles):
        ax.plot(xs, values, style, label=label)
    ax.set_xlabel("x")
    ax.set_title("f(x) = sin(x) exp(-x²/4) and its derivatives, by every mode")
    ax.legend(fontsize=8)
    PLOTS.mkdir(exist_ok=True)
    fig.tight_layout()
    fig.savefig(PLOTS / "forward_derivatives.png", dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    main()
