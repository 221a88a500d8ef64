"""autograd.scipy.special: dualtape.scipy.special, then scipy.special for what dualtape lacks."""

import scipy.special as _scipy_module

import dualtape.scipy.special as _dualtape_module


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(_dualtape_module, name)
    except AttributeError:
        return getattr(_scipy_module, name)
