"""Random whole programs, differentiated every way dualtape can, must agree (issue 9).

`programs()` draws Python/NumPy functions from a typed grammar; `check_modes` runs the
tape, the functional API, the source transformer and their mixtures on each, and compares
them with each other (rtol 1e-9) and with central differences. A clear refusal is allowed;
a wrong number or a crash fails. Constructs whose bugs are still open are excluded below
(KNOWN_OPEN), each naming its finding; re-enable them as the fixes land.
Then the checker itself: it must catch a wrong derivative in each kind of mode.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import dualtape
import dualtape.transforms as dt
from dualtape.errors import RefusalError
from dualtape.testing import FEATURES, ModeFailure, Tally, check_modes, load_module, programs, refusal
from dualtape.testing.program_lists import LIST_FEATURES
from dualtape.testing.program_numpy import NUMPY_FEATURES

# KNOWN_OPEN: the ONE place that holds features back from the CI draw, each while a bug it
# exposes is open: feature -> the finding (in /work/findings/generator_findings.md, or
# issue12_compositions.md / programs.md where named). Delete an entry the moment its fix
# lands; the long run (benchmarks/check_programs.py) still draws every feature.
# Re-enabled earlier: zeros_write/empty_write/copy_write (P2, 8d590ce), array_methods (R1,
# 80f1ff0), explicit_scheme (R2), subscript_write (R3), helper_list_mutation (P3); lstsq (G3,
# fixed by ed6557e); list_write (G1, G1b) and list_concat_chain (G4), fixed by the commit after
# b40d9be (zero_slot; list names through concatenations).
KNOWN_OPEN = {}

CI_PROGRAMS = 180  # "a few hundred" (issue 9), with the 2 x 31 below: about 55 s on an idle 2-core machine
MODES_EXERCISED = ("tape", "functional.vjp", "functional.jvp", "transforms.vjp", "transforms.jvp",
                   "transforms.jvp_batched", "transforms.hvp", "mixed.jvp_of_generated_grad",
                   "mixed.tape_of_generated_grad")


def test_every_mode_agrees_on_random_programs():
    """Every mode agrees on each drawn program, and the run really exercised the modes (not
    everything refused or skipped): one test, so that the tally never depends on which tests
    ran before it in the same process (pytest-xdist's workers each run a share of the suite)."""
    tally = Tally()

    @settings(max_examples=CI_PROGRAMS, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(program=programs(exclude=set(KNOWN_OPEN)))
    def check(program):
        tally.add(check_modes(program))
    check()
    assert tally.programs, tally.summary()
    for mode in MODES_EXERCISED:
        assert tally.checks[mode] >= tally.programs // 4, tally.summary()


# The NumPy functions and lists drawn since issue 12 (program_numpy.py, program_lists.py) are
# 32 of ~90 features: the draw above meets some of them rarely. Each also gets a few small
# programs of its own (with plain statements, matrix inputs and array outputs around it).
NEW_FEATURES = sorted((set(NUMPY_FEATURES) | set(LIST_FEATURES)) - set(KNOWN_OPEN) - {"list_concat_chain"})
PER_NEW_FEATURE = 2


@pytest.mark.parametrize("feature", NEW_FEATURES)
def test_every_mode_agrees_on_each_numpy_function_and_list_form(feature):
    @settings(max_examples=PER_NEW_FEATURE, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(program=programs(features={feature, "matrix_inputs", "array_output", "scalar_inputs"}).filter(
        lambda program: feature in program.features))
    def check(program):
        check_modes(program)
    check()


@pytest.mark.parametrize("kind, shape", [("moveaxis", (3, 3)), ("flip", (3,)), ("flip", (3, 3)),
                                         ("split", (3,))])
def test_views_of_a_name_are_views_so_programs_never_write_into_module_arrays(kind, shape):
    """A program is a pure function: the long run (seed 2001, program 2471) drew
    `a5 = np.moveaxis(M1, 0, 1); a5 *= ...`, a write into the module constant M1 through a
    view (f's value changed from call to call: 'wrong' in every mode). flip, moveaxis and a
    split's piece are views of their operand, so the grammar does not take them as fresh
    arrays that `*=` may write into (program_numpy.view_of)."""
    from hypothesis import strategies as st

    from dualtape.testing.program_exprs import Env, Expr
    from dualtape.testing.program_grammar import ProgramGen

    @settings(max_examples=10, deadline=None, derandomize=True, database=None)
    @given(data=st.data())
    def check(data):
        gen = ProgramGen(data.draw, 3, set(FEATURES))
        e = gen.numpy_expr(Env(), shape, kind, lambda s: Expr("M1", view=True, names=frozenset(["M1"])))
        assert e.view and e.names == {"M1"}, e
    check()


def test_a_walrus_binds_only_where_it_is_written():
    """The long run (seed 2003, program ~6250) drew `np.float_power(1.0 + a * a, 1.5)`, whose
    unused exponent operand held a walrus `(w1 := ...)`: w1 was taken as bound and read later
    (NameError in f itself, which stopped the run). A drawn walrus binds only if the
    statement's text has it."""
    from dualtape.testing.program_exprs import Env
    from dualtape.testing.program_grammar import ProgramGen

    gen, env = ProgramGen(None, 3, set(FEATURES)), Env()

    def drawn(env, depth, loop, top):  # two walruses drawn, one of them dropped by the chosen form
        gen.pending += ["w8", "w9"]
        return ["a = np.float_power(1.0 + ((w8 := 0.5) * w8) * ((w8 := 0.5) * w8), 1.5)"]
    gen._statement = drawn
    gen.statement(env, 1, False, True)
    assert "w8" in env.vars and "w9" not in env.vars and not gen.pending


def test_programs_rejects_unknown_features():
    with pytest.raises(ValueError, match="unknown features.*'whlie'"):
        programs(exclude={"whlie"})
    assert "while" in FEATURES and "rk4" in FEATURES


# -- the checker catches wrong derivatives ------------------------------------------------------

SOURCE = '''
import numpy as np


def f(x, y):
    s = 0.0
    for i in range(3):
        s = s + np.sin(x[i] * y)
    return s * y


def g(x):
    return np.tanh(x) * 2.0
'''


@pytest.fixture(scope="module")
def module():
    return load_module(SOURCE)


def test_a_correct_function_passes_and_reports_every_mode(module):
    report = check_modes(module.f, [np.array([0.3, -0.2, 0.5]), 0.7])
    assert not report.failures and not report.refused
    assert set(report.checked) == set(dualtape.testing.MODES)
    report = check_modes(module.g, [np.array([0.3, -0.2])])  # vector output: no grad/hvp of f
    assert "transforms.grad" not in report.checked and "transforms.vjp" in report.checked


def test_a_wrong_generated_adjoint_is_caught(module, monkeypatch):
    df = dt.grad(module.f, wrt=(0, 1), preserve_result=True)  # (the call check_modes makes)
    real = type(df).__call__

    def wrong(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        return ((out[0][0] * 1.001, out[0][1]), out[1]) if self is df else out
    monkeypatch.setattr(type(df), "__call__", wrong)
    with pytest.raises(ModeFailure, match=r"transforms.grad: vJ vs central differences"):
        check_modes(module.f, [np.array([0.3, -0.2, 0.5]), 0.7], modes=("transforms.grad",))
    with pytest.raises(ModeFailure, match=r"(?s)transforms.grad.*program:.*def f\(x, y\).*inputs:"):
        check_modes(module.f, [np.array([0.3, -0.2, 0.5]), 0.7], modes=("tape", "transforms.grad"))


@pytest.mark.parametrize("mode, api", [("transforms.vjp", "vjp"), ("transforms.grad", "grad"),
                                       ("transforms.jvp", "jvp")])
def test_a_wrong_primal_value_is_caught(module, monkeypatch, mode, api):
    """The value a mode returns beside its derivative (jvp's y, preserve_result) is f's own."""
    df = getattr(dt, api)(module.f, wrt=(0, 1), **({} if api == "jvp" else {"preserve_result": True}))
    real = type(df).__call__

    def wrong(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        if self is not df:
            return out
        return (out[0] * 1.001, out[1]) if api == "jvp" else (out[0], out[1] * 1.001)
    monkeypatch.setattr(type(df), "__call__", wrong)
    report = check_modes(module.f, [np.array([0.3, -0.2, 0.5]), 0.7], modes=(mode,), raise_on_failure=False)
    assert [(m, kind) for m, kind, _ in report.failures] == [(mode, "wrong")]
    assert "the value of f vs f itself" in report.failures[0][2]

def test_a_wrong_custom_gradient_is_caught_in_the_runtime_modes():
    @dualtape.custom_gradient
    def twice(x):
        def grad_fn(upstream):
            return upstream * 3.0  # deliberately wrong: the derivative is 2
        return x * 2.0, grad_fn

    report = check_modes(twice, [np.array([0.5, 1.0])], modes=("tape", "functional.vjp"),
                         raise_on_failure=False)
    assert {mode for mode, kind, _ in report.failures} == {"tape", "functional.vjp"}
    assert all(kind == "wrong" for _, kind, _ in report.failures)


def test_a_crash_is_a_failure_and_a_refusal_is_not(module):
    def crashes(x):
        raise RuntimeError("boom")
    with pytest.raises(ValueError, match="f fails on its inputs"):
        check_modes(crashes, [np.ones(2)])
    src = load_module("import numpy as np\n\n\ndef h(x):\n    try:\n        y = x * 2.0\n"
                      "    finally:\n        pass\n    return np.sum(y)\n")
    report = check_modes(src.h, [np.ones(2)], raise_on_failure=False)
    assert not report.failures
    assert report.refused["transforms.vjp"].startswith("transformer: ")
    assert "tape" in report.checked
    tally = Tally()
    tally.add(report)
    assert "transformer: " in tally.summary() and tally.programs == 1


def test_differences_near_a_kink_are_discarded_not_trusted(module):
    kink = load_module("import numpy as np\n\n\ndef k(x):\n    if x > 0.0:\n        x = x * 3.0\n"
                       "    return x + x\n")
    report = check_modes(kink.k, [0.0])   # the branch threshold sits exactly at the input
    assert report.fd_unstable and not report.failures
    assert not check_modes(kink.k, [0.5]).fd_unstable


HESSIAN_KINK = '''
import numpy as np


def f(x):
    if (w := (x @ x)) > 0.0:
        w -= w
    return w + np.sum(x) + w
'''


def test_a_branch_on_its_threshold_is_a_kink_for_h_u(monkeypatch):
    """Found by the long run (seed 42): at x = 0 the test `x @ x > 0.0` sits on its threshold.
    Both branches have value and slope 0 there but not the same curvature: every mode gives H u
    of the branch taken (4u), central differences of the gradient see the other one (0). The AD
    H u jumps exactly at x, so the differences are discarded for H u, as at a kink of f; the
    modes are still compared with each other, and away from the threshold with the differences."""
    f = load_module(HESSIAN_KINK).f
    report = check_modes(f, [np.zeros(3)], raise_on_failure=False)
    assert not report.failures and report.fd_unstable and "transforms.hvp" in report.checked
    assert not check_modes(f, [np.array([0.3, 0.1, 0.2])]).fd_unstable
    dh = dt.hvp(f, wrt=(0,))
    real = type(dh).__call__

    def wrong(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        return tuple(h * 1.5 for h in out) if self is dh else out
    monkeypatch.setattr(type(dh), "__call__", wrong)
    report = check_modes(f, [np.zeros(3)], modes=("functional.hvp", "transforms.hvp"), raise_on_failure=False)
    assert [(m, kind) for m, kind, _ in report.failures] == [("transforms.hvp", "wrong")]

SELECT_ON_ITS_THRESHOLD = '''
import numpy as np


def f(x, y):
    u2 = np.empty((2, 2))
    for _t1 in range(2):
        u2[_t1] = (np.select([y > 0.0, y < 0.0], [y, np.sin(y)]))
    return x * np.ones(2) + y + np.sum(u2, axis=0)
'''


def test_a_branch_on_its_threshold_is_a_kink_for_the_first_derivatives(monkeypatch):
    """Found by the checker (seed 11): at y[1] = 0 np.select takes its default, a constant,
    whose slope every mode gives (as JAX does); the branches around meet it in value and slope 1,
    so f is smooth and central differences see slope 1. The modes' J u jumps exactly at x: the
    differences are discarded, the modes still compared with each other; away from 0, and for a
    mode wrong alone, they are not."""
    f = load_module(SELECT_ON_ITS_THRESHOLD).f
    report = check_modes(f, [0.0, np.array([1.328, 0.0])], raise_on_failure=False)
    assert not report.failures and report.fd_unstable and "transforms.jvp" in report.checked, report
    assert not check_modes(f, [0.0, np.array([1.328, 0.3])]).fd_unstable
    dj = dt.jvp(f, wrt=(0, 1))
    real = type(dj).__call__

    def wrong(self, *args, **kwargs):
        value, tangent = real(self, *args, **kwargs)
        return (value, tangent * 1.5) if self is dj else (value, tangent)
    monkeypatch.setattr(type(dj), "__call__", wrong)
    report = check_modes(f, [0.0, np.array([1.328, 0.3])], modes=("transforms.vjp", "transforms.jvp"),
                         raise_on_failure=False)
    assert [(m, kind) for m, kind, _ in report.failures] == [("transforms.jvp", "wrong")]


PERCENTILE_OF_TIED_ZEROS = '''
import math

import numpy as np


def f(y):
    return np.cos(np.percentile(y @ y, 40.9, method='midpoint'))


def g(y):  # (math.cos: the tape refuses it, the transformer's modes alone give H u)
    return math.cos(np.percentile(y @ y, 40.9, method='midpoint'))
'''


def test_an_order_statistic_tie_inside_the_gradient_is_a_kink_for_h_u():
    """Found by the checker (seed 4004): y @ y holds four exact zeros and the percentile takes
    the middle two. cos'(0) = 0, so J u is fine, but the gradient moves along u with the tied
    zeros ordered u's way: every mode gives H u of the zeros it picked (index order), the
    differences along u another. The gradient's partial differences disagree with its
    difference along u: H u has no value there, discarded; the modes are still compared."""
    module = load_module(PERCENTILE_OF_TIED_ZEROS)
    y = np.array([[1.261, 0.0, 0.0], [-0.0, -0.946, -0.869], [0.0, 0.586, 0.376]])
    apart = y + np.array([[0.0, 0.1, 0.2], [0.3, 0.0, 0.05], [0.15, 0.0, 0.0]])
    for f in (module.f, module.g):
        report = check_modes(f, [y], raise_on_failure=False)
        assert not report.failures and report.fd_unstable and "transforms.hvp" in report.checked, report
        assert not check_modes(f, [apart]).fd_unstable


TIED_PERCENTILE = """
import numpy as np


def make_f(cc1, vv1):
    def f(x, y):
        y, a1 = np.dot(y, vv1), (np.percentile(x, 39.3, method='nearest'))
        return (np.clip(0.599, -0.621, 0.934)) + np.sum(x) + y + a1
    return f


f = make_f(0.11, np.array([-0.5, 0.1, 0.7]))
"""


def test_an_order_statistic_at_a_tie_is_a_kink():
    """Found by the random-program checker: the percentile picks the middle of three equal
    values (0., 0., -0.). Moving one of them alone leaves it where it is (each partial
    difference is 0, forward and backward alike), moving them together moves it: f has no
    derivative there, and every mode (the tape too) gives the slope of the value it picked.
    The partial differences' J u disagrees with the difference along u: discarded."""
    f = load_module(TIED_PERCENTILE).f
    x = np.array([[0.56, -0.204, 1.351], [0.5, 0.0, 1.441], [-0.534, 0.0, -0.0]])
    y = np.array([-0.177, -0.0, -0.0])
    report = check_modes(f, [x, y], raise_on_failure=False)
    assert not report.failures and report.fd_unstable and "tape" in report.checked, report
    apart = np.array([[0.56, -0.204, 1.351], [0.5, 0.1, 1.441], [-0.534, 0.3, -0.2]])
    report = check_modes(f, [apart, y])  # no tie: the differences are trusted
    assert not report.fd_unstable and "tape" in report.checked


def test_a_wrong_rule_at_a_smooth_point_is_still_reported(monkeypatch):
    """Every mode wrong alike (they agree with each other): only the differences can tell, and
    the check along u must not discard them at a smooth point."""
    f = load_module(TIED_PERCENTILE).f
    x = np.array([[0.56, -0.204, 1.351], [0.5, 0.1, 1.441], [-0.534, 0.3, -0.2]])
    y = np.array([-0.177, 0.2, -0.4])
    from dualtape.testing import modes
    real = modes._tape_gradient

    def wrong(*args, **kwargs):  # the tape's gradient off by 10% in one entry
        grads = real(*args, **kwargs)
        grads[0] = grads[0] * np.where(np.arange(grads[0].size).reshape(grads[0].shape) == 4, 1.1, 1.0)
        return grads
    monkeypatch.setattr(modes, "_tape_gradient", wrong)
    report = check_modes(f, [x, y], modes=("tape",), raise_on_failure=False)
    assert not report.fd_unstable
    assert [(m, kind) for m, kind, _ in report.failures] == [("tape", "wrong")]


# -- the refusal classifier: the runtime's documented refusals, precisely ----------------------

REFUSALS = '''
import numpy as np


def escapes(x):
    return float(x) * 2.0


def writes_into_a_copy(x):
    u = np.copy(x)
    u[0] = 1.0
    return u * x


def writes_into_numpy(x):
    b = np.zeros(2)
    b[0] = x * 2.0
    return np.sum(b)


def early_int_return(x):
    for i in range(3):
        if np.sum(x) > 0.0:
            return i                 # an int: grad refuses it, as jax.grad does
    return np.sum(x * x)


def value_error_when_traced(x):
    if not isinstance(x, float):     # a tensor or dual number: a ValueError chaining a TypeError
        try:
            raise TypeError("not ours")
        except TypeError as exc:
            raise ValueError("setting an array element with a sequence.") from exc
    return x * 2.0
'''


@pytest.fixture(scope="module")
def refusals():
    return load_module(REFUSALS)


RUNTIME_MODES = ("tape", "functional.vjp", "functional.jvp", "functional.jacfwd")


def test_the_escape_refusal_is_a_refusal_in_every_runtime_mode(refusals):
    report = check_modes(refusals.escapes, [0.5], modes=RUNTIME_MODES, raise_on_failure=False)
    assert not report.failures and set(report.refused) == set(RUNTIME_MODES)
    assert all(r.startswith("runtime: a value being differentiated became a plain Python number")
               for r in report.refused.values())


def test_the_tensor_and_dual_write_refusals_are_refusals(refusals):
    report = check_modes(refusals.writes_into_a_copy, [np.array([0.3, 0.5])], modes=RUNTIME_MODES,
                         raise_on_failure=False)
    assert not report.failures and set(report.refused) == set(RUNTIME_MODES)
    assert report.refused["tape"].startswith("runtime: tensors are immutable")
    assert report.refused["functional.jvp"].startswith("runtime: a dual number")


def test_numpys_value_error_chaining_our_escape_refusal_is_a_refusal(refusals):
    """R3: NumPy's write calls float(), which raises our refusal; NumPy chains it in a ValueError."""
    report = check_modes(refusals.writes_into_numpy, [0.5], modes=RUNTIME_MODES, raise_on_failure=False)
    assert not report.failures and set(report.refused) == set(RUNTIME_MODES)
    assert all("became a plain Python number through float()" in r for r in report.refused.values())


def test_an_exception_that_is_not_ours_is_still_a_crash(refusals):
    report = check_modes(refusals.value_error_when_traced, [0.5], modes=RUNTIME_MODES,
                         raise_on_failure=False)
    assert not report.refused
    assert [(m, k) for m, k, _ in report.failures] == [(m, "crash") for m in RUNTIME_MODES]
    assert refusal(ValueError("setting an array element with a sequence.")) is None
    chained = ValueError("setting an array element with a sequence.")
    chained.__cause__ = TypeError("[jvp] a value being differentiated became a plain Python number")
    assert refusal(chained) is None           # the message alone is not enough: not a RefusalError
    assert refusal(TypeError("[jvp] a value being differentiated became a plain number")) is None
    assert refusal(RuntimeError("boom")) is None
    ours = ValueError("setting an array element with a sequence.")
    ours.__cause__ = RefusalError("[jvp] a value being differentiated became a plain Python number")
    assert refusal(ours) == "runtime: a value being differentiated became a plain Python number"


def test_grads_refusal_of_an_int_output_is_a_refusal(refusals):
    """The long run (seed 2001, program 106): f's early `return i3` is an int, which
    dualtape.grad refuses with a TypeError (as jax.grad); that is a refusal, not a crash."""
    report = check_modes(refusals.early_int_return, [np.array([0.3, 0.5])], raise_on_failure=False)
    assert not report.failures
    assert report.refused["functional.grad"].startswith("runtime: f must return a real floating scalar")
    assert refusal(TypeError("[grad] f must return a real floating scalar, got int 0.")) is not None


def test_vmap_and_jit_modes_are_asked_for_by_name(module):
    """ALL_MODES adds vmap of vjp and jvp (the case as example 0 of a batch of three) and the
    numba-compiled vjp, jvp and hvp; MODES, the default, leaves them out, since vmap refuses a
    Python `if` on a value and compiling takes seconds."""
    pytest.importorskip("numba")
    report = check_modes(module.f, [np.array([0.3, -0.2, 0.5]), 0.7], modes=dualtape.testing.ALL_MODES)
    new = {"vmap.vjp", "vmap.jvp", "jit.vjp", "jit.jvp", "jit.hvp"}
    assert not report.failures and new <= set(report.checked), (report.failures, report.refused)
    assert not new & set(dualtape.testing.MODES)
