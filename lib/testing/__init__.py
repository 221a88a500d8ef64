"""Gradient checks and hypothesis strategies: what the registry-generated tests are built from.

`check_grads` compares reverse mode (and forward mode, where `dualtape.functional.jvp`
exists) with central finite differences, and ties the modes together with the dot-product
identity <v, J u> == <J^T v, u>. The strategies draw inputs for any registry primitive:
elementwise ops from their rule signature and `domain`, every other op from its `samples`.

>>> import numpy as np, dualtape
>>> check_grads(lambda x: dualtape.dnp.sin(x) * x, [np.linspace(-1.0, 1.0, 5)], order=2)
"""


import numpy as np

from ..core import dnp as _dnp
from ..core.apply_rules import jvp_output, vjp_parts
from ..core.registry import NOT_DIFFERENTIABLE
from ..reverse.tape import GradientTape, UnconnectedGradients
from ..reverse.tensor import Tensor, constant
from .closeness import (as_float64, norm_product, adjoint_rtol, assert_adjoint, assert_close, inner,  # noqa: F401
                        tolerances)
from .strategies import (DOMAIN_KEYWORDS, arrays, broadcastable_shapes, complex_inputs_for,  # noqa: F401
                         cotangent_like, input_names, inputs_for, tangents_like)
from ..functional import jvp as _functional_jvp
from ..functional import vjp as _functional_vjp

HAS_FORWARD_MODE = _functional_jvp is not None

_MAX_COORDINATES = 200  # beyond this many elements, check random directions instead


# -- finite differences ------------------------------------------------------------------------

def _shift(a, t, step):
    a = np.asarray(a)
    return np.asarray(a + step * np.asarray(t, dtype=a.dtype), dtype=a.dtype)


def central_difference(f, args, tangents, eps):
    """(f(args + eps t) - f(args - eps t)) / 2 eps: f's derivative along `tangents`.

    tangents: one array (or None: keep fixed) per argument. If f returns a list or tuple,
    so does this, one float64 array per output.
    """
    plus = [a if t is None else _shift(a, t, eps) for a, t in zip(args, tangents, strict=True)]
    minus = [a if t is None else _shift(a, t, -eps) for a, t in zip(args, tangents, strict=True)]
    hi, lo = f(*plus), f(*minus)
    if isinstance(hi, (list, tuple)):
        return [(as_float64(h) - as_float64(l)) / (2 * eps) for h, l in zip(hi, lo)]
    return (as_float64(hi) - as_float64(lo)) / (2 * eps)


def numeric_jacobian(f, args, argnum=0, eps=1e-6):
    """d f / d args[argnum] by central differences, shaped f's output shape + the arg's shape."""
    x = np.asarray(args[argnum])
    columns = []
    for k in range(x.size):
        basis = np.zeros(x.size, dtype=x.dtype)
        basis[k] = 1
        tangents = [None] * len(args)
        tangents[argnum] = basis.reshape(x.shape)
        columns.append(central_difference(f, args, tangents, eps))
    out_shape = columns[0].shape if columns else np.shape(f(*args))
    if not columns:
        return np.zeros(out_shape + x.shape)
    return np.stack(columns, axis=-1).reshape(out_shape + x.shape)


# -- applying one primitive's rules (plain arrays) ----------------------------------------------

def differentiable_argnums(op, args):
    """Indices of the floating-point array arguments the op has a VJP rule for."""
    return [i for i, a in enumerate(args)
            if isinstance(a, np.ndarray) and a.dtype.kind in "fc"
            and op.vjp_rule(i) not in (None, NOT_DIFFERENTIABLE)]


def jvp_of(op, args, static, tangents):
    """The op's output tangent from its JVP rules (zeros where no tangent flows)."""
    ans = op.impl(*args, **static)
    out = jvp_output(op, tangents, ans, args, static)
    return np.zeros(np.shape(ans), dtype=np.asarray(ans).dtype) if out is None else out


def vjp_of(op, args, static, cotangent, argnums):
    """The cotangent of each input in `argnums` from the op's VJP rules."""
    ans = op.impl(*args, **static)
    return vjp_parts(op, cotangent, ans, args, static, list(argnums))


# -- check_grads -------------------------------------------------------------------------------

def _as_array(a):
    return np.asarray(a) if isinstance(a, (Tensor, np.ndarray, np.generic, float, int, bool, list)) else a


def _value(f, args):
    """f on constant tensors, as an array: the same code path the tape sees, unrecorded."""
    return np.asarray(f(*[constant(a) if isinstance(a, np.ndarray) else a for a in args]))


def _reverse(f, args, argnums, cotangent):
    tensors = [constant(a) if isinstance(a, np.ndarray) else a for a in args]
    sources = [tensors[i] for i in argnums]
    with GradientTape() as tape:
        tape.watch(sources)
        y = f(*tensors)
    # in the rules' (JAX's) convention: TF's tape gives conj(vjp(conj(v))) for complex values
    grads = tape.gradient(y, sources, output_gradients=np.conj(cotangent),
                          unconnected_gradients=UnconnectedGradients.ZERO)
    return [np.conj(np.asarray(g)) for g in grads]


def _reverse_hvp(f, args, argnums, cotangent, tangents):
    """H u for s(x) = <v, f(x)>, by a tape recording another tape's backward pass."""
    tensors = [constant(a) if isinstance(a, np.ndarray) else a for a in args]
    sources = [tensors[i] for i in argnums]
    with GradientTape() as outer:
        outer.watch(sources)
        with GradientTape() as inner_tape:
            inner_tape.watch(sources)
            y = f(*tensors)
        grads = inner_tape.gradient(y, sources, output_gradients=cotangent,
                                    unconnected_gradients=UnconnectedGradients.ZERO)
    hvp = outer.gradient(list(grads), sources, output_gradients=list(tangents),
                         unconnected_gradients=UnconnectedGradients.ZERO)
    return [np.asarray(h) for h in hvp]


def _numeric_gradients(f, args, argnums, cotangent, eps, rng):
    """Per argument: (directions, <v, d f along each direction>) by central differences."""
    scalar = lambda *xs: inner(cotangent, _value(f, xs))  # noqa: E731
    out = []
    for i in argnums:
        x = args[i]
        if x.size <= _MAX_COORDINATES:
            directions = [np.eye(x.size, dtype=x.dtype)[k].reshape(x.shape) for k in range(x.size)]
            if x.dtype.kind == "c":  # and along each imaginary axis
                directions += [1j * d for d in directions]
        else:
            directions = [_normal(rng, x.shape, x.dtype) for _ in range(4)]
        values = []
        for d in directions:
            tangents = [None] * len(args)
            tangents[i] = d
            values.append(float(central_difference(scalar, args, tangents, eps)))
        out.append((directions, np.array(values)))
    return out


def _normal(rng, shape, dtype):
    """Standard normal values of `dtype` (complex ones get a normal imaginary part too)."""
    values = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return np.asarray(values, dtype=dtype)


def check_grads(f, args, order=1, modes=("rev", "fwd"), eps=None, rtol=None, atol=None, seed=0):
    """Check f's derivatives against central finite differences; raise AssertionError if off.

    f maps arrays or tensors to one array or tensor. "rev": the GradientTape gradient of
    <v, f> w.r.t. each floating-point argument (random v) equals the numeric one. "fwd":
    `dualtape.jvp` equals the numeric JVP, and <v, J u> == <J^T v, u> (skipped when
    forward mode is not available). order=2 also checks nested tapes' Hessian-vector products
    against differences of the first-order gradient and, as HIPS autograd's check_grads
    does, runs the order-1 check (in `modes`) on f's derivatives as functions of their
    inputs: "rev", the pullback (x, v) -> vjp(f, x)(v) (its "fwd" check is forward over
    reverse, a jvp through a cotangent that is a dual number); "fwd", (x, u) -> the JVP.
    Tolerances default by dtype. Complex arguments are checked along every real and imaginary
    coordinate, in the rules' (JAX's) convention (the tape's TF gradient is conjugated back);
    their nested-tape second order is left to the derivative functions' checks.

    >>> import dualtape
    >>> check_grads(lambda x, y: x * dualtape.dnp.exp(y), [np.ones(3), np.zeros((2, 1))])
    """
    if order not in (1, 2):
        raise ValueError(f"[check_grads] order={order} is not supported; use 1 or 2.")
    if not set(modes) <= {"rev", "fwd"}:
        raise ValueError(f"[check_grads] unknown modes {sorted(set(modes) - {'rev', 'fwd'})}; "
                         "use a subset of ('rev', 'fwd').")
    args = tuple(_as_array(a) for a in args)
    name = getattr(f, "__qualname__", None) or repr(f)
    argnums = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind in "fc"]
    if not argnums:
        raise ValueError(f"[check_grads] {name} has no floating-point argument to differentiate; "
                         "pass float arrays (ints and bools are held fixed).")
    dtype = np.result_type(*[args[i] for i in argnums])
    default_eps, default_rtol, default_atol = tolerances(dtype)
    eps = default_eps if eps is None else eps
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    rng = np.random.default_rng(seed)
    y = _value(f, args)
    v = _normal(rng, y.shape, y.dtype if y.dtype.kind in "fc" else dtype)
    u = [_normal(rng, args[i].shape, args[i].dtype) for i in argnums]
    all_u = [None] * len(args)
    for i, t in zip(argnums, u):
        all_u[i] = t

    grads = _reverse(f, args, argnums, v)
    for i, g in zip(argnums, grads):
        if g.shape != args[i].shape or g.dtype != args[i].dtype:
            raise AssertionError(f"[check_grads] reverse-mode gradient of {name} w.r.t. argument "
                                 f"{i} is {g.dtype}{list(g.shape)}, but the argument is "
                                 f"{args[i].dtype}{list(args[i].shape)}.")
    if "rev" in modes:
        numeric = _numeric_gradients(f, args, argnums, v, eps, rng)
        for i, g, (directions, expected) in zip(argnums, grads, numeric):
            assert_close([inner(g, d) for d in directions], expected, rtol, atol,
                         what=f"[check_grads] reverse-mode gradient of {name} w.r.t. argument "
                              f"{i} vs central differences (eps={eps:g})")
    if "fwd" in modes:
        numeric_jvp = central_difference(lambda *xs: _value(f, xs), args, all_u, eps)
        if HAS_FORWARD_MODE:
            def restricted(*xs):
                full = list(args)
                for i, x in zip(argnums, xs):
                    full[i] = x
                return f(*full)
            _, forward = _functional_jvp(restricted, tuple(args[i] for i in argnums), tuple(u))
            forward = np.asarray(forward)
            assert_close(forward, numeric_jvp, rtol, atol,
                         what=f"[check_grads] forward-mode JVP of {name} vs central differences")
            assert_adjoint(u, grads, [forward], [v], adjoint_rtol(dtype),
                           what=f"[check_grads] dot-product test of {name} (forward vs reverse)")
        else:  # no forward mode yet: tie the reverse gradients to the differenced JVP
            lhs, rhs = inner(u, grads), inner(numeric_jvp, v)
            assert_close(lhs, rhs, rtol, atol * max(1.0, norm_product([numeric_jvp], [v])),
                         what=f"[check_grads] <J^T v, u> of {name} vs <v, differenced J u>")

    if order >= 2:
        if not any(args[i].dtype.kind == "c" for i in argnums) and y.dtype.kind != "c":
            hvp = _reverse_hvp(f, args, argnums, v, u)
            gradient_at = lambda *xs: _reverse(f, xs, argnums, v)  # noqa: E731
            numeric = central_difference(gradient_at, args, all_u, eps)
            for i, h, n in zip(argnums, hvp, numeric):
                assert_close(h, n, rtol, atol,
                             what=f"[check_grads] second-order (nested tapes) derivative of {name} "
                                  f"w.r.t. argument {i} vs central differences of the gradient")
        if HAS_FORWARD_MODE:
            for mode in modes:
                derivative = _derivative_function(f, args, argnums, mode, name)
                extra = [v] if mode == "rev" else u
                check_grads(derivative, list(args) + extra, order=1, modes=modes, eps=eps,
                            rtol=rtol, atol=atol, seed=seed + 1)


def _derivative_function(f, args, argnums, mode, name):
    """f's first derivative as a function of (all of f's arguments, then its direction(s)):
    mode "rev", the VJP (x, v) -> vjp(f, x)(v); "fwd", the JVP (x, u) -> J(x) u. Several
    differentiated arguments give one flat vector of their cotangents."""
    nargs = len(args)

    def restricted(full):
        def g(*xs):
            values = list(full)
            for i, x in zip(argnums, xs):
                values[i] = x
            return f(*values)
        return g

    def pullback(*values):
        full, v = values[:nargs], values[nargs]
        _, vjp_fn = _functional_vjp(restricted(full), *[full[i] for i in argnums])
        parts = vjp_fn(v)
        if len(parts) == 1:
            return parts[0]
        return _dnp.concatenate([_dnp.reshape(p, (-1,)) for p in parts])

    def forward(*values):
        full, tangents = values[:nargs], values[nargs:]
        return _functional_jvp(restricted(full), tuple(full[i] for i in argnums), tuple(tangents))[1]

    derivative = pullback if mode == "rev" else forward
    derivative.__qualname__ = f"{'vjp' if mode == 'rev' else 'jvp'}_of_{name}"
    return derivative


# -- whole programs, every mode (programs.py, check_modes.py) -----------------------------------
from .check_modes import ALL_MODES, MODES, ModeFailure, Report, Tally, check_modes, refusal  # noqa: E402,F401
from .complex_modes import check_complex_modes  # noqa: E402,F401
from .programs import FEATURES, Program, load_module, programs  # noqa: E402,F401
