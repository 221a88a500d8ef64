"""What to call instead of a SciPy function that a traced value cannot go through.

scipy.stats' methods and SciPy's Python functions (`scipy.special.logsumexp`) convert their
arguments with np.asarray, which no library can intercept (SciPy's special functions are
NumPy ufuncs and work on traced values unchanged). A traced value refuses the conversion
under the functional API and in dual numbers; `escape_hint` reads the SciPy call being made
from the stack and names its supported spelling (`dualtape.scipy.stats.norm.logpdf`, the
same signature) or, where dualtape has none, says so and lists what it has. The source
transformer accepts SciPy's own spelling where `dnp.METHOD_DISPATCH` maps it (see
transforms/calls/opmap.py), so `stats_method_hint` also explains its refusals. NumPy only: SciPy
is never imported here.
"""

import sys

from . import dnp


def _public_module(name):
    """`scipy.stats` for `scipy.stats._distn_infrastructure`: the path before a private part."""
    parts = name.split(".")
    public = []
    for part in parts:
        if part.startswith("_"):
            break
        public.append(part)
    return ".".join(public[:2])


def stats_supported():
    """dualtape.scipy.stats' distributions and methods, as a sentence part."""
    methods = {}
    for kind, method in dnp.METHOD_DISPATCH:
        if kind.endswith("_gen"):
            methods.setdefault(kind[:-len("_gen")], []).append(method)
    return "; ".join(f"{dist} ({', '.join(names)})" for dist, names in methods.items()) or "none (SciPy missing)"


def stats_method_hint(dist, method):
    """The fix for scipy.stats.<dist>.<method> on a traced value: its dualtape spelling, or a refusal
    naming what dualtape.scipy.stats has."""
    if (f"{dist}_gen", method) in dnp.METHOD_DISPATCH:
        return (f"Call dualtape.scipy.stats.{dist}.{method} instead (`from dualtape.scipy.stats import {dist}`), "
                "with the same arguments: a differentiable registry op.")
    return (f"dualtape has no derivative of scipy.stats.{dist}.{method}. dualtape.scipy.stats has: "
            f"{stats_supported()}. Write the density with np.* and scipy.special functions (NumPy ufuncs, "
            "which work on traced values), or declare it with dualtape.primitive / custom_gradient.")


def _distribution(obj):
    """The name of a scipy.stats distribution object (norm, a frozen norm(0, 1)), or None."""
    dist = getattr(obj, "dist", None) or getattr(obj, "_dist", None)
    frozen = dist is not None
    dist = dist if frozen else obj
    name = getattr(dist, "name", None)
    if not isinstance(name, str):
        name = type(dist).__name__.removesuffix("_gen")
    return name, frozen


def _scipy_entry(frame):
    """The frame of the SciPy function user code called, when SciPy (through dualtape's and NumPy's
    own frames) is what made the conversion at `frame`: the outermost of the run of SciPy frames
    (norm.logpdf, not the helpers it calls); else None."""
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] in ("dualtape", "numpy"):
        frame = frame.f_back
    entry = None
    while frame is not None and frame.f_globals.get("__name__", "").startswith("scipy."):
        entry, frame = frame, frame.f_back
    return entry


def escape_hint(depth=2):
    """The fix for a traced value refused inside a SciPy call on the caller's stack, or ''."""
    entry = _scipy_entry(sys._getframe(depth))
    if entry is None:
        return ""
    module = _public_module(entry.f_globals.get("__name__", ""))
    name = entry.f_code.co_name
    owner = entry.f_locals.get("self")
    if owner is not None and module == "scipy.stats":
        dist, frozen = _distribution(owner)
        call = f"scipy.stats.{dist}(...).{name}" if frozen else f"scipy.stats.{dist}.{name}"
        hint = stats_method_hint(dist, name)
        if frozen and (f"{dist}_gen", name) in dnp.METHOD_DISPATCH:
            hint += f" Pass it the frozen distribution's parameters too: {dist}.{name}(x, <those of {dist}(...)>)."
        return f" Here {call} converted it (SciPy calls np.asarray). {hint}"
    # a decorator's wrapper (scipy.stats' axis_nan_policy_wrapper; scipy._lib's `wrapper` around
    # scipy.linalg.eigh, which is not under its module) holds the function it wraps
    candidates = [(module, name)] + [(_public_module(getattr(v, "__module__", None) or module), v.__name__)
                                     for v in entry.f_locals.values()
                                     if callable(v) and isinstance(getattr(v, "__name__", None), str)]
    module, name = next(((m, n) for m, n in candidates if not n.startswith("_")
                         and getattr(sys.modules.get(m), n, None) is not None), (module, name))
    function = getattr(sys.modules.get(module), name, None)
    sub = module.split(".")[1] if "." in module else ""
    if (callable(function) and function in dnp.NUMPY_DISPATCH) or (module, name) in dnp.METHOD_DISPATCH:
        return (f" Here {module}.{name} converted it (SciPy calls np.asarray). Call dualtape.scipy.{sub}.{name} "
                f"instead: the same arguments, differentiable.")
    if (module, name) in _NUMPY_EQUIVALENTS:
        return (f" Here {module}.{name} converted it (SciPy calls np.asarray). Call "
                f"{_NUMPY_EQUIVALENTS[module, name]} instead: the same values, differentiable.")
    return (f" Here {module}.{name} converted it (SciPy calls np.asarray); dualtape has no derivative of it. "
            f"See dualtape.scipy{'.' + sub if sub else ''} for the SciPy functions dualtape differentiates, or "
            "write it with np.* and scipy.special functions (NumPy ufuncs, which work on traced values).")


# SciPy functions with no dualtape.scipy spelling whose NumPy twin dualtape differentiates
_NUMPY_EQUIVALENTS = {
    ("scipy.linalg", "eigh"): "np.linalg.eigh(a, UPLO='L') (SciPy's lower=True; UPLO='U' for lower=False; "
                              "the standard problem, b=None; eigvals_only=True: np.linalg.eigvalsh)",
    ("scipy.linalg", "eigvalsh"): "np.linalg.eigvalsh(a, UPLO='L') (SciPy's lower=True; UPLO='U' for "
                                  "lower=False; the standard problem, b=None)",
    ("scipy.linalg", "inv"): "np.linalg.inv(a)",
    ("scipy.linalg", "det"): "np.linalg.det(a)",
    ("scipy.linalg", "solve"): "np.linalg.solve(a, b)",
    ("scipy.linalg", "svd"): "np.linalg.svd(a) (full_matrices= and compute_uv= as SciPy's)",
    ("scipy.linalg", "norm"): "np.linalg.norm(a) (ord= and axis= as SciPy's)",
    ("scipy.linalg", "pinv"): "np.linalg.pinv(a)",
    ("scipy.linalg", "lstsq"): "np.linalg.lstsq(a, b, rcond=None)",
}


def numpy_twin(module, name):
    """The NumPy spelling dualtape differentiates of SciPy's `module.name` (a private module
    such as scipy.linalg._decomp reads as its public one), or None."""
    return _NUMPY_EQUIVALENTS.get((_public_module(module or ""), name))
