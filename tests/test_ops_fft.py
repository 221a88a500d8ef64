"""np.fft as registry ops (dualtape/ops/fft.py): values, transposes, dtypes, errors, routing.

The VJP rules follow JAX's convention, the transpose under Re sum(a * b):
Re sum(VJP(v) * u) == Re sum(v * JVP(u)) for complex u and v. Besides the dot-product test
of every sample, each public function's VJP is compared with the transpose built column by
column from NumPy's own np.fft (an independent construction), over n/s, axis/axes, norm,
odd and even lengths, real and complex inputs. benchmarks/fft_vs_jax.py compares with JAX.
"""

import importlib.util
import itertools

import numpy as np
import pytest

import dualtape as tf
from dualtape import dnp
from dualtape.core import registry
from dualtape.core.apply_rules import vjp_parts
from dualtape.registry import REGISTRY
from dualtape.testing import numeric_jacobian

# NumPy 2 deprecates s= without axes= (the reference calls here spell NumPy's own defaults)
pytestmark = pytest.mark.filterwarnings("ignore:`axes` should not be `None`:DeprecationWarning")

FFT_OPS = ["FFT", "IFFT", "RFFT", "IRFFT", "HFFT", "IHFFT", "FFTShift", "IFFTShift"]
NAMES = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
         "rfftn", "irfftn", "fftshift", "ifftshift"]
REAL_INPUT = {"rfft", "ihfft", "rfft2", "rfftn"}


def _random(rng, shape, complex_):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if complex_ else x


def _variants():
    """(name, shape, complex input, keywords): a spread of each function's options."""
    out = []
    for name, norm in itertools.product(["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"],
                                        [None, "ortho", "forward"]):
        complex_ = name not in REAL_INPUT
        for shape, kw in [((6,), {}), ((5,), {"n": 8}), ((8,), {"n": 5}), ((3, 4), {"axis": 0, "n": 3}),
                          ((2, 3), {"axis": -1})]:
            out.append((name, shape, complex_, dict(kw, norm=norm)))
        if name in ("fft", "ifft"):
            out.append((name, (5,), False, {"norm": norm}))  # a real input: the real part of the VJP
    for name, norm in itertools.product(["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"],
                                        [None, "ortho", "forward"]):
        complex_ = name not in REAL_INPUT
        for shape, kw in [((3, 4), {}), ((2, 3, 5), {"s": (4, 3)}), ((3, 4, 2), {"axes": (0, -1)}),
                          ((4, 3), {"s": (3, 7), "axes": (1, 0)})]:
            out.append((name, shape, complex_, dict(kw, norm=norm)))
    for name in ("fftshift", "ifftshift"):
        out += [(name, (5,), False, {}), (name, (3, 4), True, {"axes": 1}), (name, (2, 3, 5), False, {"axes": (0, 2)})]
    return out


VARIANTS = _variants()


def _id(variant):
    name, shape, complex_, kw = variant
    return f"{name}-{'x'.join(map(str, shape))}-{'c' if complex_ else 'r'}-" + ",".join(f"{k}={v}" for k, v in kw.items())


def _op_of(name, a, kw):
    """(primitive, static) that dnp.<name> calls for `a` (its argument checks included)."""
    seen = []
    saved = registry.tensor_bind[0]

    def capture(op, args, static):
        seen.append((op, static))
        return op.impl(*[np.asarray(x) for x in args], **static)
    registry.tensor_bind[0] = capture
    try:
        getattr(dnp, name)(tf.constant(a), **kw)
    finally:
        registry.tensor_bind[0] = saved
    (op, static), = seen
    return op, static


def _transpose(f, a, v):
    """The VJP of the real-linear f at cotangent v, in JAX's convention, one input entry at a
    time: Re(r_k) = Re sum(v * f(e_k)) and, for a complex input, Im(r_k) = -Re sum(v * f(i e_k))."""
    flat = np.zeros(a.size, dtype=a.dtype)
    for k in range(a.size):
        unit = np.zeros(a.size, dtype=a.dtype)
        unit[k] = 1
        flat[k] = np.real(np.sum(v * f(unit.reshape(a.shape))))
        if a.dtype.kind == "c":
            flat[k] -= 1j * np.real(np.sum(v * f(1j * unit.reshape(a.shape))))
    return flat.reshape(a.shape)


@pytest.mark.parametrize("variant", VARIANTS, ids=_id)
def test_values_are_numpys(variant):
    name, shape, complex_, kw = variant
    a = _random(np.random.default_rng(1), shape, complex_)
    np.testing.assert_array_equal(getattr(dnp, name)(a, **kw), getattr(np.fft, name)(a, **kw))
    single = a.astype(np.complex64 if complex_ else np.float32)
    assert getattr(dnp, name)(single, **kw).dtype == getattr(np.fft, name)(single, **kw).dtype


@pytest.mark.parametrize("variant", VARIANTS, ids=_id)
def test_vjp_is_the_transpose_built_from_numpy(variant):
    name, shape, complex_, kw = variant
    rng = np.random.default_rng(2)
    a = _random(rng, shape, complex_)
    op, static = _op_of(name, a, kw)
    ans = op.impl(a, **static)
    v = _random(rng, np.shape(ans), np.iscomplexobj(ans))
    vjp, = vjp_parts(op, v, ans, (a,), static, [0])
    assert vjp.dtype == a.dtype and vjp.shape == a.shape
    expected = _transpose(lambda x: getattr(np.fft, name)(x, **kw), a, v)
    np.testing.assert_allclose(vjp, expected, rtol=1e-12, atol=1e-12 * max(1.0, np.max(np.abs(expected))))


@pytest.mark.parametrize("name", FFT_OPS)
def test_dot_product_of_every_sample(name):
    """Re sum(VJP(v) * u) == Re sum(v * JVP(u)), with complex u and v where the op's are."""
    op = REGISTRY[name]
    rng = np.random.default_rng(3)
    for sample in op.samples + (op.complex if isinstance(op.complex, tuple) else ()):
        (a,), static = sample(rng)
        ans = op.impl(a, **static)
        u = _random(rng, a.shape, a.dtype.kind == "c")
        v = _random(rng, np.shape(ans), np.iscomplexobj(ans))
        vjp, = vjp_parts(op, v, ans, (a,), static, [0])
        lhs, rhs = np.real(np.sum(v * op.impl(u, **static))), np.real(np.sum(vjp * u))
        scale = np.linalg.norm(v) * np.linalg.norm(op.impl(u, **static)) + np.linalg.norm(vjp) * np.linalg.norm(u)
        assert abs(lhs - rhs) <= 1e-13 * scale, f"[{name}] {sample.__name__}: {lhs!r} vs {rhs!r}"


@pytest.mark.parametrize("name", FFT_OPS)
def test_jvp_is_the_central_difference_along_real_and_imaginary_directions(name):
    op = REGISTRY[name]
    rng = np.random.default_rng(4)
    for sample in op.samples + (op.complex if isinstance(op.complex, tuple) else ()):
        (a,), static = sample(rng)
        directions = [rng.standard_normal(a.shape)] + ([1j * rng.standard_normal(a.shape)] if a.dtype.kind == "c" else [])
        for u in directions:
            numeric = (op.impl(a + 1e-3 * u, **static) - op.impl(a - 1e-3 * u, **static)) / 2e-3
            np.testing.assert_allclose(op.impl(u, **static), numeric, rtol=1e-9, atol=1e-9,
                                       err_msg=f"[{name}] {sample.__name__}")


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "hfft", "ihfft", "rfft2", "irfftn"])
def test_float32_vjp_within_a_few_ulp_of_float64(name):
    rng = np.random.default_rng(5)
    a = _random(rng, (4, 6), name not in REAL_INPUT)
    kw = {"norm": "ortho"}
    op, static = _op_of(name, a, kw)
    ans = op.impl(a, **static)
    v = _random(rng, np.shape(ans), np.iscomplexobj(ans))
    single = a.astype(np.complex64 if a.dtype.kind == "c" else np.float32)
    v_single = v.astype(np.complex64 if v.dtype.kind == "c" else np.float32)
    vjp64, = vjp_parts(op, v_single.astype(v.dtype), ans, (single.astype(a.dtype),), static, [0])
    vjp32, = vjp_parts(op, v_single, op.impl(single, **static), (single,), static, [0])
    assert vjp32.dtype == single.dtype
    # an FFT's rounding error grows as log2(n) ulp of the largest entry: here at most 8
    assert np.max(np.abs(vjp32 - vjp64)) <= 8 * np.finfo(np.float32).eps * np.max(np.abs(vjp64))


# -- errors: the function, the shapes and the fix --------------------------------------------

X1, X2, Z1 = np.arange(1.0, 7.0), np.arange(1.0, 13.0).reshape(3, 4), np.arange(1.0, 7.0) + 1j
ERRORS = [
    ("fft", X1, {"axis": 1}, np.exceptions.AxisError, "axes=(1,) is out of range for an input of shape (6,)"),
    ("fft2", X1, {}, np.exceptions.AxisError, "axes=(-2, -1) is out of range"),
    ("fft", X1, {"n": 0}, ValueError, "n=0: the number of points must be an int of at least 1"),
    ("ifft", Z1, {"norm": "unitary"}, ValueError, "norm='unitary' is not a normalization"),
    ("rfft", Z1, {}, TypeError, "transforms a real input, got complex128 of shape (6,)"),
    ("ihfft", Z1, {}, TypeError, "transforms a real input"),
    ("irfft", Z1[:1], {}, ValueError, "the default output length along axis 0 is 2 * (1 - 1) = 0"),
    ("hfft", Z1[:1], {}, ValueError, "Pass the output length"),
    ("fftn", X2, {"axes": (0, 0)}, ValueError, "axes=(0, 0) names an axis twice"),
    ("fftn", X2, {"s": (2, 3), "axes": (0,)}, ValueError, "s=(2, 3) and axes=(0,) have different lengths"),
    ("rfftn", X2, {"s": (0, 3)}, ValueError, "s=(0, 3): every length must be an int of at least 1"),
    ("fftn", X2, {"s": (2, 3, 4)}, ValueError, "has more lengths than the input of shape (3, 4) has axes"),
    ("fftn", np.float64(2.0), {}, ValueError, "needs an input with at least one axis"),
    ("fft", X1, {"axis": (0,)}, TypeError, "must be one int"),
    ("fftshift", X2, {"axes": 2}, np.exceptions.AxisError, "axes=2 is out of range for an input of shape (3, 4)"),
    ("fft", X1, {"out": np.zeros(6, complex)}, TypeError, "out= is not supported"),
]


@pytest.mark.parametrize("name, a, kw, error, text", ERRORS, ids=[f"{e[0]}-{sorted(e[2])}" for e in ERRORS])
def test_bad_arguments_name_the_function_the_shape_and_the_fix(name, a, kw, error, text):
    for value in (a, tf.constant(a)):
        with pytest.raises(error) as info:
            getattr(dnp, name)(value, **kw)
        assert str(info.value).startswith(f"[{name}] ") and text in str(info.value)


# -- routing: NumPy's functions on traced values, fftfreq as constants -----------------------

def test_numpy_fft_functions_dispatch_to_dnp():
    for name in NAMES:
        assert dnp.NUMPY_DISPATCH[getattr(np.fft, name)] is getattr(dnp, name)
    z = tf.constant(np.arange(6.0) + 0.5j)
    out = np.fft.fft(z, n=4, norm="ortho")
    assert isinstance(out, tf.Tensor)
    np.testing.assert_array_equal(out.numpy(), np.fft.fft(np.arange(6.0) + 0.5j, n=4, norm="ortho"))


def _shifted_loss(x):
    y = np.fft.fftshift(x, axes=0) * np.fft.fftfreq(np.shape(x)[0])[:, None]
    return np.sum(np.fft.ifftshift(y * y) * np.fft.rfftfreq(7)[None, :np.shape(x)[1]])


def test_fftshift_and_fftfreq_in_every_mode(tmp_path):
    x = np.random.default_rng(6).standard_normal((5, 3))
    expected = numeric_jacobian(_shifted_loss, [x], 0)
    with tf.GradientTape() as tape:
        t = tf.constant(x)
        tape.watch(t)
        y = _shifted_loss(t)
    np.testing.assert_allclose(tape.gradient(y, t).numpy(), expected, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(tf.grad(_shifted_loss)(x), expected, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(tf.jacfwd(_shifted_loss)(x), expected, rtol=1e-7, atol=1e-9)
    f = _module_function(tmp_path, "shift_loss", _SHIFT_SOURCE)
    import dualtape.transforms as dt
    np.testing.assert_allclose(dt.grad(f)(x), expected, rtol=1e-7, atol=1e-9)


_SHIFT_SOURCE = '''
import numpy as np

def f(x):
    y = np.fft.fftshift(x, axes=0) * np.fft.fftfreq(np.shape(x)[0])[:, None]
    return np.sum(np.fft.ifftshift(y * y) * np.fft.rfftfreq(7)[None, :np.shape(x)[1]])
'''

_SPECTRAL_SOURCE = '''
import numpy as np

def f(x, w):
    y = np.fft.irfft(np.fft.rfft(x, n=9) * w, n=7)
    z = np.fft.fft2(np.reshape(y, (7, 1)) * x[:4], norm="ortho")
    return np.sum(np.real(z) * y[:, None]) + np.sum(np.fft.hfft(np.fft.ihfft(x), 5) ** 2)
'''


def _module_function(tmp_path, stem, source):
    path = tmp_path / f"{stem}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


def test_transformer_differentiates_real_losses_through_spectra(tmp_path):
    """The 1-D transforms are compositions of the N-D ops (n= becomes s=(n,)); hfft and
    ihfft map to their ops; the generated adjoint agrees with differences."""
    import dualtape.transforms as dt
    f = _module_function(tmp_path, "spectral_loss", _SPECTRAL_SOURCE)
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal(6), rng.standard_normal(5)
    df = dt.grad(f, wrt=0)
    assert "np.fft.rfftn(a, fft_single_length(n), (axis,), norm)" in df.source
    np.testing.assert_allclose(df(x, w), numeric_jacobian(f, [x, w], 0), rtol=1e-7, atol=1e-9)


# -- tf.signal: TF's innermost-axis transforms -------------------------------------------------

def test_tf_signal_values_and_dtypes():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 4, 6)).astype(np.float32)
    z = (x + 1j * rng.standard_normal((3, 4, 6))).astype(np.complex64)
    for tf_fn, np_fn, arg in [(tf.signal.fft, np.fft.fft, z), (tf.signal.ifft, np.fft.ifft, z),
                              (tf.signal.fft2d, np.fft.fft2, z), (tf.signal.ifft2d, np.fft.ifft2, z),
                              (tf.signal.fft3d, np.fft.fftn, z), (tf.signal.ifft3d, np.fft.ifftn, z),
                              (tf.signal.rfft, np.fft.rfft, x), (tf.signal.irfft, np.fft.irfft, z),
                              (tf.signal.rfft2d, np.fft.rfft2, x), (tf.signal.irfft2d, np.fft.irfft2, z),
                              (tf.signal.rfft3d, np.fft.rfftn, x), (tf.signal.irfft3d, np.fft.irfftn, z),
                              (tf.signal.fftshift, np.fft.fftshift, x), (tf.signal.ifftshift, np.fft.ifftshift, z)]:
        out = tf_fn(tf.constant(arg))
        assert isinstance(out, tf.Tensor) and out.dtype.as_numpy_dtype == np_fn(arg).dtype, tf_fn.__name__
        np.testing.assert_array_equal(out.numpy(), np_fn(arg))
    np.testing.assert_array_equal(tf.signal.rfft(x, fft_length=[9]).numpy(), np.fft.rfft(x, n=9))
    np.testing.assert_array_equal(tf.signal.irfft(z, fft_length=tf.constant([7])).numpy(), np.fft.irfft(z, n=7))
    np.testing.assert_array_equal(tf.signal.rfft2d(x, fft_length=[3, 5]).numpy(), np.fft.rfft2(x, s=(3, 5)))


@pytest.mark.parametrize("call, error, text", [
    (lambda: tf.signal.fft(tf.constant([1.0, 2.0])), TypeError, "[tf.signal.fft] needs a complex64 or complex128 input"),
    (lambda: tf.signal.rfft(tf.constant([1.0 + 1j])), TypeError, "[tf.signal.rfft] needs a float32 or float64 input"),
    (lambda: tf.signal.rfft(tf.constant([1.0, 2.0]), fft_length=[2, 2]), ValueError, "fft_length must hold 1"),
    (lambda: tf.signal.fft2d(tf.constant([1.0 + 1j])), ValueError, "transforms the innermost 2 axes"),
])
def test_tf_signal_errors(call, error, text):
    with pytest.raises(error) as info:
        call()
    assert text in str(info.value)


# -- the modes on complex values (JAX's convention; the tape's is TF's, its conjugate) ----------

@pytest.mark.parametrize("variant", VARIANTS[::3], ids=_id)
def test_functional_api_tape_and_duals_agree_with_the_transpose(variant):
    name, shape, complex_, kw = variant
    rng = np.random.default_rng(9)
    a, u = _random(rng, shape, complex_), _random(rng, shape, complex_)
    f = lambda x: getattr(np.fft, name)(x, **kw)  # noqa: E731  (NumPy's own function, dispatched)
    ans, pullback = tf.vjp(f, a)
    v = _random(rng, np.shape(ans), np.iscomplexobj(ans))
    expected = _transpose(f, a, v)
    tolerance = dict(rtol=1e-12, atol=1e-12 * max(1.0, np.max(np.abs(expected))))
    np.testing.assert_allclose(pullback(v)[0], expected, **tolerance)
    np.testing.assert_allclose(tf.jvp(f, (a,), (u,))[1], f(u), rtol=1e-12, atol=1e-12)
    x = tf.constant(a)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    tape_gradient = tape.gradient(y, x, output_gradients=tf.constant(np.conj(v))).numpy()
    np.testing.assert_allclose(np.conj(tape_gradient), expected, **tolerance)


def test_grad_of_a_real_loss_of_a_complex_input_is_jaxs():
    """grad of L(z) = sum |fft(z)|^2 / n = sum |z|^2 (Parseval) is 2 conj(z) in JAX's
    convention; the tape's (TF's) is its conjugate, 2 z."""
    z = np.random.default_rng(10).standard_normal(6) + 1j * np.random.default_rng(11).standard_normal(6)
    loss = lambda x: np.sum(np.abs(np.fft.fft(x, norm="ortho")) ** 2)  # noqa: E731
    np.testing.assert_allclose(tf.grad(loss)(z), 2 * np.conj(z), rtol=1e-12)
    t = tf.constant(z)
    with tf.GradientTape() as tape:
        tape.watch(t)
        y = loss(t)
    np.testing.assert_allclose(tape.gradient(y, t).numpy(), 2 * z, rtol=1e-12)


@pytest.mark.parametrize("variant", VARIANTS[1::4], ids=_id)
def test_transformer_vjp_and_jvp_are_the_transpose_and_the_op(variant, tmp_path):
    import dualtape.transforms as dt
    name, shape, complex_, kw = variant
    arguments = ", ".join(f"{k}={v!r}" for k, v in kw.items())
    f = _module_function(tmp_path, f"fft_{name}", f"import numpy as np\n\n\ndef f(a):\n"
                                                   f"    return np.fft.{name}(a, {arguments})\n")
    rng = np.random.default_rng(12)
    a, u = _random(rng, shape, complex_), _random(rng, shape, complex_)
    ans = f(a)
    v = _random(rng, np.shape(ans), np.iscomplexobj(ans))
    expected = _transpose(f, a, v)
    got = dt.vjp(f)(a, v)
    got = got[0] if isinstance(got, tuple) else got
    assert np.asarray(got).dtype == a.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12 * max(1.0, np.max(np.abs(expected))))
    tangent = dt.jvp(f)(a, u)
    np.testing.assert_allclose(tangent[1] if isinstance(tangent, tuple) else tangent, f(u), rtol=1e-12, atol=1e-12)


# -- HIPS autograd's tests/test_fft.py, ported: check_grads(modes=["rev"]) to second order -------

def _reverse_agrees_with_differences(fun, args, rng):
    """autograd's reverse-mode check: for each argument, Re sum(vjp * d) equals the central
    difference of Re sum(v * fun) along a random real direction d, and, for a complex argument,
    along an imaginary one (JAX's and autograd's convention)."""
    out = fun(*args)
    v = _random(rng, np.shape(out), np.iscomplexobj(out))
    _, pullback = tf.vjp(fun, *args)
    cotangents = pullback(v)
    for i, (x, cotangent) in enumerate(zip(args, cotangents)):
        assert np.asarray(cotangent).dtype == np.asarray(x).dtype and np.shape(cotangent) == np.shape(x)
        directions = [rng.standard_normal(np.shape(x))]
        if np.iscomplexobj(x):
            directions.append(1j * rng.standard_normal(np.shape(x)))
        for d in directions:
            shifted = [list(args), list(args)]
            shifted[0][i], shifted[1][i] = x + 1e-3 * d, x - 1e-3 * d
            numeric = np.real(np.sum(v * (fun(*shifted[0]) - fun(*shifted[1])))) / 2e-3
            analytic = np.real(np.sum(cotangent * d))
            assert np.isclose(analytic, numeric, rtol=1e-8, atol=1e-10), (i, analytic, numeric)
    return v


def _autograd_check_grads(fun, x, rng):
    """Order 2, as autograd's default: the check on fun, then on its VJP as a function of (x, v)."""
    v = _reverse_agrees_with_differences(fun, [x], rng)
    _reverse_agrees_with_differences(lambda x, v: tf.vjp(fun, x)[1](v)[0], [x, v], rng)


def _autograd_cases():
    rng = np.random.default_rng(1)
    r = lambda *shape: rng.standard_normal(shape)  # noqa: E731
    cases = [("fft", np.fft.fft, r(5, 5)), ("fft_ortho", lambda x: np.fft.fft(x, norm="ortho"), r(5, 5)),
             ("fft_axis", lambda x: np.fft.fft(x, axis=0), r(5, 5)), ("ifft", np.fft.ifft, r(5, 5)),
             ("fft2", np.fft.fft2, r(5, 5) / 10), ("ifft2", np.fft.ifft2, r(5, 5)), ("fftn", np.fft.fftn, r(5, 5) / 10),
             ("ifftn", np.fft.ifftn, r(5, 5)), ("rfft", np.fft.rfft, r(4, 4) / 10),
             ("rfft_ortho", lambda x: np.fft.rfft(x, norm="ortho"), r(4, 4) / 10),
             ("rfft_axes", lambda x: np.fft.rfft(x, axis=0), r(4, 4) / 10),
             ("irfft", np.fft.irfft, np.fft.rfft(r(4, 4) / 10)),
             ("irfft_ortho", lambda x: np.fft.irfft(x, norm="ortho"), np.fft.rfft(r(4, 4) / 10)),
             ("rfft2", np.fft.rfft2, r(4, 4) / 10), ("irfft2", np.fft.irfft2, np.fft.rfft2(r(4, 4) / 10)),
             ("rfftn", np.fft.rfftn, r(4, 4, 4) / 10),
             ("rfftn_odd", np.fft.rfftn, r(5, 5, 5) / 10),  # autograd: NotImplementedError; here it works
             ("rfftn_subset", lambda x: np.fft.rfftn(x)[(0, 1, 0), (3, 3, 2)], r(4, 4, 4) / 10),
             ("rfftn_axes", lambda x: np.fft.rfftn(x, axes=(0, 2)), r(4, 4, 4) / 10),
             ("irfftn", np.fft.irfftn, np.fft.rfftn(r(4, 4, 4) / 10)),
             ("irfftn_subset", lambda x: np.fft.irfftn(x)[(0, 1, 0), (3, 3, 2)], np.fft.rfftn(r(4, 4, 4) / 10)),
             ("fftshift", np.fft.fftshift, r(5, 5) / 10), ("fftshift_even", np.fft.fftshift, r(4, 4) / 10),
             ("fftshift_axes", lambda x: np.fft.fftshift(x, axes=1), r(5, 5) / 10),
             ("ifftshift", np.fft.ifftshift, r(5, 5)), ("ifftshift_even", np.fft.ifftshift, r(4, 4)),
             ("ifftshift_axes", lambda x: np.fft.ifftshift(x, axes=1), r(5, 5))]
    for fn, d in [(np.fft.fft, 5), (np.fft.ifft, 5), (np.fft.rfft, 4), (np.fft.irfft, 4)]:
        for change, size in ((-2, "smaller"), (2, "bigger")):
            mat = r(d, d)
            mat = np.fft.rfft(mat) if fn is np.fft.irfft else mat
            cases.append((f"{fn.__name__}_n_{size}", lambda x, fn=fn, n=d + change: fn(x, n), mat))
    for fn, d in [(np.fft.fft2, 5), (np.fft.ifft2, 5), (np.fft.fftn, 5), (np.fft.ifftn, 5), (np.fft.rfft2, 4),
                  (np.fft.irfft2, 4), (np.fft.rfftn, 4), (np.fft.irfftn, 4)]:
        mat = r(d, d, d) / 10
        mat = getattr(np.fft, fn.__name__[1:])(mat) if fn.__name__.startswith("ir") else mat
        cases.append((f"{fn.__name__}_s", lambda x, fn=fn, d=d: fn(x, s=[d + 2, d - 2], axes=[0, 2]), mat))
    return cases


AUTOGRAD_CASES = _autograd_cases()


@pytest.mark.parametrize("name, fun, x", AUTOGRAD_CASES, ids=[case[0] for case in AUTOGRAD_CASES])
def test_autograd_fft_suite(name, fun, x):
    _autograd_check_grads(fun, x, np.random.default_rng(13))


# -- whole functions through every mode (dualtape.testing.check_complex_modes) ---------------------

def spectral_filter(z, h):
    """A real loss of a complex signal filtered in frequency (n= pads it to 8 points)."""
    return np.sum(np.abs(np.fft.ifft(np.fft.fft(z, n=8) * h, norm="ortho")) ** 2)


def real_spectrum(x):
    """A real input's 2-D half spectrum, resized (s=), of a nonlinear function of it."""
    return np.fft.rfft2(np.sin(x), s=(3, 5), norm="ortho")


def shifted_spectrum(z):
    """Holomorphic: the DFTs are complex-linear."""
    return np.fft.fftshift(np.fft.fftn(z * z, axes=(0,)), axes=0)


def hermitian_transforms(z):
    """hfft and irfft read a half spectrum (imaginary parts of DC and Nyquist ignored)."""
    return np.fft.hfft(z, 7) * np.fft.irfft(z * 1j, 6, norm="forward")[:1] + np.real(np.fft.ihfft(np.abs(z), 5)[1])


MODE_CASES = [(spectral_filter, lambda rng: [_random(rng, (6,), True), rng.standard_normal(8)], False),
              (real_spectrum, lambda rng: [rng.standard_normal((4, 6))], False),
              (shifted_spectrum, lambda rng: [_random(rng, (3, 2), True)], True),
              (hermitian_transforms, lambda rng: [_random(rng, (4,), True)], False)]


@pytest.mark.parametrize("f, make_args, holomorphic", MODE_CASES, ids=[case[0].__name__ for case in MODE_CASES])
def test_whole_functions_in_every_mode(f, make_args, holomorphic):
    from dualtape.testing import check_complex_modes
    refused = check_complex_modes(f, make_args(np.random.default_rng(14)), holomorphic=holomorphic)
    assert refused == [], refused
