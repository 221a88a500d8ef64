"""autograd.numpy.fft: numpy.fft (dualtape records its calls on traced values)."""

from numpy.fft import *  # noqa: F401,F403
import numpy.fft as _module


def __getattr__(name):
    return getattr(_module, name)
