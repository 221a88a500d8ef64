"""`dualtape.scipy.linalg`: scipy.linalg's differentiable functions (solve_triangular,
solve_sylvester, solve_banded, expm, sqrtm, cholesky), for tensors and dual numbers."""

from ..ops.scipy_linalg import scipy_cholesky as cholesky  # noqa: F401
from ..ops.scipy_linalg import scipy_expm as expm  # noqa: F401
from ..ops.scipy_linalg import scipy_solve_sylvester as solve_sylvester  # noqa: F401
from ..ops.scipy_linalg import scipy_solve_triangular as solve_triangular  # noqa: F401
from ..ops.scipy_linalg import scipy_sqrtm as sqrtm  # noqa: F401
from ..ops.scipy_linalg import scipy_solve_banded as solve_banded  # noqa: F401
