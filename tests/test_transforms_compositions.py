"""NumPy functions the transformer differentiates as compositions of registry ops (issue 12).

np.flip, np.split, np.cov, np.linalg.svd, ... are no single primitive: transforms/calls/compositions.py
defines each from registry ops, and np.piecewise is written out at its call
(transforms/calls/rewrites.py). Every function here is checked in every mode by check_modes
(the tape, the functional API, transforms.grad / vjp / jvp / hvp, and generated code run on
tensors and dual numbers) against each other and central differences, then in float32.
"""

import importlib.abc
import inspect
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dualtape
import dualtape.transforms as dt
from dualtape.core import dnp
from dualtape.core.errors import InvalidArgumentError
from dualtape.core.registry import REGISTRY
from dualtape.testing import check_modes
from dualtape.testing.check_modes import MODES
from dualtape.transforms import TransformError
from dualtape.transforms.calls import opmap, wrappers

RNG = np.random.default_rng(12)
C4 = RNG.uniform(0.5, 1.5, (4, 4))  # fixed weights: sign-invariant functions of U, V, Q
C53 = RNG.uniform(0.5, 1.5, (5, 3))


def flip0(x):
    return np.sum(np.sin(np.flip(x, 0)) * x)


def flip_all(x):
    return np.sum(np.flip(x) ** 2 * x)


def flip_axes(x):
    return np.sum(np.flip(x, (0, 1)) * np.cos(x))


def flipud_fliplr(x):
    return np.sum(np.flipud(x) * np.fliplr(x) ** 2)


def moveaxis3(t):
    return np.sum(np.moveaxis(t, 0, -1) * np.sin(np.moveaxis(t, [0, 1], [2, 0])))


def rollaxis3(t):
    return np.sum(np.rollaxis(t, 2) ** 2 * np.sin(np.rollaxis(t, 2)))


def repeat_flat(x):
    return np.sum(np.repeat(x, 2) ** 3)


def repeat_axis(x):
    return np.sum(np.sin(np.repeat(x, [1, 2, 3, 1], axis=0)) * np.repeat(x, 2, axis=1)[:, :3].sum())


def split_equal(x):
    a, b = np.split(x, 2)
    return np.sum(a * b ** 2)


def split_at(x):
    return np.sum(np.split(x, [1, 3])[1] ** 2) * np.sum(np.split(x, [1, 3], axis=1)[0])


def array_split_uneven(x):
    parts = np.array_split(x, 3, axis=0)
    return np.sum(parts[0] ** 2) + np.sum(np.sin(parts[2])) * np.sum(parts[1])


def hsplit_vsplit(x):
    left, right = np.hsplit(x, 2)
    top, bottom = np.vsplit(x, 2)
    return np.sum(left * right ** 2) + np.sum(np.sin(top) * bottom)


def dsplit3(t):
    front, back = np.dsplit(t, 2)
    return np.sum(front ** 2 * back)


def inner_matrices(x):
    return np.sum(np.inner(x, x) ** 2)


def inner_vectors(v):
    return np.inner(v, np.sin(v))


def inner_scalar(a, v):
    return np.sum(np.inner(a, v) * v)


def dot_scalar(a, v):  # np.dot with a scalar operand is a product (it crashed as MatMul)
    return np.sum(np.dot(2.0, v) * np.dot(v, a) + np.dot(a, v) ** 2)


def dot_stacks(x, y):  # b of three axes: a tensordot, not matmul's broadcasting
    return np.sum(np.dot(x, y) ** 2) + np.sum(np.dot(x, y[0]) * np.sin(x[..., :1]))


def dot_method(m, v):
    return np.sum(m.dot(v) ** 2) + v.dot(v)


def cov_rows(x):
    return np.sum(np.cov(x) ** 2)


def cov_pair(x):
    return np.sum(np.cov(x[0], x[1]) ** 2)


def cov_columns(x):
    return np.sum(np.cov(x, rowvar=False, bias=True) * x[:3, :3])


def cov_ddof0(x):
    return np.sum(np.sin(np.cov(x, ddof=0)))


def cov_vector(v):
    return np.cov(v) * 2.0


def corrcoef_rows(x):
    return np.sum(np.corrcoef(x) ** 3)


def corrcoef_pair(x):
    return np.sum(np.corrcoef(x[0], x[2]) ** 2)


def select_default_array(x):
    return np.sum(np.select([x > 0.2, x < -0.3], [x ** 2, np.sin(x)], x * 3.0))


def select_default_zero(x):
    return np.sum(np.select([x > 0.1], [np.exp(x)]))


def multi_dot3(x):
    return np.sum(np.linalg.multi_dot([x, np.sin(x), x]) ** 2)


def multi_dot_vectors(x, v):
    return np.linalg.multi_dot([v, x, x, v])


def float_power_scalar(x):
    return np.sum(np.float_power(x, 2.5) * x)


def float_power_arrays(x, y):
    return np.sum(np.float_power(x, y))


def einsum_sublist(x):
    return np.sum(np.einsum(x, [0, 1], x, [1, 2], [0, 2]) ** 2)


def einsum_sublist_implicit(a, b):
    # the implicit output is [0, 30] in increasing order of the ints ('aE'), not of the letters
    return np.sum(np.sin(np.einsum(a, [30, 1], b, [1, 0])) * np.arange(12.0).reshape(3, 4))


def einsum_sublist_ellipsis(t, u):
    return np.sum(np.einsum(t, [Ellipsis, 0, 1], u, [Ellipsis, 1, 2]) ** 2)


def svd_unpacked(x):
    u, s, vh = np.linalg.svd(x)
    return np.sum(s ** 2) + np.sum(u * u * C4) + np.sum(vh ** 2 * C4.T)


def svd_reduced(x):
    u, s, vh = np.linalg.svd(x, full_matrices=False)
    return np.sum(np.log(s)) + np.sum(u ** 2 * C53)


def svd_values(x):
    return np.sum(np.linalg.svd(x, compute_uv=False) ** 3) + np.sum(np.linalg.svd(x)[1])


def eigh_values(x):
    return np.sum(np.linalg.eigh(x + np.transpose(x))[0] ** 2)


def eigh_unpacked(x):
    w, v = np.linalg.eigh(x @ np.transpose(x) + np.eye(4))
    return np.sum(np.sqrt(w)) + np.sum(v ** 2 * C4)


def qr_unpacked(x):
    q, r = np.linalg.qr(x)
    return np.sum(r ** 2 * C53[:3]) + np.sum(q * C53)


def qr_r_only(x):
    return np.sum(np.linalg.qr(x, mode="r") * C53[:3])


def lstsq_solution(x, b):
    return np.sum(np.linalg.lstsq(x, b, rcond=None)[0] ** 2)


def lstsq_unpacked(x, b):
    solution, residuals, rank, s = np.linalg.lstsq(x, b, rcond=None)
    return np.sum(solution * np.arange(3.0)) + np.sum(residuals) + np.sum(s) * rank


def matrix_norm_frobenius(x):
    return np.sum(np.linalg.matrix_norm(np.sin(x) * x[None]))


def split_dynamic(x):
    # the number of pieces is not written in the call: compositions.split builds the list
    pieces = np.split(x, np.shape(x)[0] // 2)
    return np.sum(pieces[0] * np.sin(pieces[1]))


def square(v):
    return v ** 2


def scaled(v, k=1.0):
    return v * k


def piecewise_two(x):
    return np.sum(np.piecewise(x, [x > 0.2], [square, scaled]))


def piecewise_otherwise(x):
    return np.sum(np.piecewise(x, [x > 0.2, x < -0.3], [np.sin, 0.5, scaled]) * x)


def piecewise_value(x, a):
    return np.sum(np.piecewise(x, [x > 0.2, x < -0.3], [scaled, a, scaled], k=3.0))


X44, X53 = RNG.standard_normal((4, 4)), RNG.standard_normal((5, 3))
T234, V4 = RNG.standard_normal((2, 3, 4)), RNG.standard_normal(4)
CASES = [
    (flip0, [X44]), (flip_all, [X53]), (flip_axes, [X53]), (flipud_fliplr, [X44]), (moveaxis3, [T234]),
    (rollaxis3, [T234]), (repeat_flat, [X53]), (repeat_axis, [X44[:, :3]]), (split_equal, [X44]),
    (split_at, [X44]), (array_split_uneven, [X53]), (hsplit_vsplit, [X44]), (dsplit3, [T234]),
    (inner_matrices, [X53]), (inner_vectors, [V4]), (inner_scalar, [0.7, V4]), (dot_scalar, [0.7, V4]), (dot_stacks, [T234, np.swapaxes(T234, 1, 2) + 0.5]),
    (dot_method, [X44, V4]), (cov_rows, [X53]),
    (cov_pair, [X53]), (cov_columns, [X44[:, :3]]), (cov_ddof0, [X44]), (cov_vector, [V4]),
    (corrcoef_rows, [X53]), (corrcoef_pair, [X53]), (select_default_array, [X44]),
    (select_default_zero, [X53]), (multi_dot3, [X44 * 0.5]), (multi_dot_vectors, [X44, V4]),
    (float_power_scalar, [np.abs(X53) + 0.5]), (float_power_arrays, [np.abs(X53) + 0.5, X53]),
    (einsum_sublist, [X44]), (einsum_sublist_implicit, [X53[:4], X53[:3, :3] + 1.0]),
    (einsum_sublist_ellipsis, [T234[:, :, :3], T234[:, :3, :2]]), (svd_unpacked, [X44]),
    (svd_reduced, [X53]), (svd_values, [X44]), (eigh_values, [X44]), (eigh_unpacked, [X44]),
    (qr_unpacked, [X53]), (qr_r_only, [X53]), (lstsq_solution, [X53, X53[:, 0] + 1.0]),
    (lstsq_unpacked, [X53, X53[:, 1] - 0.5]), (piecewise_two, [X44]), (piecewise_otherwise, [X44]),
    (matrix_norm_frobenius, [X44]),
]
SOURCE_MODES = ("transforms.grad", "transforms.vjp", "transforms.jvp", "transforms.jvp_batched", "transforms.hvp")
IDS = [f.__name__ for f, _ in CASES]


@pytest.mark.parametrize("f, inputs", CASES, ids=IDS)
def test_every_mode_agrees(f, inputs):
    report = check_modes(f, inputs)  # raises on a wrong number or a crash in any mode
    assert not report.skipped and not report.fd_unstable
    assert set(SOURCE_MODES) <= set(report.checked), report.refused


def test_a_differentiated_constant_in_piecewise():
    # the runtime modes refuse np.piecewise with a differentiated constant in funclist; the
    # transformer writes it into the selected elements, checked against differences
    report = check_modes(piecewise_value, [X44, 0.8])
    assert set(SOURCE_MODES) <= set(report.checked), report.refused


def test_split_into_a_number_of_pieces_known_at_run_time():
    # every mode, batched tangents included (a list item's tangent was written as an array's
    # row, dys[:, k]: tests/test_transforms_lists.py)
    report = check_modes(split_dynamic, [X44])
    assert set(SOURCE_MODES) <= set(report.checked), report.refused


def _loose(x, y, rtol):
    scale = max(np.max(np.abs(y)), 1.0)
    np.testing.assert_allclose(x, y, rtol=rtol, atol=rtol * scale)


@pytest.mark.parametrize("f, inputs", CASES, ids=IDS)
def test_float32(f, inputs):
    # float32 inputs: grad, jvp and hvp agree with the tape (where it takes the mixed dtypes
    # NumPy allows) and with the float64 derivatives, to float32 precision
    wrt = tuple(range(len(inputs)))
    x32 = [np.float32(a) if np.ndim(a) == 0 else np.asarray(a, np.float32) for a in inputs]
    grads = dt.grad(f, wrt)(*x32)
    try:
        tape = dualtape.grad(f, argnums=wrt)(*x32)
    except InvalidArgumentError:  # float_power's float64 result times a float32: TF's dtype rule
        tape = grads
    for g, g_tape, g64 in zip(grads, tape, dt.grad(f, wrt)(*inputs)):
        assert np.asarray(g).dtype.kind == "f" and np.shape(g) == np.shape(g64)
        _loose(g, g_tape, 1e-3)
        _loose(g, g64, 1e-3)
    u = [np.asarray(a, np.float64) * 0 + 0.5 for a in inputs]
    u32 = tuple(np.asarray(t, np.float32) for t in u)
    _loose(dt.jvp(f, wrt)(*x32, u32)[1], dt.jvp(f, wrt)(*inputs, tuple(u))[1], 1e-3)
    for h, h64 in zip(dt.hvp(f, wrt)(*x32, u32), dt.hvp(f, wrt)(*inputs, tuple(u))):
        _loose(h, h64, 2e-3)


# -- np.cov was np.matmul to the transformer (issue 12) -----------------------------------------

def test_cov_is_not_its_matmul():
    # dnp.cov calls mean, transpose, squeeze, ... beside its one MatMul: no single primitive
    cov = dnp.NUMPY_DISPATCH[np.cov]
    assert opmap.lookup(np.cov) is None and wrappers.wrapped_primitive(cov) is None
    x = X53
    numeric = dualtape.grad(cov_rows)(x)
    np.testing.assert_allclose(dt.grad(cov_rows)(x), numeric, rtol=1e-10)
    np.testing.assert_allclose(dt.grad(cov_pair)(x), dualtape.grad(cov_pair)(x), rtol=1e-10)


def test_audited_wrappers_keep_their_primitive():
    expected = {np.outer: "Einsum", np.take: "GatherV2", np.tile: "Tile",
                np.linalg.solve: "MatrixSolve", np.trace: "Einsum", np.diagonal: "Einsum",
                np.average: "Average", np.concatenate: "ConcatV2", np.sum: "Sum", np.mean: "Mean",
                np.linalg.cholesky: "Cholesky"}
    for fn, name in expected.items():
        assert opmap.lookup(fn).prim.name == name, fn.__name__
    for fn in (np.cov, np.corrcoef, np.dot, np.linalg.multi_dot, np.flip, np.repeat, np.inner, np.select):
        assert opmap.lookup(fn) is None, fn.__name__


SUM = REGISTRY["Sum"]


def _wrapper_of_one_op(a, axis=None):
    return SUM(a, axis=axis)


def _wrapper_of_two_ops(a):
    return SUM(dnp.transpose(a))


def _wrapper_in_a_loop(a):
    for _ in range(2):
        a = SUM(a, axis=0)
    return a


def test_a_wrapper_stands_for_its_primitive_only_when_it_is_its_only_op():
    assert wrappers.wrapped_primitive(_wrapper_of_one_op) is SUM
    assert wrappers.wrapped_primitive(_wrapper_of_two_ops) is None
    assert wrappers.wrapped_primitive(_wrapper_in_a_loop) is None


def cholesky_upper(x):
    return np.sum(np.linalg.cholesky(x @ np.transpose(x) + np.eye(4), upper=True) * C4)


def cholesky_lower(x):
    return np.sum(np.linalg.cholesky(x @ np.transpose(x) + np.eye(4), upper=False) * C4)


def test_cholesky_upper_is_the_upper_factor():
    # it was differentiated as the lower factor: a wrong gradient (issue 12), then refused; the
    # Cholesky op now takes upper= as a static (issue 19)
    for f in (cholesky_upper, cholesky_lower):
        np.testing.assert_allclose(dt.grad(f)(X44), dualtape.grad(f)(X44), rtol=1e-9)
    numeric = np.array([(cholesky_upper(X44 + 1e-6 * e.reshape(4, 4)) - cholesky_upper(X44 - 1e-6 * e.reshape(4, 4)))
                        / 2e-6 for e in np.eye(16)]).reshape(4, 4)
    np.testing.assert_allclose(dt.grad(cholesky_upper)(X44), numeric, rtol=1e-6, atol=1e-8)
    assert not np.allclose(dt.grad(cholesky_upper)(X44), dt.grad(cholesky_lower)(X44))


# -- refusals and errors -------------------------------------------------------------------------

def piecewise_lambda(x):
    return np.sum(np.piecewise(x, [x > 0.2], [lambda v: v ** 2, 0.0]))


def piecewise_funcs_variable(x, funcs):
    return np.sum(np.piecewise(x, [x > 0.2], funcs))


def einsum_labels_variable(x, labels):
    return np.sum(np.einsum(x, labels, x, [1, 2]))


def split_unequal(x):
    return np.sum(np.split(x, 2)[0])


def svd_full_tall(x):
    return np.sum(np.linalg.svd(x)[0])


@pytest.mark.parametrize("f, args, pattern", [
    (piecewise_lambda, (X44,), r"piecewise_lambda: a lambda .*\n.*Define the function with `def`"),
    (piecewise_funcs_variable, (X44, [square, 0.0]), r"funclist written out as a list.*\n.*function names"),
    (einsum_labels_variable, (X44, [0, 1]), r"sublist form with literal lists.*\n.*literal lists"),
], ids=["lambda", "funclist", "labels"])
def test_refusals_name_the_construct_and_the_fix(f, args, pattern):
    with pytest.raises(TransformError, match=pattern):
        dt.grad(f)(*args)


def test_numpy_errors_are_raised_as_numpy_raises_them():
    with pytest.raises(ValueError, match=r"\[split\] .*equal division"):
        dt.grad(split_unequal)(X53)
    with pytest.raises(ValueError, match=r"\[Svd\] full_matrices=True"):
        dt.grad(svd_full_tall)(X53)


# -- the generated code --------------------------------------------------------------------------

def test_the_call_stays_as_written_and_its_adjoint_is_a_helper():
    source = dt.grad(flip0).source_for(X44)
    assert "np.flip(x, 0)" in source and "def flip_vjp(m, axis=None, bout=1.0):" in source
    assert "m[flip_index(np.ndim(m), axis)]" in source
    source = dt.grad(piecewise_otherwise).source_for(X44)
    assert "piecewise_masks(" in source and "= np.sin(_t" in source


SAVED = [(flip0, (X44,)), (cov_pair, (X53,)), (svd_unpacked, (X44,)), (split_at, (X44,)),
         (piecewise_otherwise, (X44,)), (lstsq_unpacked, (X53, X53[:, 1]))]

_NO_DUALTAPE = textwrap.dedent('''
    import importlib.abc, sys
    class _Refuse(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in ("dualtape", "gast"):
                raise ImportError(f"{name} is not available to a saved module")
    sys.meta_path.insert(0, _Refuse())
''')


def test_saved_modules_are_self_contained(tmp_path):
    # df.save writes the composition helpers and runtime helpers they read: NumPy alone runs them
    assert isinstance(_NO_DUALTAPE, str) and importlib.abc.MetaPathFinder
    script = [_NO_DUALTAPE, "import numpy as np", f"sys.path.insert(0, {str(tmp_path)!r})"]
    for k, (f, args) in enumerate(SAVED):
        for mode, transform in (("grad", dt.grad(f, tuple(range(len(args))))), ("hvp", dt.hvp(f))):
            if mode == "grad":
                expected = transform(*args)
            else:
                expected = transform.value_and_tangent(args[0], np.ones_like(args[0]), *args[1:]) if len(
                    args) == 1 else None
                if expected is None:
                    continue
            name = f"saved_{mode}_{k}"
            text = pathlib.Path(transform.save(tmp_path / f"{name}.py")).read_text()
            assert "dualtape" not in "".join(line for line in text.splitlines() if line.startswith(("import", "from")))
            np.save(tmp_path / f"{name}_expected.npy", np.concatenate([np.ravel(e) for e in expected]))
            np.savez(tmp_path / f"{name}_in.npz", *args)
            call = (f"{name}.{transform.name}(*args)" if mode == "grad"
                    else f"{name}.{transform.name}(*args, dx=np.ones_like(args[0]))")
            script += [f"import {name}", f"a = np.load({str(tmp_path / f'{name}_in.npz')!r})",
                       f"args = [a[f'arr_{{i}}'] for i in range({len(args)})]",
                       f"got = {call}", "got = got if isinstance(got, tuple) else (got,)",
                       f"want = np.load({str(tmp_path / f'{name}_expected.npy')!r})",
                       "assert np.allclose(np.concatenate([np.ravel(g) for g in got]), want, rtol=1e-12), "
                       f"{name!r}"]
    done = subprocess.run([sys.executable, "-c", "\n".join(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert inspect.isfunction(flip0)


def per_example_loss(w, x):
    h = np.tanh(x @ w)
    return np.sum(h ** 2) + np.sum(np.sin(x))


def test_vmap_of_generated_gradients():
    """The generated adjoint and tangent code runs on vmap's batched values: per-example
    gradients of generated code, as of the runtime's."""
    w, xs = C53, RNG.standard_normal((4, 5))
    grad_w = dt.grad(per_example_loss, wrt=(0,))
    got = dualtape.vmap(lambda x: grad_w(w, x)[0])(xs)
    np.testing.assert_allclose(got, np.stack([grad_w(w, x)[0] for x in xs]), rtol=1e-12)
    np.testing.assert_allclose(got, dualtape.vmap(dualtape.grad(per_example_loss), in_axes=(None, 0))(w, xs),
                               rtol=1e-12)
    tangent = dt.jvp(per_example_loss, wrt=(1,))
    got = dualtape.vmap(lambda x, t: tangent(w, x, (t,))[1])(xs, xs[::-1])
    np.testing.assert_allclose(got, np.stack([tangent(w, x, (t,))[1] for x, t in zip(xs, xs[::-1])]), rtol=1e-12)
