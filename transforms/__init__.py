"""dualtape.transforms: reverse and forward mode by source transformation (docs/transforms.md).

`grad(f)` reads `f`'s source and writes a new Python function that computes the forward
values and then the adjoints, one readable line per VJP rule of the registry:

>>> import math, dualtape.transforms as dt
>>> def f(x):
...     return math.sin(x) * x
>>> df = dt.grad(f)              # doctest: +SKIP (needs f in a file)
>>> print(df.source)             # doctest: +SKIP
"""

from .api import grad, vjp
from .api_forward import hessian, hvp, jacfwd, jvp
from .frontend.parse import TransformError

__all__ = ["grad", "vjp", "jvp", "jacfwd", "hvp", "hessian", "TransformError"]
