"""jit=True writes a fused loop's result into the array its name held two fused assignments ago
when nothing else can refer to that array (transforms/jit/recycle.py), and never otherwise:
every read that could share the array (a copy, a push, a call) stops the reuse until two fresh
results came in, and a read it cannot follow (a loop header, a nested function) leaves the name
alone. Each case runs compiled against the plain Python function."""

import ast
import textwrap

import numpy as np
import pytest

import dualtape.transforms as dt
from dualtape.transforms.jit import fusion, recycle

numba = pytest.importorskip("numba")

ARRAY = ("array", 1)


def compiled(source, kinds):
    """(the fused source, a function running it compiled, the plain Python function)."""
    source = textwrap.dedent(source)
    fn = ast.parse(source).body[0]
    functions = fusion.fuse_functions([fn], {fn.name: kinds})
    text = "\n\n".join(ast.unparse(f) for f in functions)
    ns = {"np": np, **__import__("dualtape.transforms.jit.vecmath", fromlist=["x"]).KERNEL_GLOBALS}
    exec(compile(text, "<recycle test>", "exec"), ns)
    for f in functions[1:]:
        ns[f.name] = numba.njit(error_model="numpy")(ns[f.name])
    plain = {"np": np}
    exec(compile(source, "<plain>", "exec"), plain)
    return text, numba.njit(ns[fn.name]), plain[fn.name]


def same(got, expected):
    got, expected = (v if isinstance(v, tuple) else (v,) for v in (got, expected))
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


ACCUMULATE = """
def f(x, n):
    y = x * 1.0
    for i in range(n):
        t = y * 0.5
        y = t + np.sin(x)
        s = i * 1.0
        KEEP
    return y, keep
"""
KINDS = {"x": ARRAY, "y": ARRAY, "t": ARRAY, "keep": ARRAY, "s": "scalar", "i": "scalar", "n": "scalar",
         "v": "scalar", "acc": None, "u": ARRAY}


def test_an_accumulator_reuses_its_dead_array():
    text, fast, plain = compiled(ACCUMULATE.replace("KEEP", "pass").replace("return y, keep", "return y"), KINDS)
    assert "_fz_o0_y = _fz_prev_y" in text and "_fz_prev_y = y" in text
    x = np.linspace(-1.0, 1.0, 7)
    same(fast(x, 9), plain(x, 9))


@pytest.mark.parametrize("keep", [
    "keep = y",                                # a copy: one array under two names
    "if i == 2:\n            keep = y",        # the same, once (the reset is inside the if)
    "keep = y[:]",                             # a view
    "keep = np.asarray(y)",                    # a call that may return its argument
])
def test_a_shared_array_is_never_written_again(keep):
    """keep holds y's array of one iteration; reusing it later would change keep."""
    source = ACCUMULATE.replace("KEEP", keep).replace("    y = x * 1.0\n", "    y = x * 1.0\n    keep = x * 0.0\n")
    text, fast, plain = compiled(source, KINDS)
    assert "_fz_own_y = 0" in text  # after the statement that shares it
    x = np.linspace(-1.0, 1.0, 7)
    for n in (1, 2, 3, 4, 8):
        same(fast(x, n), plain(x, n))


def test_reads_that_make_new_arrays_keep_the_reuse():
    source = ACCUMULATE.replace("KEEP", "u = -y * 2.0 + np.cos(y)\n        s = s + y.shape[0]")
    text, fast, plain = compiled(source.replace("return y, keep", "return y, u"), KINDS)
    assert "_fz_o0_y = _fz_prev_y" in text
    assert text.count("_fz_own_y = 0") == 3  # (the start, and after the stores of y outside the kernel)
    x = np.linspace(-1.0, 1.0, 7)
    same(fast(x, 6), plain(x, 6))


@pytest.mark.parametrize("read", [
    "for v in y:\n            s = s + v",    # a loop header
    "if y[0] > 2.0:\n            s = 1.0",   # an if's test (a subscript)
])
def test_a_read_it_cannot_follow_leaves_the_name_alone(read):
    source = ACCUMULATE.replace("KEEP", read).replace("return y, keep", "return y")
    text, fast, plain = compiled(source, KINDS)
    assert "_fz_prev_y" not in text and "_fz_kernel_0" in text
    x = np.linspace(-1.0, 1.0, 7)
    same(fast(x, 5), plain(x, 5))


def test_a_nested_function_reading_the_name_leaves_it_alone():
    fn = ast.parse(textwrap.dedent(ACCUMULATE.replace("KEEP", "g = lambda: y"))).body[0]
    fusion.fuse_functions([fn], {"f": KINDS})
    assert "_fz_prev_y" not in ast.unparse(fn)


def test_exposures_names_each_sharing_statement():
    fn = ast.parse(textwrap.dedent("""
    def f(y, z):
        a = y.shape
        b = y * 2.0
        c = y
        z.append(y)
        return y
    """)).body[0]
    resets = recycle.exposures(fn, "y", [])
    assert resets == {id(fn.body[2]), id(fn.body[3])}


def test_a_vector_chain_reuses_its_adjoint_and_keeps_its_saved_rows():
    def chain(x, steps):
        for _ in range(steps):
            x = np.sin(x) * 1.0001 + 0.01 * x * x
        return np.sum(x)

    g = dt.grad(chain, jit=True)
    x = np.linspace(-1.0, 1.0, 10)
    source = g.source_for(x, 5)
    assert "_fz_prev_bx = bx" in source, source
    assert "_fz_prev_x" not in source  # (x: its results are lent rows)
    np.testing.assert_allclose(g(x, 300), dt.grad(chain)(x, 300), rtol=1e-12, atol=1e-14)
    huge = np.array([0.3, 1e7, -2.5, np.inf, 0.1, np.nan, 3.0, -1e300, 0.2, 5.0])
    with np.errstate(all="ignore"):  # (the twins' range checks: the loops run again with libm)
        np.testing.assert_allclose(g(huge, 3), dt.grad(chain)(huge, 3), rtol=1e-12, atol=1e-14)
