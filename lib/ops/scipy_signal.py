"""scipy.signal.convolve as a registry op (N-D; modes 'full', 'valid', 'same'), imported
only when SciPy is installed; scipy.signal itself is imported at the first call.

The rules: the convolution is bilinear, so its JVP convolves each tangent with the other
input, and its VJP correlates the cotangent (padded to the 'full' shape) with the other
input, which is a 'valid' convolution with that input flipped on every axis.
"""

import numpy as np

from ..core import dnp
from ..core.registry import defop
from ..core.rulekit import conv_full_cotangent

__all__ = ["scipy_convolve"]


def _convolve(in1, in2, *, mode="full"):
    import scipy.signal  # noqa: PLC0415 - lazily: importing scipy.signal takes seconds
    return np.asarray(scipy.signal.convolve(in1, in2, mode=mode), dtype=np.result_type(in1, in2))


def convolve_vjp_1(g, ans, in1, in2, *, mode="full"):
    return dnp.scipy_convolve(conv_full_cotangent(g, np.shape(in1), np.shape(in2), mode), dnp.flip(in2), mode="valid")


def convolve_vjp_2(g, ans, in1, in2, *, mode="full"):
    return dnp.scipy_convolve(conv_full_cotangent(g, np.shape(in1), np.shape(in2), mode), dnp.flip(in1), mode="valid")


def convolve_jvp_1(d1, ans, in1, in2, *, mode="full"):
    return dnp.scipy_convolve(d1, in2, mode=mode)


def convolve_jvp_2(d2, ans, in1, in2, *, mode="full"):
    return dnp.scipy_convolve(in1, d2, mode=mode)


def _sample(shape1, shape2, mode):
    def sample(rng):
        return (rng.standard_normal(shape1), rng.standard_normal(shape2)), {"mode": mode}
    sample.__name__ = f"_sample_{len(shape1)}d_{mode}"
    return sample


CONVOLVE = defop("ScipyConvolve", _convolve, (convolve_vjp_1, convolve_vjp_2), (convolve_jvp_1, convolve_jvp_2),
                 samples=(_sample((5,), (3,), "full"), _sample((6,), (3,), "valid"), _sample((5,), (4,), "same"),
                          _sample((4, 5), (2, 3), "full"), _sample((4, 5), (3, 2), "same"),
                          _sample((4, 4), (2, 3), "valid")))


def scipy_convolve(in1, in2, mode="full", method="auto"):
    """scipy.signal.convolve(in1, in2, mode) of N-D arrays, differentiable in both."""
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"[ScipyConvolve] mode must be 'full', 'valid' or 'same', got {mode!r}.")
    return CONVOLVE(in1, in2, mode=mode)


dnp.METHOD_DISPATCH[("scipy.signal", "convolve")] = scipy_convolve  # the transformer, by name
dnp.export(globals())
