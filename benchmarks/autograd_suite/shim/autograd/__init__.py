"""A stand-in for HIPS autograd, run by dualtape: autograd's public API over dualtape's functional
API, so that autograd's own test suite exercises dualtape (benchmarks/autograd_suite.py).

`autograd.numpy` is NumPy itself (dualtape records NumPy calls on traced values through
`__array_function__` / `__array_ufunc__`), `autograd.scipy` is `dualtape.scipy`, and the
differential operators are autograd's own, built on `make_vjp` (dualtape's tape) and `make_jvp`
(dualtape's dual numbers): core.py.
"""

from .builtins import dict, isinstance, list, tuple, type  # noqa: A004
from .core import primitive  # noqa: F401
from .differential_operators import (  # noqa: F401
    checkpoint,
    deriv,
    elementwise_grad,
    grad,
    grad_and_aux,
    grad_named,
    hessian,
    hessian_tensor_product,
    hessian_vector_product,
    holomorphic_grad,
    jacobian,
    make_ggnvp,
    make_hvp,
    make_jvp,
    make_vjp,
    multigrad_dict,
    tensor_jacobian_product,
    value_and_grad,
    vector_jacobian_product,
)
