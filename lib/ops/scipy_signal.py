"""scipy.signal.convolve and fftconvolve as one registry op (N-D; modes 'full', 'valid',
'same'; fftconvolve's `axes=`), imported only when SciPy is installed; scipy.signal itself is
imported at the first call.

The rules: the convolution is bilinear, so its JVP convolves each tangent with the other
input, and its VJP correlates the cotangent (padded to the 'full' shape) with the other
input, which is a 'valid' convolution with that input flipped on every convolved axis. With
`axes=`, the other axes are elementwise and broadcast (as fftconvolve): the VJP sums over the
axes along which an input was broadcast.
"""

import numpy as np

from ..core import dnp
from ..core.registry import defop
from ..core.rulekit import conv_full_cotangent, unbroadcast

__all__ = ["scipy_convolve", "scipy_fftconvolve"]


def _convolve(in1, in2, *, mode="full", axes=None):
    import scipy.signal  # noqa: PLC0415 - lazily: importing scipy.signal takes seconds
    if axes is None:
        return np.asarray(scipy.signal.convolve(in1, in2, mode=mode), dtype=np.result_type(in1, in2))
    out = scipy.signal.fftconvolve(in1, in2, mode=mode, axes=axes)  # (SciPy's only convolution with axes)
    return np.asarray(out, dtype=np.result_type(in1, in2, np.float32))


def convolve_vjp_1(g, ans, in1, in2, *, mode="full", axes=None):
    return unbroadcast(dnp.scipy_convolve(conv_full_cotangent(g, np.shape(in1), np.shape(in2), mode, axes),
                                          dnp.flip(in2, axes), mode="valid", axes=axes), np.shape(in1))


def convolve_vjp_2(g, ans, in1, in2, *, mode="full", axes=None):
    return unbroadcast(dnp.scipy_convolve(conv_full_cotangent(g, np.shape(in1), np.shape(in2), mode, axes),
                                          dnp.flip(in1, axes), mode="valid", axes=axes), np.shape(in2))


def convolve_jvp_1(d1, ans, in1, in2, *, mode="full", axes=None):
    return dnp.scipy_convolve(d1, in2, mode=mode, axes=axes)


def convolve_jvp_2(d2, ans, in1, in2, *, mode="full", axes=None):
    return dnp.scipy_convolve(in1, d2, mode=mode, axes=axes)


def _sample(shape1, shape2, mode, axes=None):
    def sample(rng):
        static = {"mode": mode} if axes is None else {"mode": mode, "axes": axes}
        return (rng.standard_normal(shape1), rng.standard_normal(shape2)), static
    sample.__name__ = f"_sample_{len(shape1)}d_{mode}" + ("" if axes is None else "_axes")
    return sample


CONVOLVE = defop("ScipyConvolve", _convolve, (convolve_vjp_1, convolve_vjp_2), (convolve_jvp_1, convolve_jvp_2),
                 samples=(_sample((5,), (3,), "full"), _sample((6,), (3,), "valid"), _sample((5,), (4,), "same"),
                          _sample((4, 5), (2, 3), "full"), _sample((4, 5), (3, 2), "same"),
                          _sample((4, 4), (2, 3), "valid"), _sample((3, 5), (3, 2), "full", (1,)),
                          _sample((1, 6), (3, 3), "valid", (1,)), _sample((2, 3, 5), (2, 1, 3), "same", (0, 2))))


def _check_axes(api, in1, in2, mode, axes):
    """fftconvolve's `axes`, normalized to a sorted tuple (None: every axis), or a ValueError
    naming the op, the shapes and the fix."""
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"[{api}] mode must be 'full', 'valid' or 'same', got {mode!r}.")
    if axes is None:
        return None
    s1, s2 = tuple(np.shape(in1)), tuple(np.shape(in2))
    items = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
    if len(items) == 2 and all(isinstance(a, (list, tuple)) for a in items):
        raise ValueError(f"[{api}] axes={axes!r} is autograd's convention (the axes of in1 and of in2, "
                         "with dot_axes); SciPy's axes= (fftconvolve's) names the axes convolved in both "
                         "inputs, the others elementwise. Fix: move the convolved axes to the same positions "
                         "(np.moveaxis) and pass axes=[...] once; contract dot axes with np.sum / np.einsum.")
    if len(s1) != len(s2):
        raise ValueError(f"[{api}] in1 and in2 should have the same number of dimensions with axes=, got "
                         f"shapes {s1} and {s2}. Fix: add axes of length 1 (x[None]) to the smaller.")
    if not items or not all(isinstance(a, (int, np.integer)) and -len(s1) <= a < len(s1) for a in items):
        raise ValueError(f"[{api}] axes must be one or more ints in [-{len(s1)}, {len(s1)}) for shapes {s1} "
                         f"and {s2}, got {axes!r}.")
    norm = sorted(int(a) % len(s1) for a in items)
    if len(set(norm)) != len(norm):
        raise ValueError(f"[{api}] axes must be unique, got {axes!r}.")
    for i, (a, b) in enumerate(zip(s1, s2)):
        if i not in norm and a != b and 1 not in (a, b):
            raise ValueError(f"[{api}] in1 and in2 do not broadcast on axis {i}, which is not convolved: "
                             f"shapes {s1} and {s2} with axes={axes!r}.")
    if mode == "valid" and not (all(s1[i] >= s2[i] for i in norm) or all(s2[i] >= s1[i] for i in norm)):
        raise ValueError(f"[{api}] mode='valid' needs one input at least as large as the other on every "
                         f"convolved axis, got shapes {s1} and {s2} with axes={axes!r}.")
    return tuple(norm)


def scipy_convolve(in1, in2, mode="full", method="auto", *, axes=None):
    """scipy.signal.convolve(in1, in2, mode) of N-D arrays, differentiable in both; `axes=`
    convolves along those axes only, as scipy.signal.fftconvolve (SciPy's convolve has no axes)."""
    axes = _check_axes("ScipyConvolve", in1, in2, mode, axes)
    if axes is not None and len(axes) == np.ndim(in1):
        axes = None  # every axis: SciPy's convolve itself
    return CONVOLVE(in1, in2, mode=mode, axes=axes)


def scipy_fftconvolve(in1, in2, mode="full", axes=None):
    """scipy.signal.fftconvolve(in1, in2, mode, axes), differentiable in both inputs."""
    axes = _check_axes("ScipyConvolve", in1, in2, mode, axes)
    return CONVOLVE(in1, in2, mode=mode, axes=tuple(range(np.ndim(in1))) if axes is None else axes)


dnp.METHOD_DISPATCH[("scipy.signal", "convolve")] = scipy_convolve  # the transformer, by name
dnp.METHOD_DISPATCH[("scipy.signal", "fftconvolve")] = scipy_fftconvolve
dnp.export(globals())
