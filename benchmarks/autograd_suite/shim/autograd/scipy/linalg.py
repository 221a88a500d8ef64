"""autograd.scipy.linalg: dualtape.scipy.linalg, then scipy.linalg for what dualtape lacks."""

import scipy.linalg as _scipy_module

import dualtape.scipy.linalg as _dualtape_module


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(_dualtape_module, name)
    except AttributeError:
        return getattr(_scipy_module, name)
