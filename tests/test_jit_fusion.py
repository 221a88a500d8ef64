"""jit=True fuses runs of elementwise statements on arrays of one shape into one loop
(transforms/jit/fusion.py): the same numbers as the uncompiled generated code, a guard that
falls back to the statements as they were when shapes differ, and no fusion where it could
change what the code means (copies in code that writes in place, names of two kinds)."""

import ast
import textwrap

import numpy as np
import pytest

import dualtape.transforms as dt
from dualtape.transforms.jit import fusion

numba = pytest.importorskip("numba")


def chain(x, steps):
    for _ in range(steps):
        x = np.sin(x) * 1.0001 + 0.01 * x * x
    return np.sum(x)


def scaled(x, w, steps):
    for _ in range(steps):
        x = np.tanh(x * w) + 0.5 * x
    return np.sum(x * x)


def reciprocal(x):
    y = 1.0 / x
    z = y * y + x
    return np.sum(z)


def close(a, b):
    for p, q in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        np.testing.assert_allclose(p, q, rtol=1e-12, atol=1e-14)


def test_a_vector_chain_compiles_to_fused_loops_with_the_same_gradient():
    x = np.linspace(-1.0, 1.0, 10)
    g = dt.grad(chain, jit=True)
    source = g.source_for(x, 7)
    assert "_fz_kernel_0" in source and "_fz_kernel_1" in source  # the forward and the backward loop
    assert "if bx.shape == x.shape:" in source and "else:" in source
    close(g(x, 200), dt.grad(chain)(x, 200))


@pytest.mark.parametrize("api", ["jvp", "hvp"])
def test_forward_and_second_order_modes_fuse_too(api):
    x, u = np.linspace(-1.0, 1.0, 6), np.linspace(0.5, -0.5, 6)
    fused = getattr(dt, api)(chain, jit=True)
    close(fused(x, 30, u), getattr(dt, api)(chain)(x, 30, u))
    assert "_fz_kernel_" in fused.source


def test_matrices_fuse_over_every_index():
    x = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    g = dt.grad(chain, jit=True)
    close(g(x, 40), dt.grad(chain)(x, 40))
    assert "np.ndindex" in g.source


def test_the_guard_runs_the_statements_as_they_were_when_shapes_differ():
    """w of shape (1,) broadcasts against x: the same compiled version (one ndim), the guard
    fails, and the unfused statements give the right (summed) gradient for w."""
    g, plain = dt.grad(scaled, wrt=(0, 1), jit=True), dt.grad(scaled, wrt=(0, 1))
    x = np.linspace(-1.0, 1.0, 5)
    close(g(x, np.linspace(0.5, 1.5, 5), 20), plain(x, np.linspace(0.5, 1.5, 5), 20))
    assert "_fz_kernel_" in g.source
    close(g(x, np.array([0.7]), 20), plain(x, np.array([0.7]), 20))
    rows = np.linspace(-1.0, 1.0, 6).reshape(3, 2)  # (3, 2) against (1, 2): another version, guarded too
    close(g(rows, np.array([[0.7, 1.1]]), 20), plain(rows, np.array([[0.7, 1.1]]), 20))


def test_division_by_zero_gives_what_numpy_gives():
    x = np.array([0.0, 1.0, -2.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = dt.grad(reciprocal)(x)
        got = dt.grad(reciprocal, jit=True)(x)
    np.testing.assert_array_equal(got, expected)  # inf and nan where NumPy has them


# -- the rewrite itself, on hand-written code and kinds ---------------------------------------------

ARRAY = ("array", 1)


def fused(source, kinds):
    fn = ast.parse(textwrap.dedent(source)).body[0]
    return [ast.unparse(f) for f in fusion.fuse_functions([fn], {fn.name: kinds})]


def test_a_copy_is_not_fused_where_the_function_writes_in_place():
    source = """
    def f(x):
        y = x
        z = y * 2.0
        z[0] = 1.0
        return y, z
    """
    kinds = {"x": ARRAY, "y": ARRAY, "z": ARRAY}
    assert len(fused(source, kinds)) == 1  # no kernel: `y = x` must stay one array with x
    without_write = source.replace("        z[0] = 1.0\n", "")
    out = fused(without_write, kinds)
    assert len(out) == 2 and "_fz_kernel_0(x, _fz_o0_y, _fz_o0_z)" in out[0]


def test_only_statements_on_known_float_arrays_fuse():
    source = """
    def f(x, s):
        a = x * s
        b = s * 2.0
        c = a + x
        d = np.sin(c)
        e = q + d
        return a, b, c, d, e
    """
    kinds = {"x": ARRAY, "s": "scalar", "a": ARRAY, "b": "scalar", "c": ARRAY, "d": ARRAY,
             "q": fusion.MIXED, "e": ARRAY}
    out = fused(source, kinds)
    # a alone (b is a scalar statement: it ends the run), then c and d; e reads a name of two kinds
    assert len(out) == 2 and "_fz_kernel_0(a, x, _fz_o0_c, _fz_o0_d)" in out[0]
    assert "b = s * 2.0" in out[0] and "e = q + d" in out[0]


def test_names_read_only_inside_the_run_get_no_array():
    source = """
    def f(x):
        t = np.exp(x)
        u = t * t
        return u
    """
    out = fused(source, {"x": ARRAY, "t": ARRAY, "u": ARRAY})
    assert "_fz_kernel_0(x, _fz_o0_u)" in out[0] and "_fz_o0_t" not in out[0]


def test_a_name_rebound_in_a_loop_is_live_after_it():
    reads = fusion.exposed_reads(ast.parse(textwrap.dedent("""
    b = 1
    for i in range(3):
        c = b
        b = c + 1
    d = b
    """)).body, skip=set())
    assert reads.get("b") and "c" not in reads  # d = b sees the loop's b; c is bound before its read


def test_a_name_the_run_rebinds_is_live_after_it_though_bound_before():
    body = ast.parse(textwrap.dedent("""
    b = 1
    b = b + x
    t = b * x
    d = b
    """)).body
    reads = fusion.exposed_reads(body, skip={id(body[1]), id(body[2])})
    assert reads.get("b") == 1  # (d = b sees the run's b, not the first one)


@pytest.mark.parametrize("source, writes", [
    ("y = x * 2.0\nreturn y", False),
    ("y = x * 2.0\ny[0] = 1.0\nreturn y", True),
    ("y = x * 2.0\nnp.multiply(y, 0.5, out=y)\nreturn y", True),
    ("y = x * 2.0\nnp.copyto(y, x)\nreturn y", True),
    ("y = x * 2.0\ny.fill(0.0)\nreturn y", True),
    ("b = zeros_like(x)\nb = add_at(b, 0, 1.0)\nreturn b", True),
])
def test_writes_into_arrays_through_calls_count_as_in_place(source, writes):
    """Copies are not fused, and no cos is saved beside a stack, in a function that may write
    into an array: through a call too (`out=`, np.copyto, a method, the runtime's add_at)."""
    fn = ast.parse("def f(x):\n" + textwrap.indent(source, "    ")).body[0]
    assert fusion.writes_in_place(fn, {"x": ARRAY, "y": ARRAY, "b": ARRAY}) == writes


def _shrunk_hvp_program(x):  # (the random-program checker's: bx = _bx in a fused run was dropped)
    a1 = np.sin(np.log(1.0 + x * x))
    return 1.042 + np.sum(x) + np.sum(a1)


def test_a_run_that_rebinds_an_adjoint_keeps_it():
    x, u = np.array([-1.0, -0.209]), np.array([0.0, 1.0])
    np.testing.assert_allclose(dt.hvp(_shrunk_hvp_program, jit=True)(x, u), dt.hvp(_shrunk_hvp_program)(x, u),
                               rtol=1e-13)


def _ragged(xs):
    return np.sum(xs[0] * (xs[1] @ xs[0])) + np.sum(np.sin(xs[0]))


def test_code_numba_refuses_once_fused_compiles_as_it_was():
    """The probe's kinds can disagree with numba's types (a list of arrays of two ndims, which
    numba cannot hold): the fused code's refusal never replaces the one of the code as it was,
    which names the real construct (the uncompiled code runs, as jit=True does for lists)."""
    xs = [np.linspace(0.1, 0.9, 3), np.linspace(-1.0, 1.0, 9).reshape(3, 3)]
    t = [np.ones(3), np.zeros((3, 3))]
    with pytest.warns(RuntimeWarning, match="(?s)heterogeneous list.*so jit=True: running the uncompiled"):
        got = dt.jvp(_ragged, jit=True)(xs, t)
    close(got, dt.jvp(_ragged)(xs, t))


def test_a_twin_value_no_array_stores_is_not_computed_in_the_loop():
    """Nothing reads s (the kernel stores no array for it): its vectorizable sin
    and the range check of its argument go (jit/dead_code.py); c's cos and check stay."""
    source = """
    def f(x, b):
        s = np.sin(x)
        c = b * np.cos(x)
        return c
    """
    out = fused(source, {"x": ARRAY, "b": ARRAY, "s": ARRAY, "c": ARRAY})
    kernel = out[1].split("if not _fz_ok")[0]
    assert "_fz_sin(" not in kernel and "_fz_cos(" in kernel
    assert kernel.count("_fz_ok &=") == 1
