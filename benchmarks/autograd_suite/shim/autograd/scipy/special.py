"""autograd.scipy.special: dualtape.scipy.special, then scipy.special for what dualtape lacks."""

import scipy.special as _scipy_module

import dualtape.scipy.special as _dualtape_module

from .fallback import first_of


__getattr__ = first_of(_dualtape_module, _scipy_module)
