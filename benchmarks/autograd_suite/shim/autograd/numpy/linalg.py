"""autograd.numpy.linalg: numpy.linalg (dualtape records its calls on traced values)."""

from numpy.linalg import *  # noqa: F401,F403
import numpy.linalg as _module


def T(x):
    """autograd.numpy.linalg's helper: the transpose of the last two axes."""
    import numpy as np
    return np.swapaxes(x, -1, -2)


def _dot(a, b):
    """autograd.numpy.linalg's helper: a batched matrix product (an einsum)."""
    import numpy as np
    return np.einsum("...ij,...jk->...ik", a, b)


def __getattr__(name):
    return getattr(_module, name)
