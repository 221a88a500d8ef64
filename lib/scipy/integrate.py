"""`dualtape.scipy.integrate`: odeint, differentiable by the adjoint ODE (as autograd's)."""

from ..custom.odeint import odeint  # noqa: F401
