"""autograd.scipy on dualtape: `dualtape.scipy`'s modules; a name dualtape.scipy lacks falls
back to SciPy's own function (a NumPy ufunc then runs on traced values through dualtape's
dispatch; a Python function refuses them, naming the fix)."""

from . import integrate, linalg, signal, special, stats  # noqa: F401
