"""autograd.scipy.signal: autograd's convolve(A, B, axes=(axes_A, axes_B), dot_axes=..., mode) is
dualtape.scipy.signal.autograd_convolve (dualtape.scipy.signal.convolve has SciPy's signature)."""

import scipy.signal as _scipy_module

import dualtape.scipy.signal as _dualtape_module

convolve = getattr(_dualtape_module, "autograd_convolve", None) or _dualtape_module.convolve  # (older dualtape)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(_dualtape_module, name)
    except AttributeError:
        return getattr(_scipy_module, name)
