"""autograd.numpy.linalg: numpy.linalg (dualtape records its calls on traced values)."""

from numpy.linalg import *  # noqa: F401,F403
import numpy.linalg as _module


def __getattr__(name):
    return getattr(_module, name)
