"""autograd.scipy.signal: dualtape.scipy.signal, then scipy.signal for what dualtape lacks."""

import scipy.signal as _scipy_module

import dualtape.scipy.signal as _dualtape_module


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(_dualtape_module, name)
    except AttributeError:
        return getattr(_scipy_module, name)
