"""`dualtape.scipy`: SciPy's functions on tensors and dual numbers, as `autograd.scipy`.

SciPy's special functions are NumPy ufuncs, so `scipy.special.gammaln(t)` already works on
traced values; its Python functions (logsumexp, softmax, polygamma) and scipy.stats'
distributions convert their arguments with np.asarray, which a traced value refuses. Call
those from here (`from dualtape.scipy.stats import norm`): the same names and arguments,
running registry ops. The source transformer also accepts SciPy's own spelling. Needs SciPy
(the `scipy` extra); `import dualtape` never does.
"""

from . import integrate, linalg, signal, special, stats  # noqa: F401
