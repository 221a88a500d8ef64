"""Values leaving a recording `GradientTape`: refused, a deliberate difference from TF.

Inside `with tf.GradientTape() as tape:`, `float(y)`, `math.tanh(y)`, `np.asarray(y)` and a
write of `y` into a NumPy array give a plain number or array the tape cannot see: TF lets it
go, and whatever is computed from it silently gets no gradient (None, or a gradient missing
that path). dualtape refuses such a conversion of a tensor the tape has recorded (one that
depends on a watched tensor or variable), naming the user's line and the fixes.

Still allowed: `.numpy()` (taking a value out on purpose), `bool()` (`if y > 0:`), `int()`,
indexing and `math.floor`, printing, and every conversion outside a recording tape, under
`tape.stop_recording()`, or of a tensor the tape has not recorded. `Variable.assign` of a
recorded value stays allowed too, as in TF (state blocks gradients; moving averages).
"""

import linecache
import os
import sys

import numpy as np

from ..core.errors import RefusalError
from ..core.scipy_hints import escape_hint

# the conversions a recording tape refuses (tensor.py's routes); .numpy() and .item() are
# explicit, the way to take a value out on purpose
ROUTES = frozenset(("float()", "complex()", "np.array / np.asarray", "dualtape.constant()"))

_LIB = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_NUMPY = os.path.dirname(os.path.abspath(np.__file__)) + os.sep
_SKIPPED = (_LIB, _NUMPY, "<frozen ", "<__array_function__")


def recording_tape(tensor, tapes):
    """The user's recording GradientTape (not a functional transform's) on which `tensor`
    depends on a watched source, or None."""
    tensor_id = tensor._id
    for tape in tapes:
        if tensor_id in tape._watched and getattr(tape, "_escape_api", None) is None:
            return tape
    return None


def user_line():
    """'file, line N: source' of the innermost frame outside dualtape, NumPy and SciPy."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_SKIPPED) and f"{os.sep}scipy{os.sep}" not in filename:
            source = linecache.getline(filename, frame.f_lineno).strip()
            return f"{filename}, line {frame.f_lineno}" + (f": {source}" if source else "")
        frame = frame.f_back
    return "an unknown line"


def tape_escape_error(tensor, route):
    """The RefusalError for `tensor`, recorded by a recording tape, leaving through `route`."""
    plain = "a plain Python number" if route in ("float()", "complex()") else "a plain NumPy array"
    return RefusalError(
        f"[GradientTape] a value recorded by this tape (it depends on a watched tensor or "
        f"variable; shape {tuple(np.shape(tensor._value))}, dtype {tensor.dtype.name}) became "
        f"{plain} through {route}, at {user_line()}. Nothing computed from it reaches the tape, so "
        "its gradient would silently be None or miss this path. TensorFlow allows this "
        "silently; dualtape refuses it, a deliberate difference (docs/basics.md, 'The "
        "calculation left the library'). "
        "float() is also what math.* functions and a write into a NumPy array call "
        "(b = np.zeros(2); b[0] = y), and np.array / np.asarray what tf.constant([...]) of "
        "tensors and NumPy functions given a list of tensors call. Fix: keep it a tensor: use "
        "tf.math / np functions (tf.math.tanh(y), np.tanh(y)) instead of math.*, tf.stack / "
        "np.stack instead of np.array or writes into NumPy arrays. To take the value out on "
        "purpose (logging a loss inside the `with` block: print(float(loss))), call "
        "y.numpy() (print(loss.numpy())), or do it under `with tape.stop_recording():`, or "
        "after the `with` block." + escape_hint())  # the SciPy call that did it, if any
