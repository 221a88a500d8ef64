"""autograd.numpy.random: numpy.random (dualtape records its calls on traced values)."""

from numpy.random import *  # noqa: F401,F403
import numpy.random as _module


def __getattr__(name):
    return getattr(_module, name)
