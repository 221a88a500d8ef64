"""dualtape.vmap against jax.vmap (float64) on a broad set of functions: values, and the errors.

Each case is written once, over a NumPy-like module `xp`: dualtape runs it with NumPy itself
(its functions dispatch on vmap's batched values), JAX with jax.numpy. Values must agree to
1e-9 (relative and absolute); where JAX raises, dualtape must raise the same kind of error
(ValueError or TypeError). Run outside CI, where JAX is installed (pip install jax):

    python benchmarks/vmap_vs_jax.py
"""

import sys

import numpy as np

import dualtape as dt

rng = np.random.default_rng(0)
A = rng.standard_normal((4, 3))
B = rng.standard_normal((4, 3))
M = rng.standard_normal((4, 3, 3))
S = M @ np.swapaxes(M, -1, -2) + 3 * np.eye(3)  # symmetric positive definite, per example
V = rng.standard_normal(3)
W = rng.standard_normal((3, 2))
T = rng.standard_normal((4, 2, 3, 5))
I = np.array([[0, 2], [1, 1], [2, 0], [0, 0]])
Z = A + 1j * B


def cases(xp, grad, jacfwd, jacrev, hessian, vmap):
    """(name, function of the arrays, in_axes, out_axes, arrays)."""
    loss = lambda w, x: xp.sum(xp.tanh(x @ w) ** 2)
    return [
        ("elementwise broadcast", lambda x, v: xp.sin(x) * v + xp.exp(-x ** 2), (0, None), 0, (A, V)),
        ("where", lambda x, y: xp.where(x > y, x * y, x - y), 0, 0, (A, B)),
        ("maximum, clip", lambda x, y: xp.maximum(x, y) + xp.clip(x, -0.5, 0.5), 0, 0, (A, B)),
        ("sum axis None", lambda x: xp.sum(x), 0, 0, (M,)),
        ("sum axis 0 keepdims", lambda x: xp.sum(x, axis=0, keepdims=True), 0, 0, (M,)),
        ("mean axis -1", lambda x: xp.mean(x, axis=-1), 0, 0, (M,)),
        ("max axis (0, 1)", lambda x: xp.max(x, axis=(0, 1)), 0, 0, (T,)),
        ("prod, std", lambda x: xp.prod(x, axis=1) + xp.std(x, axis=1), 0, 0, (T,)),
        ("logsumexp by hand", lambda x: xp.log(xp.sum(xp.exp(x - xp.max(x))) ) + xp.max(x), 0, 0, (A,)),
        ("cumsum axis None", lambda x: xp.cumsum(x), 0, 0, (M,)),
        ("cumsum axis 1", lambda x: xp.cumsum(x, axis=1), 0, 0, (M,)),
        ("sort", lambda x: xp.sort(x, axis=0), 0, 0, (M,)),
        ("argmax axis None", lambda x: xp.argmax(x), 0, 0, (M,)),
        ("vector @ matrix", lambda x, w: x @ w, (0, None), 0, (A, W)),
        ("matrix @ vector", lambda m, v: m @ v, (0, None), 0, (M, V)),
        ("vector @ vector", lambda x, y: x @ y, 0, 0, (A, B)),
        ("matrix @ batched vector", lambda m, x: m @ x, (None, 0), 0, (M[0], A)),
        ("batched matrix @ matrix", lambda m, n: m @ n, 0, 0, (M, M[::-1])),
        ("stack of matrices @ stack", lambda t: xp.swapaxes(t, -1, -2) @ t, 0, 0, (T,)),
        ("einsum", lambda m, x: xp.einsum("ij,j->i", m, x), (0, 0), 0, (M, A)),
        ("einsum outer", lambda x, y: xp.einsum("i,j->ij", x, y), (0, None), 0, (A, V)),
        ("reshape", lambda t: xp.reshape(t, (6, -1)), 0, 0, (T,)),
        ("transpose", lambda t: xp.transpose(t, (2, 0, 1)), 0, 0, (T,)),
        ("transpose default", lambda t: t.T, 0, 0, (T,)),
        ("swapaxes", lambda t: xp.swapaxes(t, 0, -1), 0, 0, (T,)),
        ("expand_dims, squeeze", lambda x: xp.squeeze(xp.expand_dims(x, (0, 2)), 0), 0, 0, (A,)),
        ("broadcast_to", lambda x: xp.broadcast_to(x, (2, 3)), 0, 0, (A,)),
        ("concatenate", lambda x, v: xp.concatenate([x, v, x * 2]), (0, None), 0, (A, V)),
        ("stack axis 1", lambda x, y: xp.stack([x, y], axis=1), 0, 0, (A, B)),
        ("getitem basic", lambda t: t[1, ::-1, None, 2:], 0, 0, (T,)),
        ("getitem negative", lambda x: x[-1] * x[0], 0, 0, (A,)),
        ("getitem fancy", lambda m: m[xp.array([2, 0, 2])], 0, 0, (M,)),
        ("getitem batched index", lambda x, i: x[i], 0, 0, (A, I)),
        ("pad", lambda x: xp.pad(x, (1, 2)), 0, 0, (A,)),
        ("tile", lambda x: xp.tile(x, (2, 1)), 0, 0, (A,)),
        ("roll", lambda x: xp.roll(x, 1), 0, 0, (M,)),
        ("flip", lambda m: xp.flipud(m) + xp.fliplr(m), 0, 0, (M,)),
        ("tril", lambda m: xp.tril(m) - xp.triu(m, 1), 0, 0, (M,)),
        ("diagonal, trace", lambda m: xp.trace(m) + xp.sum(xp.diagonal(m)), 0, 0, (M,)),
        ("outer", lambda x, v: xp.outer(x, v), (0, None), 0, (A, V)),
        ("inv", lambda s: xp.linalg.inv(s), 0, 0, (S,)),
        ("det, slogdet", lambda s: xp.linalg.det(s) + xp.linalg.slogdet(s)[1], 0, 0, (S,)),
        ("solve vector", lambda s, x: xp.linalg.solve(s, x), 0, 0, (S, A)),
        ("solve unbatched matrix", lambda s, x: xp.linalg.solve(s, x), (None, 0), 0, (S[0], A)),
        ("solve matrix rhs", lambda s, m: xp.linalg.solve(s, m), 0, 0, (S, M)),
        ("cholesky", lambda s: xp.linalg.cholesky(s), 0, 0, (S,)),
        ("eigh values", lambda s: xp.linalg.eigh(s)[0], 0, 0, (S,)),
        ("norm", lambda x: xp.linalg.norm(x), 0, 0, (A,)),
        ("in_axes 1", lambda x: x * 2, 1, 0, (A,)),
        ("in_axes -1, out_axes 1", lambda t: xp.sum(t, axis=0), -1, 1, (T,)),
        ("out_axes -1", lambda x: xp.outer(x, x), 0, -1, (A,)),
        ("tuple out", lambda x: (x, xp.sum(x)), 0, (1, 0), (A[:, :, None] * A[:, None, :],)),
        ("unbatched output broadcast", lambda x: xp.ones(2), 0, 0, (A,)),
        ("nested vmap", lambda x, y: vmap(lambda a: vmap(lambda b: a * b)(y))(x), None, None,
         (A[0], B[0])),
        ("vmap of grad", lambda x: grad(loss)(W, x), 0, 0, (A,)),
        ("vmap of grad argnums 1", lambda x: grad(loss, argnums=1)(W, x), 0, 0, (A,)),
        ("grad of vmap", lambda w: grad(lambda w: xp.sum(vmap(lambda x: loss(w, x))(A)))(w), None, None, (W,)),
        ("vmap of jacfwd", lambda x: jacfwd(lambda z: xp.sin(z) * xp.sum(z))(x), 0, 0, (A,)),
        ("vmap of jacrev", lambda x: jacrev(lambda z: xp.sin(z) * xp.sum(z))(x), 0, 0, (A,)),
        ("vmap of hessian", lambda x: hessian(lambda z: xp.sum(xp.sin(z) ** 2) * xp.sum(z))(x), 0, 0, (A,)),
        ("jacfwd of vmap", lambda x: jacfwd(vmap(lambda z: xp.sin(z) * xp.sum(z)))(x), None, None, (A,)),
        ("jacrev of vmap", lambda x: jacrev(vmap(lambda z: xp.cos(z) * xp.prod(z)))(x), None, None, (A,)),
        ("hessian of vmap", lambda x: hessian(lambda z: xp.sum(vmap(lambda r: xp.sum(r ** 3))(z)))(x), None, None, (A,)),
        ("vmap of vmap of grad", lambda x: vmap(grad(lambda z: xp.sum(xp.sin(z) ** 2)))(x), 0, 0, (M,)),
        ("qr r", lambda m: xp.linalg.qr(m)[1] ** 2, 0, 0, (M,)),
        ("svd values", lambda m: xp.linalg.svd(m, compute_uv=False), 0, 0, (M,)),
        ("eigh vectors squared", lambda s: xp.linalg.eigh(s)[1] ** 2, 0, 0, (S,)),
        ("pinv", lambda m: xp.linalg.pinv(m), 0, 0, (M,)),
        ("matrix_power", lambda m: xp.linalg.matrix_power(m, 3), 0, 0, (M,)),
        ("cumprod, diff", lambda x: xp.cumprod(x) + xp.concatenate([xp.diff(x), x[:1]]), 0, 0, (A,)),
        ("convolve", lambda x, v: xp.convolve(x, v), (0, None), 0, (A, V)),
        ("kron", lambda x, v: xp.kron(x, v), (0, None), 0, (A, V)),
        ("cross", lambda x, y: xp.cross(x, y), 0, 0, (A, B)),
        ("take_along_axis", lambda m: xp.take_along_axis(m, xp.argsort(m, axis=1), axis=1), 0, 0, (M,)),
        ("interp", lambda x: xp.interp(x, xp.array([0.0, 1.0, 2.0]), xp.array([1.0, -1.0, 3.0])), 0, 0, (A,)),
        ("tensordot", lambda m, t: xp.tensordot(m, t, axes=([1], [0])), (0, 0), 0, (M, T[:, 0, :, :])),
        ("einsum ellipsis", lambda t: xp.einsum("...ij->...ji", t), 0, 0, (T,)),
        ("repeat", lambda x: xp.repeat(x, 2), 0, 0, (A,)),
        ("split", lambda x: xp.split(x, 3)[1] * 2, 0, 0, (A,)),
        ("var ddof", lambda m: xp.var(m, axis=0, ddof=1), 0, 0, (M,)),
        ("average weights", lambda x: xp.average(x, weights=xp.array([1.0, 2.0, 3.0])), 0, 0, (A,)),
        ("logaddexp, hypot", lambda x, y: xp.logaddexp(x, y) + xp.hypot(x, y), 0, 0, (A, B)),
        ("trace offset", lambda m: xp.trace(m, offset=1), 0, 0, (M,)),
        ("diag of vector", lambda x: xp.diag(x), 0, 0, (A,)),
        ("diag of matrix", lambda m: xp.diag(m), 0, 0, (M,)),
        ("sort descending", lambda x: xp.sort(x)[::-1], 0, 0, (A,)),
        ("argsort", lambda x: xp.argsort(x), 0, 0, (A,)),
        ("where one-hot", lambda x: xp.where(x == xp.max(x), 1.0, 0.0), 0, 0, (A,)),
        ("concatenate axis None", lambda m: xp.concatenate([m, m], axis=None), 0, 0, (M,)),
        ("atleast_2d", lambda x: xp.atleast_2d(x) @ xp.atleast_2d(x).T, 0, 0, (A,)),
        ("moveaxis", lambda t: xp.moveaxis(t, 0, -1), 0, 0, (T,)),
        ("ravel, flatten", lambda m: xp.ravel(m) + m.flatten(), 0, 0, (M,)),
        ("triu k", lambda m: xp.triu(m, k=-1), 0, 0, (M,)),
        ("softmax by hand", lambda x: xp.exp(x - xp.max(x)) / xp.sum(xp.exp(x - xp.max(x))), 0, 0, (A,)),
        ("vmap of hvp", lambda x, v: jacfwd(grad(lambda z: xp.sum(xp.sin(z) ** 3)))(x) @ v, 0, 0, (A, B)),
        ("fft", lambda x: xp.fft.fft(x), 0, 0, (A,)),
        ("rfft2 of a matrix, ortho", lambda m: xp.fft.rfft2(m, norm="ortho"), 0, 0, (M,)),
        ("irfft n", lambda z: xp.fft.irfft(z, n=6), 0, 0, (Z,)),
        ("fftshift, ifftn axes", lambda t: xp.fft.ifftn(xp.fft.fftshift(t), axes=(0, 2)), 0, 0, (T,)),
        ("vmap of grad through rfft", lambda x: grad(lambda u: xp.sum(xp.abs(xp.fft.rfft(u)) ** 2))(x),
         0, 0, (A,)),
        ("complex elementwise", lambda z, w: xp.exp(z) * xp.conj(w) + xp.abs(z), 0, 0, (Z, Z[::-1])),
        ("complex matmul", lambda z, m: m @ z, (0, None), 0, (Z, M[0] + 1j * M[1])),
        ("vmap of grad, real loss of complex", lambda z: grad(lambda u: xp.sum(xp.abs(xp.sin(u)) ** 2))(z),
         0, 0, (Z,)),
        ("vmap of holomorphic jacfwd", lambda z: jacfwd(lambda u: xp.sin(u) * xp.sum(u), holomorphic=True)(z),
         0, 0, (Z,)),
        ("vmap of holomorphic jacrev", lambda z: jacrev(lambda u: xp.exp(u) * u[0], holomorphic=True)(z),
         0, 0, (Z,)),
    ]


ERRORS = [
    ("inconsistent sizes", lambda vmap: vmap(lambda x, y: x + y)(A, B[:3])),
    ("axis out of range", lambda vmap: vmap(lambda x: x, in_axes=2)(A)),
    ("out_axes None for a mapped output", lambda vmap: vmap(lambda x: x, out_axes=None)(A)),
    ("in_axes a list of the wrong length", lambda vmap: vmap(lambda x: x, in_axes=[0, 0])(A)),
    ("every in_axes None", lambda vmap: vmap(lambda x: x, in_axes=None)(A)),
    ("in_axes of the wrong length", lambda vmap: vmap(lambda x: x, in_axes=(0, 0))(A)),
    ("Python if on a batched value", lambda vmap: vmap(lambda x: x if x.sum() > 0 else -x)(A)),
    ("float() of a batched value", lambda vmap: vmap(lambda x: float(x[0]))(A)),
]


def main():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        sys.exit("JAX is not installed: pip install jax")
    jax.config.update("jax_enable_x64", True)
    ours = cases(np, dt.grad, dt.jacfwd, dt.jacrev, dt.hessian, dt.vmap)
    theirs = cases(jnp, jax.grad, jax.jacfwd, jax.jacrev, jax.hessian, jax.vmap)
    worst, failed = 0.0, []
    for (name, f, in_axes, out_axes, args), (_, jf, _, _, _) in zip(ours, theirs):
        try:
            if in_axes is None and out_axes is None:  # the function applies vmap itself
                got, want = f(*args), jf(*args)
            else:
                got = dt.vmap(f, in_axes=in_axes, out_axes=out_axes)(*args)
                want = jax.vmap(jf, in_axes=in_axes, out_axes=out_axes)(*args)
        except Exception as e:  # noqa: BLE001  (reported, the run goes on)
            failed.append(f"{name}: {type(e).__name__}: {str(e)[:300]}")
            continue
        got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
        for g, w in zip(got, want):
            g, w = np.asarray(g), np.asarray(w)
            if g.shape != w.shape or not np.allclose(g, w, rtol=1e-9, atol=1e-9):
                failed.append(f"{name}: shapes {g.shape} / {w.shape}, "
                              f"max diff {np.max(np.abs(g - w)) if g.shape == w.shape else 'n/a'}")
            else:
                worst = max(worst, float(np.max(np.abs(g - w), initial=0.0)))
    for name, run in ERRORS:
        kinds = []
        for vmap in (dt.vmap, jax.vmap):
            try:
                run(vmap)
                kinds.append(None)
            except (ValueError, TypeError) as e:
                kinds.append(ValueError if isinstance(e, ValueError) else TypeError)
        if kinds[0] != kinds[1]:
            failed.append(f"error '{name}': dualtape raised {kinds[0]}, JAX {kinds[1]}")
    print(f"{len(ours)} value cases, {len(ERRORS)} error cases; largest difference {worst:.2e}")
    for line in failed:
        print("DIFFERS:", line)
    print("all agree" if not failed else f"{len(failed)} disagree")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
