"""The op declarations: one `defop` per primitive, grouped by kind.

Importing this package declares every op; each module publishes its functions in `dnp` as
it is declared (`dnp.export`), in this order (a later module's name wins).
"""

from . import elementwise, exponentials, trigonometric, floating, activations, reductions, scans, nn  # noqa: F401
from . import shape, joining, indexing, linalg, linalg_np, constructors, image  # noqa: F401
from . import decompositions, fft  # noqa: F401
from . import convolution, pooling  # noqa: F401  (tf.nn.conv2d, max_pool2d, avg_pool2d)

try:  # SciPy is an optional extra (`dualtape[scipy]`): its ops exist only when it is installed
    import scipy.special  # noqa: F401
except ImportError:
    scipy = None
else:
    from . import scipy_special, scipy_bessel, scipy_stats, scipy_multivariate, scipy_linalg, scipy_signal  # noqa: F401
from . import assembly, diagonals, products, statistics, sorting  # noqa: F401  (NumPy's further functions)
from . import writes  # noqa: F401  (functional put_along_axis)
