"""Comparing derivatives: per-dtype tolerances, `assert_close` and the dot-product test
(`assert_adjoint`). Below `check_grads` and `check_modes`, which both use them."""

import numpy as np


# dtype -> (eps, rtol, atol). Central differences lose about half the digits, so float64
# keeps ~5 and float32 ~2; atol is scaled by max(1, max|expected|) in `assert_close`.
TOLERANCES = {
    np.dtype(np.float64): (1e-6, 1e-5, 1e-6),
    np.dtype(np.float32): (1e-3, 2e-2, 2e-3),
    np.dtype(np.float16): (3e-2, 1e-1, 5e-2),
    np.dtype(np.complex128): (1e-6, 1e-5, 1e-6),  # a complex value: two reals of its precision
    np.dtype(np.complex64): (1e-3, 2e-2, 2e-3),
}
# The dot-product identity has no truncation error: only rounding, hence much tighter.
ADJOINT_RTOL = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 1e-4, np.dtype(np.float16): 1e-2,
                np.dtype(np.complex128): 1e-10, np.dtype(np.complex64): 1e-4}


def tolerances(dtype):
    """(eps, rtol, atol) for finite-difference checks at `dtype`."""
    return TOLERANCES.get(np.dtype(dtype), TOLERANCES[np.dtype(np.float32)])


def adjoint_rtol(dtype):
    """Relative tolerance of the dot-product test <u, J^T v> == <J u, v> at `dtype`."""
    return ADJOINT_RTOL.get(np.dtype(dtype), ADJOINT_RTOL[np.dtype(np.float32)])


# -- comparing values -------------------------------------------------------------------------

def as_float64(x):
    """x in float64, or in complex128 when complex (its imaginary part is compared too)."""
    x = np.asarray(x)
    return np.asarray(x, dtype=np.complex128 if x.dtype.kind == "c" else np.float64)


def assert_close(actual, expected, rtol, atol=0.0, what="value"):
    """Raise AssertionError naming `what`, the worst element and the max abs/rel errors.

    Passes where |actual - expected| <= atol * max(1, max|expected|) + rtol * |expected|.
    """
    actual, expected = as_float64(actual), as_float64(expected)
    if actual.shape != expected.shape:
        raise AssertionError(f"{what}: got shape {actual.shape}, expected {expected.shape}.")
    err = np.abs(actual - expected)
    both_nan = np.isnan(actual) & np.isnan(expected)
    err = np.where(both_nan, 0.0, np.where(np.isnan(err), np.inf, err))
    scale = max(1.0, float(np.max(np.abs(np.nan_to_num(expected)), initial=0.0)))
    bound = atol * scale + rtol * np.abs(expected)
    if np.all(err <= bound):
        return
    rel = err / np.maximum(np.abs(expected), np.finfo(np.float64).tiny)
    worst = np.unravel_index(int(np.argmax(err - bound)), err.shape) if err.ndim else ()
    raise AssertionError(
        f"{what}: max abs error {np.max(err):.3g}, max rel error {np.max(rel):.3g} "
        f"(rtol={rtol:g}, atol={atol:g} x {scale:.3g}); worst at index {worst}: "
        f"got {actual[worst]!r}, expected {expected[worst]!r}.")


def inner(xs, ys):
    """Sum of <x_i, y_i> over paired arrays (None counts as zero), in float64.

    Complex values pair by Re(sum(x * y)), without conjugation: the pairing for which a VJP
    in JAX's convention (the rules') is the transpose of the JVP (docs/numerics.md)."""
    if not isinstance(xs, (list, tuple)):
        xs, ys = [xs], [ys]
    total = 0.0
    for x, y in zip(xs, ys, strict=True):
        if x is None or y is None:
            continue
        x, y = as_float64(x), as_float64(y)
        if x.shape != y.shape:
            raise AssertionError(f"[testing.inner] shapes differ: {x.shape} and {y.shape}.")
        if x.dtype.kind == "c" or y.dtype.kind == "c":
            total += float(np.dot(x.ravel(), y.ravel()).real)
        else:
            total += float(np.vdot(x.ravel(), y.ravel()))
    return total


def stable_norm(x):
    x = as_float64(x)
    biggest = float(np.max(np.abs(x), initial=0.0))
    return biggest * float(np.linalg.norm(x / biggest)) if biggest > 0 else 0.0  # no underflow


def norm_product(xs, ys):
    return sum(stable_norm(x) * stable_norm(y) for x, y in zip(xs, ys) if x is not None and y is not None)


def assert_adjoint(us, vjps, jvps, vs, rtol, what="dot-product test"):
    """<u, J^T v> == <J u, v> up to rounding, relative to the sizes of the vectors involved."""
    lhs, rhs = inner(us, vjps), inner(jvps, vs)
    scale = norm_product(us, vjps) + norm_product(jvps, vs)
    if not abs(lhs - rhs) <= rtol * scale:
        raise AssertionError(f"{what}: <u, J^T v> = {lhs!r} but <J u, v> = {rhs!r}; abs error "
                             f"{abs(lhs - rhs):.3g} exceeds rtol={rtol:g} x scale {scale:.3g}.")
