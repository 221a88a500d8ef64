"""`check_complex_modes(f, args)`: a function of complex (and real) arrays, every mode, against
central differences along real and imaginary directions (docs/numerics.md, "Complex numbers").

The derivative of f at complex inputs is the R-linear map J of the real and imaginary parts.
Central differences give J u for any direction u: one along the real parts (Re u) and one
along the imaginary parts (i Im u) are taken separately, so that a conjugation error, which
flips the sign of one of the two, cannot cancel out. Each mode is brought to the rules'
convention (JAX's) and checked against them:

- J u: `functional.jvp`, `transforms.jvp`;
- v J (the VJP, paired with u by Re(sum(c * t)): <v J, u> = <v, J u>): `functional.vjp`,
  `transforms.vjp`, `GradientTape.gradient` (TF's convention: conj(vjp(conj(v))));
- for a real-valued f, `functional.grad` and `transforms.grad` (the VJP of v = 1), and
  `functional.jacrev`; for a holomorphic f (`holomorphic=True`), `jacfwd` and `jacrev` with
  holomorphic=True, whose columns are J e_k.

A mode may refuse with a clear error naming the op without complex rules (its message says
"no complex derivative rules"); that is reported, not a failure. Any other exception, or a
number off, raises AssertionError naming the mode.
"""

import numpy as np

from .. import functional as F
from ..reverse.tape import GradientTape
from ..reverse.tensor import constant
from .closeness import assert_close, inner, tolerances

REFUSAL = "no complex derivative rules"


def _normal(rng, like):
    shape, dtype = np.shape(like), np.asarray(like).dtype
    values = rng.standard_normal(shape)
    if dtype.kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return np.asarray(values, dtype=dtype)


def _directions(u, which):
    """The real-part ("real") or imaginary-part ("imag") directions of u; a real argument moves
    along u with the real ones only."""
    out = []
    for t in u:
        if t.dtype.kind != "c":
            out.append(t if which == "real" else np.zeros_like(t))
        else:
            out.append(np.asarray(t.real if which == "real" else 1j * t.imag, dtype=t.dtype))
    return out


def _difference(f, args, direction, eps):
    plus = [np.asarray(a + eps * d, dtype=np.asarray(a).dtype) for a, d in zip(args, direction)]
    minus = [np.asarray(a - eps * d, dtype=np.asarray(a).dtype) for a, d in zip(args, direction)]
    return (np.asarray(f(*plus)) - np.asarray(f(*minus))) / (2 * eps)


def check_complex_modes(f, args, holomorphic=False, seed=0):
    """Check every mode's derivative of f at `args` (arrays, complex or real) against central
    differences along real and imaginary directions; return the list of modes that refused.

    f: a function of NumPy arrays, written with NumPy (or dnp) calls; the source transformer
    needs it defined in a file. holomorphic: f is complex-differentiable with complex inputs
    and outputs (also checks jacfwd / jacrev with holomorphic=True).

    >>> import numpy as np
    >>> check_complex_modes(lambda z: np.sum(np.abs(np.sin(z)) ** 2), [np.array([1 + 1j, 0.5 - 2j])])
    ['transforms (a lambda: no source to read)']
    """
    import dualtape.transforms as dt
    from dualtape.transforms import TransformError

    args = [np.asarray(a) for a in args]
    eps, rtol, atol = tolerances(np.float64)
    rng = np.random.default_rng(seed)
    y = np.asarray(f(*args))
    u = [_normal(rng, a) for a in args]
    v = _normal(rng, y)
    name = getattr(f, "__qualname__", repr(f))
    numeric = {which: _difference(f, args, _directions(u, which), eps) for which in ("real", "imag")}
    refused = []
    argnums = tuple(range(len(args)))

    def check_jvp(mode, jvp):
        for which in ("real", "imag"):
            assert_close(np.asarray(jvp(_directions(u, which))), numeric[which], rtol, atol,
                         what=f"[check_complex_modes] {mode} of {name} along {which} directions "
                              "vs central differences")

    def check_vjp(mode, parts):
        """<v J, u_which> against <v, J u_which> by differences, for both kinds of direction."""
        for which in ("real", "imag"):
            directions = _directions(u, which)
            assert_close(inner(list(parts), directions), inner(v, numeric[which]), rtol,
                         atol * max(1.0, float(np.max(np.abs(v)))),
                         what=f"[check_complex_modes] {mode} of {name}: <vJ, u> along {which} "
                              "directions vs <v, differenced J u>")

    def attempt(mode, run):
        try:
            run()
        except TransformError as error:
            if "complex" not in str(error) and "no source" not in str(error).lower():
                raise
            refused.append(f"{mode}: {str(error).splitlines()[0]}")
        except (TypeError, LookupError) as error:
            if REFUSAL not in str(error):
                raise
            refused.append(f"{mode}: {str(error).splitlines()[0]}")

    attempt("functional.jvp", lambda: check_jvp("functional.jvp", lambda d: F.jvp(f, tuple(args), tuple(d))[1]))
    attempt("functional.vjp", lambda: check_vjp("functional.vjp", F.vjp(f, *args)[1](v)))

    def tape():
        tensors = [constant(a) for a in args]
        with GradientTape() as recorder:
            recorder.watch(tensors)
            out = f(*tensors)
        grads = recorder.gradient(out, tensors, output_gradients=np.conj(v))
        check_vjp("GradientTape (conjugated from TF's convention)", [np.conj(np.asarray(g)) for g in grads])

    if all(a.dtype == args[0].dtype for a in args) and (y.dtype.kind == "c") == (args[0].dtype.kind == "c"):
        attempt("GradientTape", tape)  # (TF refuses ops mixing complex and real tensors)
    if y.dtype.kind != "c":
        if y.shape == ():  # grad is the VJP of 1: times v, the VJP of v
            attempt("functional.grad", lambda: check_vjp(
                "functional.grad", [np.asarray(g) * v for g in F.grad(f, argnums=argnums)(*args)]))
        attempt("functional.jacrev", lambda: check_vjp("functional.jacrev", [
            np.tensordot(v, np.asarray(j), axes=y.ndim) for j in F.jacrev(f, argnums=argnums)(*args)]))
    if holomorphic:
        for api, jac in (("jacfwd", F.jacfwd), ("jacrev", F.jacrev)):
            def run(api=api, jac=jac):
                blocks = jac(f, argnums=argnums, holomorphic=True)(*args)
                for which in ("real", "imag"):
                    directions = _directions(u, which)
                    got = sum(np.tensordot(np.asarray(b), t, axes=np.ndim(t)) for b, t in zip(blocks, directions))
                    assert_close(got, numeric[which], rtol, atol,
                                 what=f"[check_complex_modes] {api}(holomorphic=True) of {name} along "
                                      f"{which} directions vs central differences")
            attempt(f"functional.{api}(holomorphic=True)", run)
    if getattr(f, "__name__", "<lambda>") == "<lambda>":
        refused.append("transforms (a lambda: no source to read)")
        return refused
    attempt("transforms.jvp", lambda: check_jvp(
        "transforms.jvp", lambda d: dt.jvp(f, wrt=argnums)(*args, tuple(d))[1]))
    attempt("transforms.vjp", lambda: check_vjp("transforms.vjp", dt.vjp(f, wrt=argnums)(*args, v)))
    if y.dtype.kind != "c" and y.shape == ():
        attempt("transforms.grad", lambda: check_vjp(
            "transforms.grad", [np.asarray(g) * v for g in dt.grad(f, wrt=argnums)(*args)]))
    return refused
