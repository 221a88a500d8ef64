"""`check_modes(f, inputs)`: every derivative of f, every way dualtape computes it, compared.

Modes: the tape (`GradientTape`), the functional API (`grad`, `vjp`, `jvp`, `jacfwd`,
`jacrev`, `hvp`), the source transformer (`transforms.grad`, `vjp`, `jvp` with one and
with a batch of tangents, `hvp`), and the mixtures the docs promise: dual numbers through a
generated adjoint (`functional.jvp` of `transforms.grad`) and a `GradientTape` recording a
generated adjoint; asked for by name (`ALL_MODES`), vmap of vjp and jvp and the generated
vjp, jvp and hvp compiled by numba (`jit.*`). Each gives some of: J u, v J (per argument), the Jacobian J, and H u
(the Hessian of <v, f> times u), for random directions u, v.

Comparisons. Modes against each other: rtol 1e-9 (float64; only rounding differs, with
atol 1e-9 scaled by the largest expected entry). Modes against central differences
(step 1e-6): rtol 1e-5, atol 1e-6 x scale, the float64 tolerances of `check_grads`
(differences keep about half the digits). A kink or branch threshold within a step of the
input makes differences meaningless: they are also taken with a step of 1e-5, and where
the two disagree beyond that tolerance the differences are discarded (`fd_unstable`), while
the modes are still compared with each other (they all take the branch f takes at x). So are
they where the partial differences (one coordinate at a time) disagree with the difference along
the direction u (all coordinates at once): f has partials there but no derivative (a tie of an
order statistic: moving one tied value alone leaves it, moving them together moves it), and
where the modes' J u jumps exactly at x (equal on both sides, different at x: a branch test on
its threshold, whose branches meet in value and slope; `_derivative_jumps_at`). For H u the
same two tests run on the gradient (`_hessian_jumps_at`, `_gradient_differentiable_along_u`).

Refusals. A mode may refuse with a clear error: the transformer's `TransformError`, or the
runtime's documented refusals (`errors.RefusalError`: a traced value leaving dualtape, a write
into a tensor or dual number, also when NumPy chains it in the ValueError of a write into a
NumPy array; a NumPy function without a differentiable version; an op without gradient
rules). The tape runs
strict, as the functional API does, so a value leaving it is a refusal rather than TF's
silent `None`. Any other exception is a crash; a number off is wrong; both are failures
naming the mode, the program and the inputs.

The testing floor sits above the engines and beside transforms/, and imports both at the top:
a cross-mode check needs every mode (transforms/ never imports testing: tests/test_layout.py).
"""

import contextlib
import copy
import inspect
import keyword
import re
import signal
import threading
import traceback
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

import dualtape.transforms as dt
from dualtape.transforms import TransformError

from .. import functional as F
from ..core.errors import RefusalError
from .closeness import assert_close
from .modes import Case, as_float64, run_modes

RTOL, ATOL = 1e-9, 1e-9               # mode vs mode
FD_EPS, FD_EPS_CHECK = 1e-6, 1e-5      # central differences, and the step that validates them
FD_RTOL, FD_ATOL = 1e-5, 1e-6          # mode vs differences (testing.tolerances(float64))
MAX_VALUE = 1e6                        # programs whose values exceed this are skipped

RUNTIME = ("tape", "functional.grad", "functional.vjp", "functional.jvp", "functional.jacfwd",
           "functional.jacrev", "functional.hvp")
SOURCE = ("transforms.grad", "transforms.vjp", "transforms.jvp", "transforms.jvp_batched",
          "transforms.hvp")
MIXED = ("mixed.jvp_of_generated_grad", "mixed.tape_of_generated_grad")
MODES = RUNTIME + SOURCE + MIXED
# vmap of vjp and jvp, the case as example 0 of a batch of three: asked for by name (ALL_MODES),
# since vmap refuses what the other modes follow (a Python `if` on a value differs per example)
VMAP = ("vmap.vjp", "vmap.jvp")
# the generated code compiled by numba (jit="fallback": what numba cannot compile runs uncompiled),
# asked for by name: compiling takes seconds a program, and numba is an optional extra
JIT = ("jit.vjp", "jit.jvp", "jit.hvp")
ALL_MODES = MODES + VMAP + JIT

# Messages of the runtime's documented refusals that are not yet a RefusalError (numpy_api.py, the
# gradient registry, grad of an int output as jax.grad); escapes and writes are RefusalErrors.
_RUNTIME_REFUSALS = ("has no differentiable dualtape version", "gradient registry has no entry",
                     "f must return a real floating scalar", "has no dualtape version that vmap can batch")


class ModeFailure(AssertionError):
    """A mode gave a wrong number or crashed; the message names the mode, program and inputs."""


def refusal(exc):
    """The construct a clear refusal names (a short normalized key), or None if `exc` is none.

    Refusals: the transformer's TransformError; the runtime's RefusalError (a traced value
    leaving dualtape, a write into a tensor or dual number); NumPy's ValueError for a write
    into a NumPy array whose direct cause is such a RefusalError (NumPy calls float() on the
    value and chains our error); the documented TypeError/LookupError messages above. Any
    other exception, and any ValueError not chained to one of ours, is None (a crash)."""
    if isinstance(exc, TransformError):
        return "transformer: " + _construct(str(exc))
    if isinstance(exc, RefusalError):
        return "runtime: " + _construct(str(exc))
    if type(exc) is ValueError:
        inner = exc.__cause__ if exc.__cause__ is not None else exc.__context__
        if isinstance(inner, RefusalError):
            return "runtime: " + _construct(str(inner))
        return None
    if isinstance(exc, (TypeError, LookupError)) and any(p in str(exc) for p in _RUNTIME_REFUSALS):
        return "runtime: " + _construct(str(exc))
    return None


_KEEP = set(keyword.kwlist) | {"np", "math", "range", "zip", "enumerate", "list", "dict", "float", "len"}


def _construct(text):
    """The first sentence of a message, without the location and user names (for tallies)."""
    line = text.split("\n")[0]
    line = re.sub(r"^\[[^\]]*\]\s*", "", line)
    line = re.sub(r"^\S+\.py:\d+ in \w+:\s*", "", line)
    line = re.sub(r"'[^']*'", "'…'", line)
    line = re.sub(r"`[^`]*`", lambda m: re.sub(
        r"(?<![.\w])[A-Za-z_]\w*", lambda w: w.group() if w.group() in _KEEP else "v", m.group()), line)
    line = re.sub(r"\d+", "N", line)
    return line.split(". ")[0][:120]


@dataclass
class Report:
    """What one `check_modes` call did: per mode, checked or refused (and why), failures."""
    source: str
    args: tuple
    checked: list = field(default_factory=list)
    refused: dict = field(default_factory=dict)       # mode -> construct
    failures: list = field(default_factory=list)      # (mode, "wrong" | "crash", message)
    fd_unstable: bool = False
    skipped: str = ""                                  # why nothing was compared ("" if it was)


class Tally:
    """Counts over many reports, for long runs: programs, checks per mode, failures, refusals."""

    def __init__(self):
        self.programs = self.skipped = self.fd_unstable = 0
        self.checks, self.wrong, self.crashes = Counter(), Counter(), Counter()
        self.refusals = Counter()                     # (mode group, construct) -> count

    def add(self, report):
        self.programs += 1
        self.skipped += bool(report.skipped)
        self.fd_unstable += report.fd_unstable
        self.checks.update(report.checked)
        for mode, kind, _ in report.failures:
            (self.wrong if kind == "wrong" else self.crashes)[mode] += 1
        for construct in set(report.refused.values()):
            self.refusals[construct] += 1

    def summary(self):
        lines = [f"programs: {self.programs} (skipped: {self.skipped}, finite differences "
                 f"discarded near a kink: {self.fd_unstable})",
                 f"wrong numbers: {sum(self.wrong.values())} {dict(self.wrong)}",
                 f"crashes: {sum(self.crashes.values())} {dict(self.crashes)}", "checks per mode:"]
        lines += [f"  {m:32s} {self.checks[m]}" for m in ALL_MODES if m in MODES or self.checks[m]]
        lines.append("refusals by construct (programs):")
        lines += [f"  {n:6d}  {c}" for c, n in self.refusals.most_common()]
        return "\n".join(lines)


# -- finite differences ---------------------------------------------------------------------------

def _shifted(args, k, direction, step):
    out = list(copy.deepcopy(args))
    out[k] = out[k] + step * direction if np.ndim(out[k]) else float(out[k] + step * float(direction))
    return out


def _quotients(fun, at, k, d):
    """Difference quotients of fun along d in args[k]: central with steps FD_EPS and
    FD_EPS_CHECK, forward and backward with FD_EPS (five evaluations of fun)."""
    def value(step):
        out = fun(*(_shifted(at, k, d, step) if step else copy.deepcopy(at)))
        return [as_float64(o) for o in out] if isinstance(out, (tuple, list)) else [as_float64(out)]
    centre, hi, lo = value(0.0), value(FD_EPS), value(-FD_EPS)
    hi2, lo2 = value(FD_EPS_CHECK), value(-FD_EPS_CHECK)
    return ([(h - l) / (2 * FD_EPS) for h, l in zip(hi, lo)],
            [(h - l) / (2 * FD_EPS_CHECK) for h, l in zip(hi2, lo2)],
            [(h - c) / FD_EPS for h, c in zip(hi, centre)],
            [(c - l) / FD_EPS for c, l in zip(centre, lo)])


def _stable(a, b, tolerance=None):
    """Two difference quotients agree (FD tolerances, or a relative `tolerance`)."""
    for x, y in zip(a, b):
        scale = max(1.0, float(np.max(np.abs(x), initial=0.0)))
        bound = FD_RTOL * np.abs(x) + FD_ATOL * scale if tolerance is None else tolerance * scale
        if not np.all(np.abs(x - y) <= bound):
            return False
    return True


def _smooth(central, check, forward, backward):
    """No kink or branch threshold within a step of x: central differences with two steps
    agree, and so do the one-sided ones (a kink *at* x fools the central ones alone: for
    |x| at 0 they give 0 at every step). One-sided quotients carry an O(h f'') error, so they
    are held to 1e-3 only: a kink changes the slope by O(1)."""
    return _stable(central, check) and _stable(forward, backward, 1e-3)


def _fd_jacobian(case):
    """d f / d args, one block per argument (shape out + arg), or None near a kink."""
    blocks = []
    for k, a in enumerate(case.args):
        columns = []
        for e in np.eye(max(1, case.sizes[k])):
            central, *others = _quotients(case.f, case.args, k, e.reshape(np.shape(a)))
            if not _smooth(central, *others):
                return None
            columns.append(central[0])
        blocks.append(np.moveaxis(np.stack(columns), 0, -1).reshape(columns[0].shape + np.shape(a)))
    return blocks


def _fd_directional(fun, case):
    """d fun along u (all arguments at once; fun returns one value per argument), or None."""
    def along(t):
        return fun(*[a + t * u if np.ndim(a) else float(a + t * u) for a, u in zip(case.args, case.u)])
    central, *others = _quotients(along, [0.0], 0, 1.0)
    return central if _smooth(central, *others) else None


def _differentiable_along_u(case, ju):
    """Whether the partial derivatives (one coordinate at a time) also give the derivative along
    the check direction u (all coordinates at once), as they do where f is differentiable. At a
    tie of an order statistic (the middle of three equal values: `np.percentile(x, q, method=
    'nearest')`, np.median, np.sort) each partial exists, for moving one tied value alone leaves
    the statistic where it is, yet moving them together moves it: the partials' J u differs from
    the difference quotient along u, and f has no derivative at x to check against."""
    def along(t):
        return case.f(*[a + t * u if np.ndim(a) else float(a + t * u) for a, u in zip(case.args, case.u)])
    central, *others = _quotients(along, [0.0], 0, 1.0)
    return _smooth(central, *others) and _stable([as_float64(ju)], [central[0]])


def _differences(case, reverse):
    """{quantity: value} by central differences, or None where they are not trustworthy.
    `reverse(*args)` is a working reverse-mode gradient of <v, f> (for H u), or None."""
    jac = _fd_jacobian(case)
    if jac is None:
        return None
    out = case.from_jacobian(jac)
    if not _differentiable_along_u(case, out["Ju"]):
        return None
    if reverse is not None:
        try:
            hu = _fd_directional(reverse, case)
            if hu is not None:
                out["Hu"] = hu
        except Exception:  # noqa: BLE001 - the mode's own failure is reported by the mode
            pass
    return out


def _hessian_jumps_at(case, hu):
    """Whether the AD Hessian-vector product jumps exactly at x: equal on both sides (x -+ s u)
    and different at x. A branch whose test sits on its threshold at x (`if x @ x > 0.0` at
    x = 0), with branches that agree in value and slope but not in curvature: every mode
    differentiates the branch taken, central differences see the other one. Such an x is a
    kink for H u, like a kink of f for the first derivatives."""
    def hvp_at(step):
        at = list(case.copies())
        for k in range(len(at)):
            at = _shifted(at, k, case.u[k], step)
        return [as_float64(h) for h in F.hvp(case.loss, tuple(at), tuple(case.u))]
    try:
        plus, minus = hvp_at(FD_EPS_CHECK), hvp_at(-FD_EPS_CHECK)
    except Exception:  # noqa: BLE001 - the modes' own failures are reported by the modes
        return False
    return _stable(plus, minus) and not _stable(plus, [as_float64(h) for h in hu])


def _derivative_jumps_at(case, fd_ju):
    """Whether the AD derivative J u jumps exactly at x: equal on both sides (x -+ s u), and
    there equal to the differences `fd_ju`, but different at x (one engine, dual numbers or
    else the transformer's jvp, at all three points: a mode wrong at a smooth x is no jump). A branch whose test sits on its threshold at x
    (`np.select([y > 0, y < 0], [y, np.sin(y)])` at y = 0 takes the default, a constant) with
    branches that meet in value and slope: every mode differentiates the branch taken (as JAX
    does), central differences see the slope around it. Such an x is a kink for the first
    derivatives, like a threshold within a step of x."""
    def ju_at(step):
        at = list(case.copies())
        for k in range(len(at)):
            at = _shifted(at, k, case.u[k], step)
        tangents = tuple(float(t) if np.ndim(a) == 0 else t for a, t in zip(at, case.u))
        try:
            return [as_float64(F.jvp(case.f, tuple(at), tuple(case.u))[1])]
        except Exception:  # noqa: BLE001 - dual numbers refuse writes into arrays: the transformer's
            return [as_float64(dt.jvp(case.f, wrt=case.wrt)(*at, tangents)[1])]
    try:
        plus, minus, at = ju_at(FD_EPS_CHECK), ju_at(-FD_EPS_CHECK), ju_at(0.0)
    except Exception:  # noqa: BLE001 - the modes' own failures are reported by the modes
        return False
    return _stable(plus, minus) and _stable(plus, [as_float64(fd_ju)]) and not _stable(plus, at)


def _gradient_differentiable_along_u(case, reverse, hu_fd):
    """Whether the partial differences of the gradient (one coordinate at a time) also give its
    difference along u (`hu_fd`), as they do where the gradient is differentiable. At a tie of
    an order statistic inside the gradient (the middle two of four equal values: np.percentile
    `midpoint` of zeros, under cos at 0) each partial exists but moving along u orders the tied
    values its own way: H u has no value at x to check against, like J u at a tie of f."""
    total = None
    for k, a in enumerate(case.args):
        for i, e in enumerate(np.eye(max(1, case.sizes[k]))):
            central, *others = _quotients(reverse, case.args, k, e.reshape(np.shape(a)))
            if not _smooth(central, *others):
                return False
            weight = float(np.ravel(case.u[k])[i])
            column = [weight * as_float64(c) for c in central]
            total = column if total is None else [t + c for t, c in zip(total, column)]
    return total is None or _stable(total, [as_float64(h) for h in hu_fd])


# -- comparing -------------------------------------------------------------------------------------

def _compare(got, expected, rtol, atol, what):
    got = got if isinstance(got, list) else [got]
    expected = expected if isinstance(expected, list) else [expected]
    if len(got) != len(expected):
        raise AssertionError(f"{what}: {len(got)} results, expected {len(expected)}.")
    for k, (g, e) in enumerate(zip(got, expected)):
        assert_close(g, e, rtol, atol, what=f"{what} (argument {k})")


def _describe(case, source):
    return f"\nprogram:\n{source}\ninputs: {case.args!r}"


class ModeTimeout(Exception):
    """A mode ran longer than `mode_timeout` seconds (a hang is a failure, not a refusal)."""


@contextlib.contextmanager
def _time_limit(seconds, mode):
    """Raise ModeTimeout after `seconds` (SIGALRM: main thread on POSIX only; else no limit)."""
    usable = seconds and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def expire(signum, frame):
        raise ModeTimeout(f"[check_modes] {mode} did not finish within {seconds} s.")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def check_modes(program_or_function, inputs=None, *, modes=MODES, seed=0, raise_on_failure=True,
                mode_timeout=30):
    """Differentiate f at `inputs` by every mode in `modes`; compare them with each other and
    with finite differences. Returns a `Report`; raises `ModeFailure` on a wrong number or a
    crash (unless raise_on_failure=False: then they are in `report.failures`). A mode that
    runs longer than `mode_timeout` seconds is stopped and reported as a crash (a hang).

    f must live in a file (the transformer reads its source) and take floats or float64
    arrays, all of which are differentiated; its output is a float or an array. A
    `Program` from `programs()` carries its inputs.

    >>> import numpy as np
    >>> from dualtape.testing import check_modes
    >>> report = check_modes(np.tanh, [np.array([0.3, 0.5])])     # doctest: +SKIP
    """
    if hasattr(program_or_function, "function"):
        f, source = program_or_function.function(), program_or_function.source
        inputs = program_or_function.args if inputs is None else inputs
    else:
        f = program_or_function
        try:
            source = inspect.getsource(f)
        except (OSError, TypeError):
            source = repr(f)
    unknown = set(modes) - set(ALL_MODES)
    if unknown:
        raise ValueError(f"[check_modes] unknown modes {sorted(unknown)}; choose from {', '.join(ALL_MODES)}.")
    if inputs is None:
        raise ValueError("[check_modes] no inputs: pass them, e.g. check_modes(f, [np.ones(3)]).")
    args = tuple(a if np.ndim(a) == 0 and isinstance(a, float) else as_float64(a) for a in inputs)
    report = Report(source, args)
    try:
        case = Case(f, args, seed)
    except Exception as exc:  # noqa: BLE001 - f itself fails: nothing to differentiate
        raise ValueError(f"[check_modes] f fails on its inputs ({type(exc).__name__}: {exc}); "
                         f"pass inputs it accepts.{_describe(_Plain(args), source)}") from exc
    if not np.all(np.isfinite(case.value)) or np.max(np.abs(case.value), initial=0.0) > MAX_VALUE:
        report.skipped = "f is not finite or too large at the inputs"
        return report

    results, hung = {}, False
    for mode, thunk in run_modes(case, modes):
        if hung and mode in SOURCE + MIXED:
            continue  # the transformer hung once on f: it would again, in every such mode
        try:
            with _time_limit(mode_timeout, mode):
                results[mode] = thunk()
            report.checked.append(mode)
        except Exception as exc:  # noqa: BLE001 - sorted into refusals and crashes below
            construct = refusal(exc)
            hung = hung or (isinstance(exc, ModeTimeout) and mode in SOURCE + MIXED)
            if construct is not None:
                report.refused[mode] = construct
            else:
                tb = "".join(traceback.format_exception(exc, limit=-4))
                report.failures.append((mode, "crash", f"[check_modes] {mode} crashed:\n{tb}"
                                        f"{_describe(case, source)}"))

    reverse = None
    if "functional.vjp" in results or "transforms.vjp" in results:
        def reverse(*xs):
            if "functional.vjp" in results:
                return F.grad(case.loss, argnums=case.wrt)(*xs)
            return dt.vjp(case.f, wrt=case.wrt)(*xs, case.seed())
    numeric = _differences(case, reverse)
    report.fd_unstable = numeric is None
    ju = next((r["Ju"] for r in results.values() if "Ju" in r), None)
    if numeric is not None and ju is not None:
        try:
            _compare(ju, numeric["Ju"], FD_RTOL, FD_ATOL, "J u")
        except AssertionError:
            if _derivative_jumps_at(case, numeric["Ju"]):
                numeric = None  # the modes are still compared with each other
                report.fd_unstable = True
    hu = next((r["Hu"] for m, r in results.items() if "Hu" in r), None)  # (functional.hvp's first)
    if numeric is not None and "Hu" in numeric and hu is not None:
        try:
            _compare(hu, numeric["Hu"], FD_RTOL, FD_ATOL, "H u")
        except AssertionError:
            if _hessian_jumps_at(case, hu) or not _gradient_differentiable_along_u(case, reverse, numeric["Hu"]):
                del numeric["Hu"]  # the modes are still compared with each other
                report.fd_unstable = True
    bad = set()
    for mode, r in results.items():  # the primal value each mode returns is f's own
        if "y" in r:
            try:
                _compare(r["y"], case.value, RTOL, ATOL, f"[check_modes] {mode}: the value of f vs f itself")
            except AssertionError as exc:
                bad.add(mode)
                report.failures.append((mode, "wrong", f"{exc}{_describe(case, source)}"))
    for quantity in ("J", "Ju", "vJ", "Hu"):
        have = [(m, r[quantity]) for m, r in results.items() if quantity in r]
        trusted = []
        for mode, value in have:
            if numeric is not None and quantity in numeric:
                try:
                    _compare(value, numeric[quantity], FD_RTOL, FD_ATOL,
                             f"[check_modes] {mode}: {quantity} vs central differences")
                except AssertionError as exc:
                    if mode not in bad:
                        bad.add(mode)
                        report.failures.append((mode, "wrong", f"{exc}{_describe(case, source)}"))
                    continue
            trusted.append((mode, value))
        if not trusted:
            continue
        ref_mode, ref = trusted[0]
        for mode, value in trusted[1:]:
            try:
                _compare(value, ref, RTOL, ATOL, f"[check_modes] {mode}: {quantity} vs {ref_mode}")
            except AssertionError as exc:
                if mode not in bad:
                    bad.add(mode)
                    report.failures.append((mode, "wrong", f"{exc}{_describe(case, source)}"))
    if report.failures and raise_on_failure:
        raise ModeFailure("\n\n".join(message for _, _, message in report.failures))
    return report


@dataclass
class _Plain:
    args: tuple
