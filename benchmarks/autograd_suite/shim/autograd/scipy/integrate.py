"""autograd.scipy.integrate: dualtape.scipy.integrate, then scipy.integrate for what dualtape lacks."""

import scipy.integrate as _scipy_module

import dualtape.scipy.integrate as _dualtape_module

from .fallback import first_of


__getattr__ = first_of(_dualtape_module, _scipy_module)
