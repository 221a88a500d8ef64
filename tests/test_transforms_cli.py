"""`python -m dualtape.transforms`: prints or writes generated code; one-line errors, exit 2."""

import subprocess
import sys
import textwrap

import pytest

SOURCE = textwrap.dedent('''
    import math

    def f(a, b):
        return math.sin(a) * b

    def bad(a):
        try:
            b = a * 2.0
        except ValueError:
            b = a
        return b

    NOT_A_FUNCTION = 3
''')


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "mod.py"
    path.write_text(SOURCE)
    return path


def run(*args):
    return subprocess.run([sys.executable, "-m", "dualtape.transforms", *map(str, args)],
                          capture_output=True, text=True, timeout=60)


def test_modes_print_source(module):
    out = run(f"{module}:f", "--wrt", "0,1")
    assert out.returncode == 0 and "def f_vjp(a, b, bout=1.0):" in out.stdout
    out = run(f"{module}:f", "--mode", "forward")
    assert out.returncode == 0 and "def f_jvp(a, b, da):" in out.stdout and "dout" in out.stdout
    out = run(f"{module}:f", "--mode", "hvp", "--no-optimize")
    assert out.returncode == 0 and "def f_hvp(" in out.stdout


def test_output_file_runs(module, tmp_path):
    target = tmp_path / "f_hvp.py"
    out = run(f"{module}:f", "--mode", "hvp", "-o", target)
    assert out.returncode == 0 and out.stdout == ""
    namespace = {}
    exec(compile(target.read_text(), str(target), "exec"), namespace)
    grad, hv = namespace["f_hvp"](0.3, 2.0, da=1.0)
    assert abs(hv - (-2.0 * __import__("math").sin(0.3))) < 1e-12


@pytest.mark.parametrize("target, words", [
    ("{dir}/missing.py:f", "no such file"),
    ("{path}:nope", "has no function 'nope'"),
    ("{path}:NOT_A_FUNCTION", "not a function"),
    ("{path}:bad", "`try` is not supported"),
    ("{path}", "expected path/to/module.py:function"),
])
def test_errors_are_one_line_with_exit_code_2(module, target, words):
    out = run(target.format(dir=module.parent, path=module))
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], out.stderr
