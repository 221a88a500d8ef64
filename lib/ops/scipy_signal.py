"""scipy.signal.convolve and fftconvolve as one registry op (N-D; modes 'full', 'valid',
'same'; fftconvolve's `axes=`), imported only when SciPy is installed; scipy.signal itself is
imported at the first call.

The rules: the convolution is bilinear, so its JVP convolves each tangent with the other
input, and its VJP correlates the cotangent (padded to the 'full' shape) with the other
input, which is a 'valid' convolution with that input flipped on every convolved axis. With
`axes=`, the other axes are elementwise and broadcast (as fftconvolve): the VJP sums over the
axes along which an input was broadcast.

autograd's generalization, `convolve(A, B, axes=([...], [...]), dot_axes=([...], [...]))`, is
`autograd_convolve`, composed of that op: the convolved axes of A and of B (paired in order) and the dot axes (summed
over) move last, every other axis of A and then of B becomes an axis of the result (an outer
product: each input gets length-1 axes where the other has its own), and the convolution of the
two runs along the convolved axes, elementwise and broadcast along the others.
"""

import numpy as np

from ..core import dnp
from ..core.registry import defop
from ..core.rulekit import conv_full_cotangent, unbroadcast

__all__ = ["scipy_convolve", "scipy_fftconvolve", "autograd_convolve"]


def _convolve(in1, in2, *, mode="full", axes=None):
    import scipy.signal  # noqa: PLC0415 - lazily: importing scipy.signal takes seconds
    _refuse_autograd_axes("ScipyConvolve", axes)  # (the transformer maps convolve's calls to this op)
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
    _refuse_autograd_axes(api, axes)
    items = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
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


def _pair_axes(api, shape, axes, what):
    """One input's axes of autograd's `axes=` / `dot_axes=` pair, checked: distinct ints in range."""
    out = [int(a) for a in axes]
    if len(set(a % len(shape) if shape else a for a in out)) != len(out) or \
            not all(-len(shape) <= a < len(shape) for a in out):
        raise ValueError(f"[{api}] {what}={axes!r} must be distinct axes of an input of shape {shape}.")
    return [a % len(shape) for a in out]


def autograd_convolve(in1, in2, axes=None, dot_axes=None, mode="full"):
    """autograd.scipy.signal.convolve(A, B, axes=(axes_A, axes_B), dot_axes=(dot_A, dot_B), mode):
    the result's axes are A's other axes, then B's, then one per convolved pair; dot axes are
    summed over (see the module doc). `axes=None`: every axis of both.

    >>> autograd_convolve(np.ones((2, 3)), np.ones((2, 2)), axes=([1], [1]), dot_axes=([0], [0])).tolist()
    [2.0, 4.0, 4.0, 2.0]
    """
    api = "ScipyConvolve"
    s1, s2 = tuple(np.shape(in1)), tuple(np.shape(in2))
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"[{api}] mode must be 'full', 'valid' or 'same', got {mode!r}.")
    axes = (list(range(len(s1))), list(range(len(s2)))) if axes is None else axes
    dot_axes = ([], []) if dot_axes is None else dot_axes
    if len(axes) != 2 or len(dot_axes) != 2:
        raise ValueError(f"[{api}] autograd's axes= and dot_axes= are pairs (the axes of in1, the axes of in2), "
                         f"got axes={axes!r}, dot_axes={dot_axes!r} for shapes {s1} and {s2}.")
    conv1, conv2 = _pair_axes(api, s1, axes[0], "axes"), _pair_axes(api, s2, axes[1], "axes")
    dot1, dot2 = _pair_axes(api, s1, dot_axes[0], "dot_axes"), _pair_axes(api, s2, dot_axes[1], "dot_axes")
    if len(conv1) != len(conv2) or len(dot1) != len(dot2) or set(conv1) & set(dot1) or set(conv2) & set(dot2):
        raise ValueError(f"[{api}] axes={axes!r} and dot_axes={dot_axes!r} must pair as many axes of in1 (shape "
                         f"{s1}) as of in2 (shape {s2}), no axis being both convolved and dotted.")
    if any(s1[i] != s2[j] for i, j in zip(dot1, dot2)):
        raise ValueError(f"[{api}] dot_axes={dot_axes!r} pairs axes of different lengths in shapes {s1} and {s2}.")
    if mode == "valid" and not (all(s1[i] >= s2[j] for i, j in zip(conv1, conv2))
                                or all(s2[j] >= s1[i] for i, j in zip(conv1, conv2))):
        raise ValueError(f"[{api}] mode='valid' needs one input at least as large as the other on every convolved "
                         f"axis, got shapes {s1} and {s2} with axes={axes!r}.")
    other1 = [i for i in range(len(s1)) if i not in conv1 and i not in dot1]
    other2 = [j for j in range(len(s2)) if j not in conv2 and j not in dot2]
    a = dnp.reshape(dnp.transpose(in1, other1 + dot1 + conv1),
                    [s1[i] for i in other1] + [1] * len(other2) + [s1[i] for i in dot1 + conv1])
    b = dnp.reshape(dnp.transpose(in2, other2 + dot2 + conv2),
                    [1] * len(other1) + [s2[j] for j in other2 + dot2 + conv2])
    outer, dotted = len(other1) + len(other2), len(dot1)
    if mode == "same":  # SciPy's 'same' keeps in1's shape on every axis, broadcast ones too: give it B's axes
        a = dnp.broadcast_to(a, [s1[i] for i in other1] + [s2[j] for j in other2] + [s1[i] for i in dot1 + conv1])
    out = scipy_convolve(a, b, mode, axes=list(range(outer + dotted, np.ndim(a)))) if conv1 else a * b
    return dnp.sum(out, axis=tuple(range(outer, outer + dotted))) if dot1 else out


def _refuse_autograd_axes(api, axes):
    if axes is not None and not isinstance(axes, (int, np.integer)) and len(axes) == 2 and \
            all(isinstance(a, (list, tuple)) for a in axes):
        raise ValueError(f"[{api}] axes={axes!r} is autograd's convention (the axes of in1 and of in2, with "
                         "dot_axes); SciPy's axes= (fftconvolve's) names the axes convolved in both inputs, the "
                         "others elementwise. Fix: call dualtape.scipy.signal.autograd_convolve(in1, in2, "
                         "axes=..., dot_axes=..., mode=...) for autograd's, or pass SciPy's axes=[...].")


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
