"""The only helpers rules may call besides `dnp`: small named pieces of derivative maths.

Each helper works on plain arrays and on tensors or dual numbers alike, because it only
calls `dnp` (or shape functions): an outer tape records what it does. Every public name of
this package may appear in a rule (the registry checks it), and the source transformer's
runtime star-imports them. They are written in modules by subject: `shapes` (broadcasting,
reductions, matmul), `arrays` (linalg, shape, indexing), `batched` (the batch-aware helpers of
vectorized jacobians), `decompositions` (svd, eigh, qr, cholesky, ...), `numpy_functions`
(NumPy's further functions: stacking, diagonals, kron, diff, sorting, quantiles), `signal`
(convolution), `fourier` (the FFTs' axes, lengths and half spectra), `stats` (scipy.stats'
scores) and `complex_parts` (real, imag, conj, abs and angle of complex values) and `windows` (the sliding
windows of conv2d and pooling).
"""

import numpy as np

from .. import dnp
from .arrays import *  # noqa: F401,F403
from .batched import *  # noqa: F401,F403
from .complex_parts import *  # noqa: F401,F403
from .decompositions import *  # noqa: F401,F403
from .fourier import *  # noqa: F401,F403
from .shapes import *  # noqa: F401,F403
from .signal import *  # noqa: F401,F403
from .stats import *  # noqa: F401,F403
from .numpy_functions import *  # noqa: F401,F403
from .windows import *  # noqa: F401,F403

# `from dualtape.core.rulekit import *` gives the helpers (and np, dnp), not the modules they
# are written in
_MODULES = {"arrays", "batched", "complex_parts", "decompositions", "fourier", "shapes", "signal", "stats",
            "numpy_functions", "windows"}
__all__ = [name for name in globals() if not name.startswith("_") and name not in _MODULES]
