"""`*args` / `**kwargs` in the source transformer (calls/star_args.py): helpers with them get a
version per call shape; `*seq` / `**dict` at a call are spread where the source shows the
items. Every mode against the tape and finite differences (check_modes)."""

import numpy as np
import pytest

import dualtape.transforms as dt
from dualtape.testing import check_modes
from dualtape.transforms import TransformError

X = np.array([0.3, 0.7, 1.2])


def product(*values):
    result = 1.0
    for v in values:
        result = result * v
    return result


def scaled(a, *rest, **options):
    s = a
    for r in rest:
        s = s + r * options["scale"]
    return s * len(rest) + affine(**options) + len(options)


def affine(scale=1.0, shift=0.0):
    return scale * shift + scale


def with_default(a, b=2.0, *rest):
    return a * b + sum(rest)


def varargs_calls(x):
    return product(x[0], x[1]) + product(x[1], x[2], x[0]) + product() + with_default(x[0]) \
        + with_default(x[0], x[1], x[2], x[2])


def spread_calls(x):
    pair = [x[0], x[1]]
    return product(*[x[0], x[1]]) + product(*(x[2], x[0])) + product(*pair) + affine(**{"scale": x[0], "shift": x[1]})


def keyword_calls(x):
    return scaled(x[0], x[1], x[2], scale=x[1], shift=x[0]) + scaled(x[2], scale=2.0)


def zip_star(x):
    rows = [x, x * 2.0]
    s = 0.0
    for a, b in zip(*rows):
        s = s + a * b
    return s + np.sum(np.stack(rows) ** 2)


@pytest.mark.parametrize("fn", [varargs_calls, spread_calls, keyword_calls, zip_star], ids=lambda f: f.__name__)
def test_every_mode(fn):
    report = check_modes(fn, [X])
    assert not report.refused and not report.failures
    for mode in ("jacfwd", "hessian"):
        getattr(dt, mode)(fn)(X)


def test_one_version_per_call_shape():
    source = dt.grad(varargs_calls).source_for(X)
    assert "def product_vjp(values_0, values_1, values_2, bresult=1.0):" in source
    assert "def product_vjp_2(values_0, values_1, bresult=1.0):" in source
    assert "values = (values_0, values_1)" in source
    assert "def with_default_vjp(a, b, rest_0, rest_1, bout=1.0):" in source  # (every positional passed)
    assert "def with_default_vjp_2(a, b=2.0, bout=1.0):" in source


def unknown_length(xs, x):
    return product(*xs) * x


def kwargs_other_use(a, **options):
    return a * sum(options.values())


def calls_other_use(x):
    return kwargs_other_use(x, scale=x)


def keyword_clash(a, **options):
    scale = 2.0
    return a * options["scale"] * scale


def calls_clash(x):
    return keyword_clash(x, scale=x)


@pytest.mark.parametrize("fn, args, words", [
    (unknown_length, (np.array([1.0, 2.0]), 1.0), "`*args` / `**kwargs` in the call of product"),
    (calls_other_use, (1.0,), "this use of `options`"),
    (calls_clash, (1.0,), "the keyword `scale`"),
    (product, (1.0, 2.0), "`*args` / `**kwargs` parameters are not supported"),
], ids=["unknown_length", "kwargs_other_use", "keyword_clash", "top_level"])
def test_refused_loudly(fn, args, words):
    with pytest.raises(dt.TransformError, match=r"test_transforms_star_args.py:\d+") as info:
        dt.grad(fn)(*args)
    assert words in str(info.value)


def test_jit_falls_back_loudly():
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = dt.grad(keyword_calls, jit="fallback")(X)
    np.testing.assert_array_equal(got, dt.grad(keyword_calls)(X))
    assert any("numba cannot compile" in str(w.message) and "scaled" in str(w.message) for w in caught)
    with pytest.warns(RuntimeWarning, match="(?s)numba cannot compile.*has \\*args.*so jit=True: running the uncompiled"):
        np.testing.assert_array_equal(dt.grad(keyword_calls, jit=True)(X), dt.grad(keyword_calls)(X))


def parts_of_two_lengths(w):
    if w[0] > 0:
        return w[:1], w[1:]
    return w[:1], w[1:], w


def zipped_from_a_call_of_unknown_length(w):
    s = 0.0
    for items in zip(*parts_of_two_lengths(w)):
        s = s + np.sum(items[0])
    return s


def test_zip_of_a_call_whose_returns_differ_in_length_is_refused():
    with pytest.raises(TransformError, match=r"`\*args` / `\*\*kwargs` in the call of zip"):
        dt.grad(zipped_from_a_call_of_unknown_length)(np.array([0.5, 1.0]))


def concat_and_multiply(weights, *args):
    cat_state = np.hstack(args + (np.ones((args[0].shape[0], 1)),))
    return np.dot(cat_state, weights)


def rnn_like_step(w, x, h):
    return np.sum(np.tanh(concat_and_multiply(w, x, h)) ** 2)


def test_hstack_of_the_star_tuple_and_a_display():
    # `args + (ones,)`: the items of both sides are known, so hstack gets them written out
    rng = np.random.default_rng(0)
    w, x, h = rng.standard_normal((6, 3)), rng.standard_normal((2, 2)), rng.standard_normal((2, 3))
    report = check_modes(rnn_like_step, [w, x, h])
    assert not report.refused and report.checked, report


V_CONST = np.array([0.467, -0.0])
VV_CONST = np.array([-0.5, 0.7])


def stacked_after_item_writes(x, y):
    ys = [y * 2.0, np.exp(np.tanh(y)), y]
    ys[2] = V_CONST if x > 0.583 else y
    ys[1] = VV_CONST
    return np.sum(np.stack(ys) ** 2) + x


def test_a_list_written_into_is_stacked_by_the_list_op():
    # items assigned after the display: not spread into np.stack([ys[0], ys[1], ys[2]]), whose
    # forward rule met a constant item's scalar zero tangent (jvp and hvp crashed)
    for x in (1.181, 0.2):
        report = check_modes(stacked_after_item_writes, [x, np.array([0.0, 0.162])])
        assert not report.refused and report.checked, report
