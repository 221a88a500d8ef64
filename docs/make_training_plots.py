"""Draw the picture of docs/training.md: the loss of every training step and the held-out
accuracy after each epoch.

The page's own code blocks are run (so the plot shows exactly the training the page does),
then its `history` is drawn.

Run: python docs/make_training_plots.py (needs matplotlib and scikit-learn:
pip install -e ".[docs]").
"""

import contextlib
import io
import pathlib
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

DOCS = pathlib.Path(__file__).resolve().parent
PLOTS = DOCS / "plots"
_FENCE = re.compile(r"^```[ \t]*([\w+-]*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def run_page(path):
    """Run the ```python blocks of `path` in one namespace (quietly) and return it."""
    namespace = {"__name__": "__main__"}
    text = path.read_text(encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()):
        for match in _FENCE.finditer(text):
            if match.group(1).lower() in ("python", "py", "python3"):
                line = text.count("\n", 0, match.start(2))
                exec(compile("\n" * line + match.group(2), str(path), "exec"), namespace)  # noqa: S102
    return namespace


def main():
    page = run_page(DOCS / "training.md")
    history, epochs = page["history"], page["epochs"]
    steps = np.arange(1, len(history["step_loss"]) + 1)
    per_epoch = len(steps) // epochs
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(9, 3.6))
    ax_loss.plot(steps, history["step_loss"], lw=0.8, alpha=0.6, label="minibatch loss")
    ax_loss.plot(per_epoch * np.arange(1, epochs + 1), history["epoch_loss"], "o-", label="epoch mean")
    ax_loss.set_yscale("log")
    ax_loss.set_xlabel("step")
    ax_loss.set_ylabel("softmax cross entropy")
    ax_loss.set_title("Training loss (Adam, lr 0.01)")
    ax_loss.legend()
    ax_acc.plot(np.arange(1, epochs + 1), history["test_accuracy"], "o-", color="C2")
    ax_acc.set_xlabel("epoch")
    ax_acc.set_ylabel("accuracy")
    ax_acc.set_ylim(0.7, 1.0)
    ax_acc.set_title(f"Held-out digits: {history['test_accuracy'][-1]:.1%}")
    ax_acc.grid(alpha=0.3)
    PLOTS.mkdir(exist_ok=True)
    fig.tight_layout()
    fig.savefig(PLOTS / "training_loss.png", dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    main()
