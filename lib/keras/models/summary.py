"""`model.summary()`: Keras 3's table of layers, output shapes and parameter counts."""

import textwrap

import numpy as np

WIDTHS = (31, 22, 13)


def human_bytes(n):
    """'268.00 B', '215.04 KB', as Keras prints sizes (powers of 1024)."""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.2f} {unit}"
        n /= 1024.0


def params_and_bytes(variables):
    count = int(sum(np.prod(v.shape) for v in variables))
    size = int(sum(np.prod(v.shape) * np.dtype(v.dtype.as_numpy_dtype).itemsize for v in variables))
    return f"{count:,} ({human_bytes(size)})"


def shape_text(shape):
    if shape is None:
        return "?"
    if isinstance(shape, list):
        return "[" + ", ".join(shape_text(s) for s in shape) + "]"
    return "(" + ", ".join("None" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def row(cells):
    wrapped = [textwrap.wrap(text, width) or [""] for text, width in zip(cells, WIDTHS)]
    lines = []
    for i in range(max(len(w) for w in wrapped)):
        parts = [w[i] if i < len(w) else "" for w in wrapped]
        lines.append("│ " + parts[0].ljust(WIDTHS[0]) + " │ " + parts[1].ljust(WIDTHS[1]) + " │ "
                     + parts[2].rjust(WIDTHS[2]) + " │")
    return lines


def rule(left, middle, right, fill):
    return left + middle.join(fill * (w + 2) for w in WIDTHS) + right


def summary_lines(model, rows):
    """The lines of the table; `rows` is [(name, type name, output shape, params)]."""
    lines = [f'Model: "{model.name}"', rule("┏", "┳", "┓", "━"),
             "┃ " + "Layer (type)".ljust(WIDTHS[0]) + " ┃ " + "Output Shape".ljust(WIDTHS[1]) + " ┃ "
             + "Param #".rjust(WIDTHS[2]) + " ┃",
             rule("┡", "╇", "┩", "━")]
    for i, (name, kind, shape, params) in enumerate(rows):
        if i:
            lines.append(rule("├", "┼", "┤", "─"))
        lines.extend(row([f"{name} ({kind})", shape_text(shape), f"{params:,}"]))
    lines.append(rule("└", "┴", "┘", "─"))
    trainable = model.trainable_weights
    trainable_ids = {id(v) for v in trainable}
    optimizer = getattr(model, "optimizer", None)
    optimizer_variables = list(optimizer.variables) if optimizer is not None and optimizer.built else []
    lines += [f" Total params: {params_and_bytes(list(model.weights) + optimizer_variables)}",
              f" Trainable params: {params_and_bytes(trainable)}",
              f" Non-trainable params: {params_and_bytes([v for v in model.weights if id(v) not in trainable_ids])}"]
    if optimizer_variables:  # once the optimizer has made its state, as Keras prints it
        lines.append(f" Optimizer params: {params_and_bytes(optimizer_variables)}")
    return lines
