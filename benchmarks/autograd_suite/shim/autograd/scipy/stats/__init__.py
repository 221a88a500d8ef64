"""autograd.scipy.stats: each distribution is a module (autograd's layout: `import
autograd.scipy.stats.multivariate_normal as mvn`) whose methods are dualtape.scipy.stats', then
scipy.stats' for what dualtape lacks."""

import sys
import types

import scipy.stats as _scipy_stats

import dualtape.scipy.stats as _dualtape_stats

DISTRIBUTIONS = ("beta", "chi2", "dirichlet", "gamma", "multivariate_normal", "norm", "poisson", "t")


def _distribution_module(name):
    module = types.ModuleType(f"{__name__}.{name}")
    dualtape_dist = getattr(_dualtape_stats, name, None)
    scipy_dist = getattr(_scipy_stats, name)

    def __getattr__(attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        if dualtape_dist is not None and hasattr(dualtape_dist, attr):
            return getattr(dualtape_dist, attr)
        return getattr(scipy_dist, attr)

    module.__getattr__ = __getattr__
    return module


for _name in DISTRIBUTIONS:
    _module = _distribution_module(_name)
    sys.modules[_module.__name__] = _module
    globals()[_name] = _module


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(_dualtape_stats, name)
    except AttributeError:
        return getattr(_scipy_stats, name)
