"""2-D convolution of NHWC images (TF's Conv2D) and its two adjoints, each a primitive.

Conv2D(input, filters) is bilinear, and so are its adjoints Conv2DBackpropInput (the
input's cotangent, a transposed convolution) and Conv2DBackpropFilter (the filters'
cotangent, a correlation of the input with the output's cotangent). The three ops'
rules are written with each other, so every derivative, at any order and in every mode,
is exact: <h, Conv2DBackpropInput(w, g)> = <Conv2D(h, w), g> = <Conv2DBackpropFilter(h, g), w>.

Static arguments are canonical (the surface, `dualtape.nn.conv2d`, resolves TF's forms):
`strides` and `dilations` are (rows, columns), `padding` is ((top, bottom), (left, right)).
Each op is one matrix product: the window taps of the padded input side by side (im2col,
strided views concatenated along channels) times the flattened filters; the input's adjoint
adds each tap of that product back onto the pixels it read (col2im).
"""

import numpy as np

from ..core import dnp
from ..core.registry import defop
from ..core.rulekit import tap_index, window_taps

__all__ = ["conv2d", "conv2d_backprop_input", "conv2d_backprop_filter"]


def _columns(input, window, strides, padding, dilations):  # noqa: A002
    """im2col: every window's taps side by side, (N * Ho * Wo, kh * kw * C), tap-major as the
    filters' (kh, kw, C) axes flatten; and the output's (N, Ho, Wo)."""
    taps = window_taps(input, window, strides, padding, dilations)
    columns = np.concatenate(taps, axis=-1)
    return columns.reshape(-1, columns.shape[-1]), columns.shape[:3]


def _conv2d(input, filters, *, strides, padding, dilations):  # noqa: A002 (TF's name)
    kh, kw, c_in, c_out = np.shape(filters)
    columns, out_shape = _columns(input, (kh, kw), strides, padding, dilations)
    return (columns @ np.reshape(filters, (kh * kw * c_in, c_out))).reshape(out_shape + (c_out,))


def _conv2d_backprop_input(filters, out_backprop, *, input_shape, strides, padding, dilations):
    n, height, width, channels = input_shape
    (top, bottom), (left, right) = padding
    kh, kw, c_in, c_out = np.shape(filters)
    rows, cols = np.shape(out_backprop)[1:3]
    # col2im: each window's cotangent (one GEMM), each tap added back onto the pixels it read
    taps = (np.reshape(out_backprop, (-1, c_out)) @ np.reshape(filters, (kh * kw * c_in, c_out)).T).reshape(
        n, rows, cols, kh * kw, c_in)
    out = np.zeros((n, height + top + bottom, width + left + right, channels), taps.dtype)
    for p in range(kh):
        for q in range(kw):
            out[tap_index(p, q, rows, cols, strides, dilations)] += taps[:, :, :, p * kw + q, :]
    return np.ascontiguousarray(out[:, top:top + height, left:left + width, :])


def _conv2d_backprop_filter(input, out_backprop, *, filter_shape, strides, padding, dilations):  # noqa: A002
    kh, kw, c_in, c_out = filter_shape
    columns, _ = _columns(input, (kh, kw), strides, padding, dilations)
    return (columns.T @ np.reshape(out_backprop, (-1, c_out))).reshape(kh, kw, c_in, c_out)


# -- Conv2D: y = conv(x, w) -----------------------------------------------------------------
def conv2d_vjp_input(g, ans, input, filters, *, strides, padding, dilations):  # noqa: A002
    return dnp.conv2d_backprop_input(filters, g, input_shape=np.shape(input), strides=strides, padding=padding,
                                     dilations=dilations)


def conv2d_vjp_filters(g, ans, input, filters, *, strides, padding, dilations):  # noqa: A002
    return dnp.conv2d_backprop_filter(input, g, filter_shape=np.shape(filters), strides=strides, padding=padding,
                                      dilations=dilations)


def conv2d_jvp_input(dinput, ans, input, filters, *, strides, padding, dilations):  # noqa: A002
    return dnp.conv2d(dinput, filters, strides=strides, padding=padding, dilations=dilations)


def conv2d_jvp_filters(dfilters, ans, input, filters, *, strides, padding, dilations):  # noqa: A002
    return dnp.conv2d(input, dfilters, strides=strides, padding=padding, dilations=dilations)


# -- Conv2DBackpropInput: x_bar = conv^T(w, g) ---------------------------------------------
def backprop_input_vjp_filters(g, ans, filters, out_backprop, *, input_shape, strides, padding, dilations):
    return dnp.conv2d_backprop_filter(g, out_backprop, filter_shape=np.shape(filters), strides=strides,
                                      padding=padding, dilations=dilations)


def backprop_input_vjp_out(g, ans, filters, out_backprop, *, input_shape, strides, padding, dilations):
    return dnp.conv2d(g, filters, strides=strides, padding=padding, dilations=dilations)


def backprop_input_jvp_filters(dfilters, ans, filters, out_backprop, *, input_shape, strides, padding, dilations):
    return dnp.conv2d_backprop_input(dfilters, out_backprop, input_shape=input_shape, strides=strides,
                                     padding=padding, dilations=dilations)


def backprop_input_jvp_out(dout, ans, filters, out_backprop, *, input_shape, strides, padding, dilations):
    return dnp.conv2d_backprop_input(filters, dout, input_shape=input_shape, strides=strides, padding=padding,
                                     dilations=dilations)


# -- Conv2DBackpropFilter: w_bar = corr(x, g) ----------------------------------------------
def backprop_filter_vjp_input(g, ans, input, out_backprop, *, filter_shape, strides, padding, dilations):  # noqa: A002
    return dnp.conv2d_backprop_input(g, out_backprop, input_shape=np.shape(input), strides=strides,
                                     padding=padding, dilations=dilations)


def backprop_filter_vjp_out(g, ans, input, out_backprop, *, filter_shape, strides, padding, dilations):  # noqa: A002
    return dnp.conv2d(input, g, strides=strides, padding=padding, dilations=dilations)


def backprop_filter_jvp_input(dinput, ans, input, out_backprop, *, filter_shape, strides, padding, dilations):  # noqa: A002
    return dnp.conv2d_backprop_filter(dinput, out_backprop, filter_shape=filter_shape, strides=strides,
                                      padding=padding, dilations=dilations)


def backprop_filter_jvp_out(dout, ans, input, out_backprop, *, filter_shape, strides, padding, dilations):  # noqa: A002
    return dnp.conv2d_backprop_filter(input, dout, filter_shape=filter_shape, strides=strides, padding=padding,
                                      dilations=dilations)


# -- samples: SAME with stride 2 on odd and even sizes (symmetric and one-sided padding),
# VALID with a dilation, VALID with a stride that leaves the last row unread
CASES = (
    ((2, 5, 5, 3), (3, 3, 3, 4), (2, 2), ((1, 1), (1, 1)), (1, 1)),
    ((1, 6, 4, 2), (3, 2, 2, 3), (2, 2), ((0, 1), (0, 0)), (1, 1)),
    ((1, 6, 5, 2), (2, 2, 2, 3), (1, 1), ((0, 0), (0, 0)), (2, 2)),
    ((2, 7, 6, 1), (3, 3, 1, 2), (3, 2), ((0, 0), (0, 0)), (1, 1)),
)


def _output_shape(x_shape, w_shape, strides, padding, dilations):
    rows = (x_shape[1] + sum(padding[0]) - (w_shape[0] - 1) * dilations[0] - 1) // strides[0] + 1
    cols = (x_shape[2] + sum(padding[1]) - (w_shape[1] - 1) * dilations[1] - 1) // strides[1] + 1
    return (x_shape[0], rows, cols, w_shape[3])


def _samples(kind):
    def make(case):
        x_shape, w_shape, strides, padding, dilations = case
        static = dict(strides=strides, padding=padding, dilations=dilations)
        y_shape = _output_shape(*case)

        def sample(rng):
            x, w, g = (rng.standard_normal(s) for s in (x_shape, w_shape, y_shape))
            if kind == "conv":
                return (x, w), static
            if kind == "input":
                return (w, g), dict(static, input_shape=x_shape)
            return (x, g), dict(static, filter_shape=w_shape)
        sample.__name__ = f"sample_{kind}_" + "x".join(map(str, x_shape)) + f"_s{strides[0]}{strides[1]}"
        return sample
    return tuple(make(case) for case in CASES)


CONV2D = defop("Conv2D", _conv2d, vjp=(conv2d_vjp_input, conv2d_vjp_filters),
               jvp=(conv2d_jvp_input, conv2d_jvp_filters), samples=_samples("conv"))
CONV2D_BACKPROP_INPUT = defop("Conv2DBackpropInput", _conv2d_backprop_input,
                              vjp=(backprop_input_vjp_filters, backprop_input_vjp_out),
                              jvp=(backprop_input_jvp_filters, backprop_input_jvp_out), samples=_samples("input"))
CONV2D_BACKPROP_FILTER = defop("Conv2DBackpropFilter", _conv2d_backprop_filter,
                               vjp=(backprop_filter_vjp_input, backprop_filter_vjp_out),
                               jvp=(backprop_filter_jvp_input, backprop_filter_jvp_out), samples=_samples("filter"))


def conv2d(input, filters, *, strides=(1, 1), padding=((0, 0), (0, 0)), dilations=(1, 1)):  # noqa: A002
    """TF's Conv2D on NHWC `input` and HWIO `filters`, canonical arguments (see the module doc)."""
    return CONV2D(input, filters, strides=tuple(strides), padding=tuple(map(tuple, padding)),
                  dilations=tuple(dilations))


def conv2d_backprop_input(filters, out_backprop, *, input_shape, strides=(1, 1), padding=((0, 0), (0, 0)),
                          dilations=(1, 1)):
    """The cotangent of conv2d's input for the output cotangent `out_backprop` (a transposed conv)."""
    return CONV2D_BACKPROP_INPUT(filters, out_backprop, input_shape=tuple(input_shape), strides=tuple(strides),
                                 padding=tuple(map(tuple, padding)), dilations=tuple(dilations))


def conv2d_backprop_filter(input, out_backprop, *, filter_shape, strides=(1, 1), padding=((0, 0), (0, 0)),  # noqa: A002
                           dilations=(1, 1)):
    """The cotangent of conv2d's filters for the output cotangent `out_backprop`."""
    return CONV2D_BACKPROP_FILTER(input, out_backprop, filter_shape=tuple(filter_shape), strides=tuple(strides),
                                  padding=tuple(map(tuple, padding)), dilations=tuple(dilations))


dnp.export(globals())
