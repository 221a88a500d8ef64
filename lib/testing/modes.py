"""The modes `check_modes` runs on one case: the tape, the functional API, the source
transformer (grad, vjp, jvp, batched jvp, hvp), their mixtures, vmap of vjp and jvp, and the
transformer's vjp, jvp and hvp compiled by numba (jit="fallback"), each as a function of the
case returning its derivatives by name (`run_modes`)."""

import copy
import warnings

import numpy as np

import dualtape.transforms as dt

from .. import functional as F
from ..forward.inplace import arguments
from ..reverse.tape import GradientTape, UnconnectedGradients
from ..reverse.tensor import Tensor, constant


# -- the modes ----------------------------------------------------------------------------------

def _quiet():
    """jit="fallback" warns (RuntimeWarning) where numba could not compile and the uncompiled
    code ran: the same numbers, so the jit modes run silenced."""
    return warnings.catch_warnings(action="ignore", category=RuntimeWarning)


def as_float64(x):
    return np.asarray(x, dtype=np.float64)


def _tensors(args):
    return [constant(as_float64(a)) for a in args]


def _strict_tape():
    tape = GradientTape(persistent=True)
    tape._escape_api = "GradientTape (check_modes)"  # a value leaving the tape raises (tensor.py)
    return tape


def _tape_gradient(f, args, seeds, extra=None):
    """Reverse mode by GradientTape: sum_k <seed_k, out_k> differentiated w.r.t. every arg."""
    tensors = _tensors(args)
    tape = _strict_tape()
    with tape:
        for t in tensors:
            tape.watch(t)
        with arguments(tensors, args):  # NumPy's in-place semantics, as the functional API's
            out = f(*tensors)
    if extra is not None:
        extra["y"] = as_float64(out)
    outs = list(out) if isinstance(out, tuple) else [out]
    pairs = [(o, s) for o, s in zip(outs, seeds) if isinstance(o, Tensor)]
    if not pairs:
        return [np.zeros(np.shape(a)) for a in args]
    grads = tape.gradient([o for o, _ in pairs], tensors, output_gradients=[constant(as_float64(s)) for _, s in pairs],
                          unconnected_gradients=UnconnectedGradients.ZERO)
    return [as_float64(g) for g in grads]


class Case:
    """One function at one point, with its directions u, v and what each mode needs."""

    def __init__(self, f, args, seed):
        self.f, self.args = f, tuple(args)
        self.value = as_float64(f(*self.copies()))
        rng = np.random.default_rng(seed)
        self.u = [rng.uniform(-1, 1, np.shape(a)) for a in args]
        self.v = rng.uniform(-1, 1, self.value.shape)
        self.scalar = self.value.shape == ()
        self.wrt = tuple(range(len(args)))
        self.sizes = [int(np.prod(np.shape(a))) for a in args]

    def copies(self):
        return copy.deepcopy(self.args)

    def tangents(self):  # Python floats for scalar arguments, as a user would pass them
        return tuple(float(t) if np.ndim(a) == 0 else t for a, t in zip(self.args, self.u))

    def seed(self):
        return float(self.v) if self.scalar else self.v

    def loss(self, *xs):
        """<v, f(x)>: the scalar whose Hessian the hvp modes compute."""
        out = self.f(*xs)
        return out * float(self.v) if self.scalar else np.sum(out * self.v)

    def from_jacobian(self, jac):
        jac = [as_float64(j) for j in jac]
        ju = sum(np.tensordot(j, u, axes=np.ndim(u)) for j, u in zip(jac, self.u))
        vj = [np.tensordot(self.v, j, axes=self.v.ndim) for j in jac]
        return {"J": jac, "Ju": as_float64(ju), "vJ": vj}


def run_modes(case, modes):
    """Yield (mode, thunk) for the modes that apply; a thunk returns {quantity: value}."""
    f = case.f
    scalar = case.scalar
    as_tuple = lambda r: [as_float64(x) for x in (r if isinstance(r, (tuple, list)) else (r,))]  # noqa: E731

    def tape():
        found = {}
        found["vJ"] = _tape_gradient(f, case.copies(), [case.v], extra=found)
        return found

    def f_grad():
        return {"vJ": [g * case.v for g in as_tuple(F.grad(f, argnums=case.wrt)(*case.copies()))]}

    def f_vjp():
        y, pullback = F.vjp(f, *case.copies())
        return {"vJ": as_tuple(pullback(case.v)), "y": as_float64(y)}

    def f_jvp():
        y, dy = F.jvp(f, case.copies(), tuple(case.u))
        return {"Ju": as_float64(dy), "y": as_float64(y)}

    def f_jac(which):
        return lambda: case.from_jacobian(as_tuple(which(f, argnums=case.wrt)(*case.copies())))

    def f_hvp():
        return {"Hu": as_tuple(F.hvp(case.loss, case.copies(), tuple(case.u)))}

    def t_grad():
        grads, y = dt.grad(f, wrt=case.wrt, preserve_result=True)(*case.copies())
        return {"vJ": [g * case.v for g in as_tuple(grads)], "y": as_float64(y)}

    def t_vjp():
        grads, y = dt.vjp(f, wrt=case.wrt, preserve_result=True)(*case.copies(), case.seed())
        return {"vJ": as_tuple(grads), "y": as_float64(y)}

    def t_jvp():
        y, dy = dt.jvp(f, wrt=case.wrt)(*case.copies(), case.tangents())
        return {"Ju": as_float64(dy), "y": as_float64(y)}

    def t_jvp_batched():
        total, offset, tangents = sum(case.sizes), 0, []
        for a, size in zip(case.args, case.sizes):
            basis = np.zeros((total, size))
            basis[offset:offset + size] = np.eye(size)
            tangents.append(basis.reshape((total,) + np.shape(a)))
            offset += size
        y, dy = dt.jvp(f, wrt=case.wrt)(*case.copies(), tuple(tangents))
        y, dy = as_float64(y), as_float64(dy)
        jac, offset = [], 0
        for a, size in zip(case.args, case.sizes):
            block = np.moveaxis(dy[offset:offset + size], 0, -1)
            jac.append(block.reshape(case.value.shape + np.shape(a)))
            offset += size
        return {**case.from_jacobian(jac), "y": y}

    def t_hvp():
        return {"Hu": [h * case.v for h in as_tuple(dt.hvp(f, wrt=case.wrt)(*case.copies(), case.tangents()))]}

    def generated_gradient():
        if scalar:
            dg = dt.grad(f, wrt=case.wrt)
            return lambda *xs: tuple(g * float(case.v) for g in dg(*xs))
        dv = dt.vjp(f, wrt=case.wrt)
        return lambda *xs: dv(*xs, case.v)

    def m_jvp():
        g = generated_gradient()
        return {"Hu": as_tuple(F.jvp(g, case.copies(), tuple(case.u))[1])}

    def m_tape():
        g = generated_gradient()
        return {"Hu": _tape_gradient(lambda *xs: tuple(g(*xs)), case.copies(), case.u)}  # H u = H^T u

    def batch_of_three(scales):
        """The case's arguments as example 0 of a vmap batch of three; the other two examples
        moved a little, so that an op mixing the examples up shows in example 0."""
        args = case.copies()
        return [np.stack([as_float64(a) * (1 + 1e-3 * k * s) for k, s in enumerate(scales)]) for a in args]

    def v_vjp():
        cotangents = np.stack([case.v, 2 * case.v, -case.v])
        run = F.vmap(lambda *e: F.vjp(f, *e[:-1])[1](e[-1]))
        out = as_tuple(run(*batch_of_three((0, 1, -1)), cotangents))
        return {"vJ": [o[0] for o in out]}

    def v_jvp():
        tangents = [np.stack([u, 2 * u, -u]) for u in case.u]
        n = len(case.args)
        y, dy = F.vmap(lambda *e: F.jvp(f, e[:n], e[n:]))(*batch_of_three((0, -1, 1)), *tangents)
        return {"Ju": as_float64(dy)[0], "y": as_float64(y)[0]}

    def jitted(api, **kwargs):  # numba-compiled; what numba cannot compile runs uncompiled
        return getattr(dt, api)(f, wrt=case.wrt, jit="fallback", **kwargs)

    def j_vjp():
        with _quiet():
            grads, y = jitted("vjp", preserve_result=True)(*case.copies(), case.seed())
        return {"vJ": as_tuple(grads), "y": as_float64(y)}

    def j_jvp():
        with _quiet():
            y, dy = jitted("jvp")(*case.copies(), case.tangents())
        return {"Ju": as_float64(dy), "y": as_float64(y)}

    def j_hvp():
        with _quiet():
            hu = jitted("hvp")(*case.copies(), case.tangents())
        return {"Hu": [h * case.v for h in as_tuple(hu)]}

    table = {"tape": tape, "functional.grad": f_grad, "functional.vjp": f_vjp, "functional.jvp": f_jvp,
             "functional.jacfwd": f_jac(F.jacfwd), "functional.jacrev": f_jac(F.jacrev),
             "functional.hvp": f_hvp, "transforms.grad": t_grad, "transforms.vjp": t_vjp,
             "transforms.jvp": t_jvp, "transforms.jvp_batched": t_jvp_batched, "transforms.hvp": t_hvp,
             "mixed.jvp_of_generated_grad": m_jvp, "mixed.tape_of_generated_grad": m_tape,
             "vmap.vjp": v_vjp, "vmap.jvp": v_jvp, "jit.vjp": j_vjp, "jit.jvp": j_jvp, "jit.hvp": j_hvp}
    for mode in modes:
        if not scalar and mode in ("functional.grad", "transforms.grad", "transforms.hvp", "jit.hvp"):
            continue  # defined for scalar outputs only (vjp covers the rest)
        yield mode, table[mode]
