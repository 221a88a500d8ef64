"""autograd.scipy.stats: each distribution is a module (autograd's layout: `import
autograd.scipy.stats.multivariate_normal as mvn`) whose methods are dualtape.scipy.stats', then
scipy.stats' for what dualtape lacks."""

import sys
import types

import scipy.stats as _scipy_stats

import dualtape.scipy.stats as _dualtape_stats

from ..fallback import first_of

DISTRIBUTIONS = ("beta", "chi2", "dirichlet", "gamma", "multivariate_normal", "norm", "poisson", "t")


def _distribution_module(name):
    module = types.ModuleType(f"{__name__}.{name}")
    dualtape_dist = getattr(_dualtape_stats, name, None)
    module.__getattr__ = first_of(*[d for d in (dualtape_dist, getattr(_scipy_stats, name)) if d is not None])
    return module


for _name in DISTRIBUTIONS:
    _module = _distribution_module(_name)
    sys.modules[_module.__name__] = _module
    globals()[_name] = _module


__getattr__ = first_of(_dualtape_stats, _scipy_stats)
