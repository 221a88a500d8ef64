"""autograd.scipy.integrate: dualtape.scipy.integrate, then scipy.integrate for what dualtape lacks."""

import scipy.integrate as _scipy_module

import dualtape.scipy.integrate as _dualtape_module


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(_dualtape_module, name)
    except AttributeError:
        return getattr(_scipy_module, name)
