"""dualtape's complex derivatives against JAX's, in float64 (issue 22; run outside CI).

Every function below is written once against a NumPy-like `np`, loaded twice: with NumPy (for
dualtape's functional API, its GradientTape and its source transformer, which reads the file)
and with jax.numpy. For each case the script compares, to 1e-9 relative to max(1, |JAX's|):

- grad of real-valued functions of complex (and real) inputs, JAX's convention, in the
  functional API and dualtape.transforms; the GradientTape's, which must be its conjugate
  (TF's convention);
- vjp (random complex cotangents) and jvp (random complex tangents) of holomorphic,
  non-holomorphic and real-to-complex functions, functional and transformer;
- jacfwd and jacrev with holomorphic=True (and jacrev of real-valued, jacfwd of real-input
  functions without it); hessian with holomorphic=True;
- the errors JAX raises (grad / jacrev of complex outputs, jacfwd of complex inputs without
  holomorphic=True, holomorphic=True with real values, mismatched tangent and cotangent
  dtypes): dualtape must raise the same exception type, with JAX's words.

JAX is not a dependency of dualtape or its tests. Run it in a separate environment:

    python3 -m venv /tmp/jaxenv && /tmp/jaxenv/bin/pip install jax
    /tmp/jaxenv/bin/pip install -e .          # dualtape, in the same environment
    /tmp/jaxenv/bin/python benchmarks/complex_vs_jax.py
"""

import importlib.util
import pathlib
import sys
import tempfile
import textwrap

import numpy as onp

TOLERANCE = 1e-9
# the clear errors that count as refusals: an op without complex rules, or (the transformer)
# a function it cannot differentiate for real inputs either, as np.linalg.norm's other ords
REFUSALS = ("no complex derivative rules", "cannot be differentiated by the transformer")

SOURCE = textwrap.dedent('''
    # real-valued functions of complex inputs (grad, jacrev, vjp, jvp)
    def r_abs2(z):
        return np.sum(np.real(z * np.conj(z)))

    def r_abs_sin(z):
        return np.sum(np.abs(np.sin(z) * z))

    def r_exp_parts(z):
        return np.sum(np.real(np.exp(z)) * np.imag(z))

    def r_angle(z):
        return np.sum(np.angle(z) * np.abs(z))

    def r_matvec(z, w):
        return np.abs(np.sum(np.matmul(w, z)))

    def r_log(z):
        return np.real(np.log(np.sum(z * z)))

    def r_sqrt(z):
        return np.sum(np.abs(np.sqrt(z)))

    def r_det(m):
        return np.real(np.linalg.det(m))

    def r_slogdet(m):
        return np.linalg.slogdet(m)[1]

    def r_slogdet_sign(m):
        return np.imag(np.linalg.slogdet(m)[0])

    def r_solve(m, z):
        return np.sum(np.abs(np.linalg.solve(m, z)))

    def r_inv(m):
        return np.sum(np.real(np.linalg.inv(m)) * np.imag(m))

    def r_tanh_cos(z):
        return np.sum(np.abs(np.tanh(z)) ** 2 + np.real(np.cos(z)))

    def r_einsum(m, z):
        return np.real(np.sum(np.einsum("ij,j->i", m, z) * np.conj(z)))

    def r_power(z):
        return np.sum(np.abs(z ** 2.5))

    def r_prod_mean(z):
        return np.abs(np.prod(z)) + np.real(np.mean(z * z))

    def r_real_input(x):
        return np.sum(np.abs(np.exp(1j * x) * x + x ** 2 * (1 + 2j)))

    def r_mixed(x, z):
        return np.sum(np.abs(x * z + np.conj(z) / (x + 2.0)))

    def r_eigvals(m):
        return np.sum(np.abs(np.linalg.eigvals(m)) ** 2)

    def r_eigvals_real(a):
        return np.sum(np.imag(np.linalg.eigvals(a)) ** 2 + np.real(np.linalg.eigvals(a)))

    def r_dot(z, w):
        return np.abs(np.dot(w, z)[0])

    def r_var_std(m):
        return np.sum(np.var(m, axis=1)) + np.std(m, ddof=1) + np.sum(np.std(m, axis=0) * np.arange(3.0))

    def r_norm(m):
        return np.linalg.norm(m) + np.sum(np.linalg.norm(m, axis=0) * np.arange(3.0))

    def r_norm_vector_ords(z):
        return np.linalg.norm(z, 1) + 2.0 * np.linalg.norm(z, np.inf) + np.linalg.norm(z, 3.0)

    def r_norm_matrix_ords(m):
        return (np.linalg.norm(m, "nuc") + 2.0 * np.linalg.norm(m, 2) + 3.0 * np.linalg.norm(m, -2)
                + np.linalg.norm(m, 1) + 0.5 * np.linalg.norm(m, np.inf))

    def hermitian_lower(m):  # what np.linalg.eigh reads (and what JAX's eigh gets, symmetrized)
        low = np.tril(m, -1)
        return low + np.conj(np.transpose(low)) + np.diag((np.diag(m) + np.conj(np.diag(m))) / 2)

    def r_eigh_values(m):
        return np.sum(np.linalg.eigvalsh(hermitian_lower(m)) * np.arange(1.0, 4.0))

    def r_eigh_vectors(m):  # |v_ij|^2 and V diag(r) V^H: the same for every phase of the columns
        v = np.linalg.eigh(hermitian_lower(m))[1]
        p = np.matmul(v * np.arange(1.0, 4.0), np.conj(np.transpose(v)))
        return np.sum(np.abs(v) ** 2 * np.arange(3.0)) + np.sum(np.real(p) * np.imag(m))

    def r_svd_values(m):
        return np.sum(np.linalg.svd(m, compute_uv=False) * np.arange(1.0, 4.0))

    def r_svd_vectors(m):  # u_j vh_j: one phase turns u_j, the opposite v_j
        u, s, vh = np.linalg.svd(m, full_matrices=False)
        return np.sum(np.abs(np.matmul(u[:, :2], vh[:2, :]))) + np.sum(np.abs(u) ** 2 * np.arange(3.0))

    # holomorphic functions (jacfwd / jacrev / grad with holomorphic=True, vjp, jvp)
    def h_poly_exp(z):
        return z * z + np.exp(z)

    def h_trig_ratio(z):
        return np.sin(z) * np.cos(z) / (1 + z * z)

    def h_matvec(z, w):
        return np.matmul(w, z)

    def h_log_sqrt(z):
        return np.log(z) + np.sqrt(z)

    def h_tanh_cubed(z):
        return np.tanh(z) ** 3

    def h_cumsum(z):
        return np.cumsum(z) * z

    def h_inv(m, z):
        return np.matmul(np.linalg.inv(m), z)

    def h_det(m):
        return np.linalg.det(m)

    def h_complex_power(z, w):
        return z ** w

    def h_eigvals(m):
        return np.linalg.eigvals(m) * 2.0

    def h_scalar(z):
        return np.sum(z ** 3 - 2j * z)

    def h_arccosh(z):
        return np.arccosh(z) * z

    def h_sinc(z):
        return np.sinc(z) + z

    # non-holomorphic complex-to-complex functions (vjp, jvp)
    def n_conj_poly(z):
        return np.conj(z) * z ** 2

    def n_abs_times(z):
        return np.abs(z) * z

    def n_parts(z):
        return np.real(z) + 1j * np.imag(z) ** 2

    def n_phase(z):
        return z / np.abs(z)

    # real-to-complex functions (jacfwd, vjp, jvp)
    def c_phase(x):
        return np.exp(1j * x)

    def c_affine(x):
        return x * (1 + 2j) + x ** 2
''')


def load(np_module_name, name):
    """The cases' functions with `np` as `np_module_name`, from a file (the transformer reads it)."""
    path = pathlib.Path(tempfile.mkdtemp()) / f"{name}.py"
    path.write_text(f"import {np_module_name} as np\n" + SOURCE)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RNG = onp.random.default_rng(22)


def cvec(n=3, positive=False):
    real = RNG.uniform(0.5, 2.0, n) if positive else RNG.standard_normal(n)
    return real + 1j * RNG.standard_normal(n)


def cmat(n=3):
    return RNG.standard_normal((n, n)) + 1j * RNG.standard_normal((n, n)) + 2 * onp.eye(n)


def rvec(n=3):
    return RNG.uniform(0.3, 1.5, n)


CASES = {  # name: (kind, args); kind: "real" (real output), "holo", "nonholo", "r2c"
    "r_abs2": ("real", (cvec(),)), "r_abs_sin": ("real", (cvec(),)), "r_exp_parts": ("real", (cvec(),)),
    "r_angle": ("real", (cvec(positive=True),)), "r_matvec": ("real", (cvec(), cmat())),
    "r_log": ("real", (cvec(positive=True),)), "r_sqrt": ("real", (cvec(positive=True),)),
    "r_det": ("real", (cmat(),)), "r_slogdet": ("real", (cmat(),)), "r_slogdet_sign": ("real", (cmat(),)),
    "r_solve": ("real", (cmat(), cvec())), "r_inv": ("real", (cmat(),)),
    "r_tanh_cos": ("real", (0.5 * cvec(),)), "r_einsum": ("real", (cmat(), cvec())),
    "r_power": ("real", (cvec(positive=True),)), "r_prod_mean": ("real", (cvec(),)),
    "r_real_input": ("real", (rvec(),)), "r_mixed": ("real", (rvec(), cvec())),
    "r_dot": ("real", (cvec(), cmat()[:1])), "r_eigvals": ("real", (cmat(),)),
    "r_eigvals_real": ("real", (RNG.standard_normal((3, 3)) + onp.array([[0, 2.0, 0], [-2.0, 0, 0], [0, 0, 1.0]]),)),
    "h_eigvals": ("holo", (cmat(),)),
    "r_var_std": ("real", (cmat(),)), "r_norm": ("real", (cmat(),)), "r_norm_vector_ords": ("real", (cvec(4),)),
    "r_norm_matrix_ords": ("real", (cmat(),)), "r_eigh_values": ("real", (cmat(),)),
    "r_eigh_vectors": ("real", (cmat(),)), "r_svd_values": ("real", (cmat(),)),
    "r_svd_vectors": ("real", (cmat(),)),
    "h_sinc": ("holo", (cvec(),)),
    "h_arccosh": ("holo", (onp.array([1.5 + 0.5j, 0.3 - 1.0j, 2.0 + 1.5j]),)),  # Re z > 0: see arccosh_left_half
    "h_poly_exp": ("holo", (cvec(),)), "h_trig_ratio": ("holo", (0.5 * cvec(),)),
    "h_matvec": ("holo", (cvec(), cmat())), "h_log_sqrt": ("holo", (cvec(positive=True),)),
    "h_tanh_cubed": ("holo", (0.5 * cvec(),)), "h_cumsum": ("holo", (cvec(),)),
    "h_inv": ("holo", (cmat(), cvec())), "h_det": ("holo", (cmat(),)),
    "h_complex_power": ("holo", (cvec(positive=True), 0.5 * cvec())), "h_scalar": ("holo", (cvec(),)),
    "n_conj_poly": ("nonholo", (cvec(),)), "n_abs_times": ("nonholo", (cvec(),)),
    "n_parts": ("nonholo", (cvec(),)), "n_phase": ("nonholo", (cvec(),)),
    "c_phase": ("r2c", (rvec(),)), "c_affine": ("r2c", (rvec(),)),
}


class Tally:
    def __init__(self):
        self.compared = 0
        self.error_cases = 0  # of which: both must raise
        self.worst = 0.0
        self.worst_at = ""
        self.failures = []
        self.refused = []  # dualtape refused with a clear error where JAX gives a number
        self.skipped = []  # JAX gives no number to compare with

    def compare(self, label, ours, theirs):
        if isinstance(theirs, (tuple, list)):
            if not isinstance(ours, (tuple, list)) or len(ours) != len(theirs):
                self.failures.append(f"{label}: {type(ours).__name__} vs JAX's {len(theirs)} parts")
                return
            for i, (o, t) in enumerate(zip(ours, theirs)):
                self.compare(f"{label}[{i}]", o, t)
            return
        ours, theirs = onp.asarray(ours), onp.asarray(theirs)
        self.compared += 1
        if ours.shape != theirs.shape:
            self.failures.append(f"{label}: shape {ours.shape} vs JAX's {theirs.shape}")
            return
        if (ours.dtype.kind == "c") != (theirs.dtype.kind == "c"):
            self.failures.append(f"{label}: dtype {ours.dtype} vs JAX's {theirs.dtype}")
            return
        scale = max(1.0, float(onp.max(onp.abs(theirs), initial=0.0)))
        error = float(onp.max(onp.abs(ours - theirs), initial=0.0)) / scale
        if error > self.worst:
            self.worst, self.worst_at = error, label
        if not error <= TOLERANCE:
            self.failures.append(f"{label}: relative difference {error:.3g}")

    def refusable(self, label, ours, theirs):
        """Compare, or note a clear refusal (an op without complex rules in that mode)."""
        try:
            value = ours()
        except Exception as error:  # noqa: BLE001 - what matters is that it names the op
            if not any(words in str(error) for words in REFUSALS):
                raise
            self.refused.append(f"{label}: {str(error).splitlines()[0][:100]}")
            return None
        self.compare(label, value, theirs)
        return value

    def errors(self, label, ours, theirs):
        """Both raise the same exception type, and dualtape's message holds JAX's key words."""
        self.compared += 1
        self.error_cases += 1
        jax_error = _raised(theirs)
        our_error = _raised(ours)
        if jax_error is None:
            self.failures.append(f"{label}: JAX did not raise")
        elif our_error is None:
            self.failures.append(f"{label}: JAX raised {type(jax_error).__name__}, dualtape did not")
        elif type(our_error) is not type(jax_error):
            self.failures.append(f"{label}: dualtape raised {type(our_error).__name__}: {our_error}; "
                                 f"JAX {type(jax_error).__name__}")
        else:
            key = _key_words(str(jax_error))
            if key and key not in str(our_error):
                self.failures.append(f"{label}: message lacks JAX's words {key!r}: {our_error}")


def _raised(thunk):
    try:
        thunk()
    except (TypeError, ValueError) as error:
        return error
    return None


def _key_words(message):
    for words in ("requires real-valued outputs", "requires real-valued inputs",
                  "requires inputs with complex dtype", "requires outputs with complex dtype"):
        if words in message:
            return words
    return None


def arccosh_left_half(jax, tf):
    """arccosh' for Re z < 0, where JAX's rule (1 / sqrt(z^2 - 1)) has the wrong sign: both
    libraries' arccosh agree, and dualtape's derivative (1 / (sqrt(z - 1) sqrt(z + 1))) is
    checked against central differences of it instead. Returns (dualtape's error, JAX's)."""
    z = onp.array([-2.0 + 0.5j, -0.5 - 1.0j, -3.0 - 0.2j])
    eps = 1e-7
    numeric = (onp.arccosh(z + eps) - onp.arccosh(z - eps)) / (2 * eps)
    ours = tf.jvp(lambda x: tf.dnp.arccosh(x), (z,), (onp.ones(3) + 0j,))[1]
    theirs = jax.jvp(jax.numpy.arccosh, (z,), (onp.ones(3) + 0j,))[1]
    return float(onp.max(onp.abs(ours - numeric))), float(onp.max(onp.abs(onp.asarray(theirs) - numeric)))


def vectors_in_jaxs_gauge(jax, tf):
    """The JVPs of eigh's and svd's vectors, compared with JAX's directly: each column's phase is
    LAPACK's choice, so ours are turned onto JAX's (dQ turns with Q) before comparing."""
    rng = onp.random.default_rng(5)
    worst = 0.0
    for _ in range(5):
        b, db = (rng.standard_normal((2, 4, 4)) + 1j * rng.standard_normal((2, 4, 4)))
        a, da = b + onp.conj(b.T), db + onp.conj(db.T)
        v, dv = jax.jvp(lambda x: jax.numpy.linalg.eigh(x)[1], (a,), (da,))
        ours, d_ours = (onp.asarray(t) for t in tf.jvp(tf.dnp.linalg_eigh_v, (a,), (da,)))
        phase = onp.sum(onp.conj(ours) * onp.asarray(v), axis=0)
        phase /= onp.abs(phase)
        worst = max(worst, float(onp.max(onp.abs(ours * phase - v))), float(onp.max(onp.abs(d_ours * phase - dv))))
        m, dm = rng.standard_normal((2, 4, 3)) + 1j * rng.standard_normal((2, 4, 3))
        (u, _, vh), (du, _, dvh) = jax.jvp(lambda x: jax.numpy.linalg.svd(x, full_matrices=False), (m,), (dm,))
        ou, odu = (onp.asarray(t) for t in tf.jvp(tf.dnp.linalg_svd_u, (m,), (dm,)))
        ovh, odvh = (onp.asarray(t) for t in tf.jvp(tf.dnp.linalg_svd_vh, (m,), (dm,)))
        phase = onp.sum(onp.conj(ou) * onp.asarray(u), axis=0)
        phase /= onp.abs(phase)
        for ours, theirs in ((ou * phase, u), (odu * phase, du), (ovh * onp.conj(phase)[:, None], vh),
                             (odvh * onp.conj(phase)[:, None], dvh)):
            worst = max(worst, float(onp.max(onp.abs(ours - onp.asarray(theirs)))))
    return worst


def main():
    import jax
    jax.config.update("jax_enable_x64", True)
    import dualtape as tf
    import dualtape.transforms as dt

    ours_np = load("numpy", "complex_cases_numpy")
    jax_np = load("jax.numpy", "complex_cases_jax")
    tally = Tally()
    for name, (kind, args) in CASES.items():
        f, g = getattr(ours_np, name), getattr(jax_np, name)
        nargs = len(args)
        argnums = tuple(range(nargs))
        out = onp.asarray(g(*args))
        cotangent = (RNG.standard_normal(out.shape) + 1j * RNG.standard_normal(out.shape)
                     if out.dtype.kind == "c" else RNG.standard_normal(out.shape))
        tangents = tuple(RNG.standard_normal(onp.shape(a)) + (1j * RNG.standard_normal(onp.shape(a))
                                                             if onp.iscomplexobj(a) else 0.0) for a in args)
        # vjp and jvp: every kind
        _, pullback = tf.vjp(f, *args)
        _, jax_pullback = jax.vjp(g, *args)
        jax_parts = jax_pullback(cotangent)
        for i, (part, jax_part) in enumerate(zip(pullback(cotangent), jax_parts)):
            tally.compare(f"{name}: vjp[{i}]", part, jax_part)
        _, tangent = tf.jvp(f, args, tangents)
        _, jax_tangent = jax.jvp(g, args, tangents)
        tally.compare(f"{name}: jvp", tangent, jax_tangent)
        tally.refusable(f"{name}: transforms.vjp", lambda: dt.vjp(f, wrt=argnums)(*args, cotangent),
                        tuple(jax_parts))
        tally.refusable(f"{name}: transforms.jvp", lambda: dt.jvp(f, wrt=argnums)(*args, tangents)[1], jax_tangent)
        if kind == "real":
            jax_grads = jax.grad(g, argnums=argnums)(*args)
            grads = tf.grad(f, argnums=argnums)(*args)
            for i in range(nargs):
                tally.compare(f"{name}: grad[{i}]", grads[i], jax_grads[i])
                tally.refusable(f"{name}: transforms.grad[{i}]", lambda: dt.grad(f, wrt=argnums)(*args)[i], jax_grads[i])
            if all(onp.iscomplexobj(a) for a in args):  # (TF's ops refuse complex * float tensors)
                tensors = [tf.Variable(a) for a in args]
                with tf.GradientTape() as tape:
                    loss = f(*tensors)
                for i, tape_grad in enumerate(tape.gradient(loss, tensors)):
                    tally.compare(f"{name}: GradientTape = conj(JAX's)[{i}]", tape_grad.numpy(), onp.conj(jax_grads[i]))
            tally.compare(f"{name}: jacrev", tf.jacrev(f, argnums=0)(*args), jax.jacrev(g, argnums=0)(*args))
            if onp.iscomplexobj(args[0]):
                tally.errors(f"{name}: jacfwd of a complex input", lambda: tf.jacfwd(f)(*args),
                             lambda: jax.jacfwd(g)(*args))
                tally.errors(f"{name}: grad holomorphic=True of a real output",
                             lambda: tf.grad(f, holomorphic=True)(*args), lambda: jax.grad(g, holomorphic=True)(*args))
            else:
                for api, ours, theirs in (("jacfwd", tf.jacfwd, jax.jacfwd), ("hessian", tf.hessian, jax.hessian)):
                    try:
                        expected = theirs(g)(*args)
                    except NotImplementedError:  # (JAX's eig in forward mode, batched: not offered)
                        tally.skipped.append(f"{name}: {api} (JAX raises NotImplementedError)")
                        continue
                    tally.compare(f"{name}: {api}", ours(f)(*args), expected)
        elif kind == "holo":
            for api, ours, theirs in (("jacfwd", tf.jacfwd, jax.jacfwd), ("jacrev", tf.jacrev, jax.jacrev)):
                tally.compare(f"{name}: {api}(holomorphic=True)", ours(f, argnums=0, holomorphic=True)(*args),
                              theirs(g, argnums=0, holomorphic=True)(*args))
                tally.errors(f"{name}: {api} without holomorphic", lambda: ours(f)(*args), lambda: theirs(g)(*args))
            if out.shape == ():
                tally.compare(f"{name}: grad(holomorphic=True)", tf.grad(f, holomorphic=True)(*args),
                              jax.grad(g, holomorphic=True)(*args))
                tally.errors(f"{name}: grad of a complex output", lambda: tf.grad(f)(*args), lambda: jax.grad(g)(*args))
                if nargs == 1:
                    tally.compare(f"{name}: hessian(holomorphic=True)", tf.hessian(f, holomorphic=True)(*args),
                                  jax.hessian(g, holomorphic=True)(*args))
            real_args = tuple(onp.real(a) for a in args)
            tally.errors(f"{name}: jacfwd(holomorphic=True) of real inputs",
                         lambda: tf.jacfwd(f, holomorphic=True)(*real_args),
                         lambda: jax.jacfwd(g, holomorphic=True)(*real_args))
        elif kind == "r2c":
            tally.compare(f"{name}: jacfwd", tf.jacfwd(f)(*args), jax.jacfwd(g)(*args))
            tally.errors(f"{name}: jacrev of a complex output", lambda: tf.jacrev(f)(*args), lambda: jax.jacrev(g)(*args))
            tally.errors(f"{name}: vjp with a real cotangent of a complex output",
                         lambda: tf.vjp(f, *args)[1](onp.ones(out.shape)),
                         lambda: jax.vjp(g, *args)[1](onp.ones(out.shape)))
        if kind in ("holo", "nonholo") and onp.iscomplexobj(args[0]):
            tally.errors(f"{name}: jvp with a real tangent of a complex input",
                         lambda: tf.jvp(f, args, (onp.real(tangents[0]),) + tangents[1:]),
                         lambda: jax.jvp(g, args, (onp.real(tangents[0]),) + tangents[1:]))
    print(f"{len(CASES)} functions, {tally.compared} comparisons with JAX {jax.__version__} (float64): "
          f"max relative difference {tally.worst:.3g} (at {tally.worst_at}); tolerance {TOLERANCE:g}; "
          f"{tally.error_cases} of them errors JAX raises, raised alike")
    for failure in tally.failures:
        print("  MISMATCH", failure)
    for skip in tally.skipped:
        print("  SKIPPED", skip)
    print(f"{len(tally.refused)} refused by dualtape with a clear error (an op without complex rules there):")
    for refusal in tally.refused:
        print("  REFUSED", refusal)
    gauge = vectors_in_jaxs_gauge(jax, tf)
    print(f"eigh's and svd's vector JVPs (phases aligned) vs JAX's: max difference {gauge:.2g}")
    if not gauge <= TOLERANCE:
        tally.failures.append(f"eigh/svd vector JVPs differ from JAX's by {gauge:.3g}")
    ours, theirs = arccosh_left_half(jax, tf)
    print(f"arccosh' at Re z < 0 vs central differences: dualtape {ours:.2g}, JAX {theirs:.2g} (JAX's sign is wrong there)")
    if not ours <= 1e-6:
        tally.failures.append(f"arccosh' at Re z < 0: dualtape differs from central differences by {ours:.3g}")
    print(f"{len(tally.failures)} mismatches")
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.exit(main())
