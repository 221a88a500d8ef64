"""autograd.scipy.linalg: dualtape.scipy.linalg, then scipy.linalg for what dualtape lacks."""

import scipy.linalg as _scipy_module

import dualtape.scipy.linalg as _dualtape_module

from .fallback import first_of


__getattr__ = first_of(_dualtape_module, _scipy_module)
