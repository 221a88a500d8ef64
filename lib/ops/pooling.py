"""2-D max and average pooling of NHWC images (TF's MaxPool, AvgPool and AvgPoolGrad).

Static arguments are canonical (the surface, `dualtape.nn.max_pool2d`, resolves TF's):
`ksize` and `strides` are (rows, columns), `padding` is ((top, bottom), (left, right)).
Padding never takes part: a max pool pads with -inf, and an average pool divides each
window's sum by the number of input elements it covers (TF's SAME average).

MaxPool's cotangent goes to the element each window picked (the first maximum in row-major
order on ties, as TF's MaxPoolGrad), through the index rulekit.max_pool_index computes from
the primal; its tangent is the tangent at that element. AvgPool is linear; AvgPoolGrad is
its transpose, so each is the other's VJP.
"""

import numpy as np

from ..core import dnp
from ..core.registry import LINEAR, defop
from ..core.rulekit import max_pool_index, tap_index, unindex_like, window_taps

__all__ = ["max_pool2d", "avg_pool2d", "avg_pool2d_grad"]


def _max_pool(x, *, ksize, strides, padding):
    low = -np.inf if np.asarray(x).dtype.kind in "fc" else np.iinfo(np.asarray(x).dtype).min
    taps = window_taps(x, ksize, strides, padding, fill=low)
    out = taps[0].copy()
    for tap in taps[1:]:
        np.maximum(out, tap, out=out)
    return out


def max_pool_vjp(g, ans, x, *, ksize, strides, padding):
    return unindex_like(g, x, max_pool_index(x, ksize, strides, padding))


def max_pool_jvp(dx, ans, x, *, ksize, strides, padding):
    return dnp.getitem(dx, max_pool_index(x, ksize, strides, padding))


def _window_counts(shape, ksize, strides, padding):
    """How many input elements (not padding) each output window covers, shaped (1, Ho, Wo, 1)."""
    return sum(window_taps(np.ones((1, shape[1], shape[2], 1)), ksize, strides, padding))


def _avg_pool(x, *, ksize, strides, padding):
    taps = window_taps(x, ksize, strides, padding)
    sums = taps[0].copy()
    for tap in taps[1:]:
        sums += tap
    return (sums / _window_counts(np.shape(x), ksize, strides, padding)).astype(np.result_type(x), copy=False)


def _avg_pool_grad(g, *, input_shape, ksize, strides, padding):
    n, height, width, channels = input_shape
    (top, bottom), (left, right) = padding
    rows, cols = np.shape(g)[1:3]
    share = (g / _window_counts(input_shape, ksize, strides, padding)).astype(np.result_type(g), copy=False)
    out = np.zeros((n, height + top + bottom, width + left + right, channels), np.result_type(g))
    for p in range(ksize[0]):
        for q in range(ksize[1]):  # every element of a window gets its share of the window's cotangent
            out[tap_index(p, q, rows, cols, strides)] += share
    return np.ascontiguousarray(out[:, top:top + height, left:left + width, :])


def avg_pool_vjp(g, ans, x, *, ksize, strides, padding):
    return dnp.avg_pool2d_grad(g, input_shape=np.shape(x), ksize=ksize, strides=strides, padding=padding)


def avg_pool_grad_vjp(g, ans, cotangent, *, input_shape, ksize, strides, padding):
    return dnp.avg_pool2d(g, ksize=ksize, strides=strides, padding=padding)


# -- samples: SAME with stride 2 on odd sizes, VALID overlapping windows, one-sided SAME
CASES = (
    ((2, 5, 5, 3), (3, 3), (2, 2), ((1, 1), (1, 1))),
    ((1, 4, 6, 2), (2, 2), (1, 1), ((0, 0), (0, 0))),
    ((1, 6, 5, 2), (2, 3), (2, 2), ((0, 0), (1, 1))),
    ((2, 7, 4, 1), (3, 2), (3, 2), ((0, 0), (0, 0))),
)


def _output_shape(x_shape, ksize, strides, padding):
    rows = (x_shape[1] + sum(padding[0]) - ksize[0]) // strides[0] + 1
    cols = (x_shape[2] + sum(padding[1]) - ksize[1]) // strides[1] + 1
    return (x_shape[0], rows, cols, x_shape[3])


def _samples(kind):
    def make(case):
        x_shape, ksize, strides, padding = case
        static = dict(ksize=ksize, strides=strides, padding=padding)

        def sample(rng):
            if kind == "grad":
                return (rng.standard_normal(_output_shape(*case)),), dict(static, input_shape=x_shape)
            # distinct values: a max pool's derivative jumps where two elements tie
            return (rng.permutation(np.prod(x_shape)).reshape(x_shape) / 7.0 + 0.01 * rng.standard_normal(x_shape),
                    ), static
        sample.__name__ = f"sample_{kind}_" + "x".join(map(str, x_shape)) + f"_k{ksize[0]}{ksize[1]}_s{strides[0]}{strides[1]}"
        return sample
    return tuple(make(case) for case in CASES)


MAX_POOL = defop("MaxPool", _max_pool, vjp=max_pool_vjp, jvp=max_pool_jvp, samples=_samples("max"))
AVG_POOL = defop("AvgPool", _avg_pool, vjp=avg_pool_vjp, jvp=LINEAR, samples=_samples("avg"))
AVG_POOL_GRAD = defop("AvgPoolGrad", _avg_pool_grad, vjp=avg_pool_grad_vjp, jvp=LINEAR, samples=_samples("grad"))


def _canonical(ksize, strides, padding):
    return dict(ksize=tuple(ksize), strides=tuple(strides), padding=tuple(map(tuple, padding)))


def max_pool2d(x, *, ksize, strides, padding=((0, 0), (0, 0))):
    """TF's MaxPool on an NHWC `x`, canonical arguments (see the module doc)."""
    return MAX_POOL(x, **_canonical(ksize, strides, padding))


def avg_pool2d(x, *, ksize, strides, padding=((0, 0), (0, 0))):
    """TF's AvgPool on an NHWC `x`: each window's mean over the input elements it covers."""
    return AVG_POOL(x, **_canonical(ksize, strides, padding))


def avg_pool2d_grad(g, *, input_shape, ksize, strides, padding=((0, 0), (0, 0))):
    """The transpose of avg_pool2d: each window's cotangent shared among the elements it covers."""
    return AVG_POOL_GRAD(g, input_shape=tuple(input_shape), **_canonical(ksize, strides, padding))


dnp.export(globals())
