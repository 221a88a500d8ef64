"""dualtape's np.fft against JAX's jnp.fft (float64, CPU): values, VJPs and JVPs of every FFT
function over n= / s=, axis= / axes= and norm= variants, odd and even lengths, real and
complex inputs, and the errors where JAX raises. Not run in CI (it needs jax):

    python3 -m venv /tmp/jaxfft && /tmp/jaxfft/bin/pip install jax
    /tmp/jaxfft/bin/pip install -e .
    /tmp/jaxfft/bin/python benchmarks/fft_vs_jax.py [--modes rules,functional,tape,transformer]

Modes: `rules` applies the registry op's rules to plain arrays (the op for the JVP, which is
LINEAR, and the VJP rule); `functional` is dualtape.vjp / dualtape.jvp (JAX's convention);
`tape` is GradientTape, whose complex cotangents are TF's, the conjugates of JAX's
(JAX's vjp(c) = conj(tape.gradient(output_gradients=conj(c)))); `transformer` is
dualtape.transforms.vjp / jvp of a one-line function. Each case's difference is
max |dualtape - jax| / max(1, max |jax|); the run fails above --tolerance (1e-9).

Last run (jax 0.10.2, NumPy 2.4, CPU): 1032 cases (9288 comparisons: the value, and the JVP
and VJP in each of the four modes), largest difference 6.7e-16 (values), 6.4e-16 (JVPs),
5.9e-16 (VJPs); 21 error cases: dualtape raises wherever JAX does (19), and only where JAX
or NumPy does (irfft / hfft of one bin with the default length, where NumPy raises and JAX
returns an empty array).
"""

import argparse
import importlib.util
import itertools
import pathlib
import sys
import tempfile
import warnings

import numpy as np

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)

import dualtape  # noqa: E402
from dualtape import dnp  # noqa: E402
from dualtape.core import registry  # noqa: E402
from dualtape.core.apply_rules import vjp_parts  # noqa: E402

NORMS = (None, "backward", "ortho", "forward")
MODES = ("rules", "functional", "tape", "transformer")


def cases():
    """(function name, input shape, input kind, keyword arguments), every variant."""
    out = []
    for name in ("fft", "ifft"):
        for kind, (shape, axis), n, norm in itertools.product(
                ("complex", "real"), (((8,), -1), ((7,), 0), ((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1)),
                (None, 3, 6, 11), NORMS):
            out.append((name, shape, kind, dict(n=n, axis=axis, norm=norm)))
    for (shape, axis), n, norm in itertools.product((((8,), -1), ((7,), 0), ((3, 5), 0), ((2, 3, 4), 1)),
                                                     (None, 1, 2, 5, 6, 13), NORMS):
        out.append(("rfft", shape, "real", dict(n=n, axis=axis, norm=norm)))
        out.append(("ihfft", shape, "real", dict(n=n, axis=axis, norm=norm)))
        out.append(("irfft", shape, "complex", dict(n=n, axis=axis, norm=norm)))
        out.append(("hfft", shape, "complex", dict(n=n, axis=axis, norm=norm)))
    for name in ("fft2", "ifft2", "rfft2", "irfft2"):
        kind = "real" if name == "rfft2" else "complex"
        for (shape, axes), s, norm in itertools.product((((4, 5), None), ((2, 3, 4), None), ((2, 3, 4), (0, 2)),
                                                          ((3, 4, 5), (-1, 0))), (None, (3, 6), (5, 2)), NORMS):
            kw = dict(s=s, norm=norm) if axes is None else dict(s=s, axes=axes, norm=norm)
            out.append((name, shape, kind, kw))
    for name in ("fftn", "ifftn", "rfftn", "irfftn"):
        kind = "real" if name == "rfftn" else "complex"
        for (shape, axes, s), norm in itertools.product((((2, 3, 4), None, None), ((2, 3, 4), (1,), (7,)),
                                                         ((3, 4, 5), (2, 0), (4, 3)), ((2, 3, 4), (0, 1, 2), (3, 2, 5)),
                                                         ((5, 4), None, (6, 7)), ((3, 5), (-1,), None)), NORMS):
            kw = {"norm": norm}
            if axes is not None:
                kw["axes"] = axes
            if s is not None:
                kw["s"] = s
            out.append((name, shape, kind, kw))
    for name in ("fftshift", "ifftshift"):
        for shape, axes, kind in itertools.product(((5,), (4,), (3, 4), (2, 3, 5)), (None, 0, (0, -1)),
                                                   ("real", "complex")):
            if axes is not None and len(shape) == 1 and axes != 0:
                continue
            out.append((name, shape, kind, dict(axes=axes)))
    return out


def error_cases():
    """(function name, input, keyword arguments): calls NumPy, JAX or dualtape may refuse."""
    x1, x2 = np.arange(1.0, 7.0), np.arange(1.0, 13.0).reshape(3, 4)
    z1 = x1 + 1j
    return [("fft", x1, dict(axis=1)), ("fft", x2, dict(axis=-3)), ("fft", x1, dict(n=0)), ("fft", x1, dict(n=-2)),
            ("fft", x1, dict(norm="bad")), ("ifft", z1, dict(norm="unitary")), ("rfft", x1, dict(n=0)),
            ("rfft", z1, {}), ("irfft", z1, dict(n=0)), ("irfft", z1[:1], {}), ("hfft", z1[:1], {}),
            ("ihfft", z1, {}), ("fftn", x2, dict(axes=(0, 0))), ("fftn", x2, dict(s=(2, 3), axes=(0,))),
            ("fftn", x2, dict(axes=(0, 2))), ("fft2", x1, {}), ("rfftn", x2, dict(s=(0, 3))),
            ("irfftn", z1.reshape(2, 3), dict(axes=(1, 1))), ("fftshift", x2, dict(axes=2)),
            ("fftn", x2, dict(s=(2, 3, 4))), ("rfft2", x2, dict(norm="Ortho"))]


def _jax_fn(name, kw):
    return lambda a: getattr(jnp.fft, name)(a, **kw)


def _numpy_fn(name, kw):
    return lambda a: getattr(np.fft, name)(a, **kw)


def _random(rng, shape, kind):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if kind == "complex" else x


def _diff(got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return np.inf
    return float(np.max(np.abs(got - want), initial=0.0) / max(1.0, np.max(np.abs(want), initial=0.0)))


def _captured_op(name, kw, a):
    """(primitive, static) that dualtape's np.fft.<name> calls for input `a`."""
    seen = []
    saved = registry.tensor_bind[0]

    def capture(op, args, static):
        seen.append((op, static))
        return op.impl(*[np.asarray(x) for x in args], **static)
    registry.tensor_bind[0] = capture
    try:
        getattr(np.fft, name)(dualtape.constant(a), **kw)
    finally:
        registry.tensor_bind[0] = saved
    (op, static), = seen
    return op, static


def _rules(name, kw, a, u, ct):
    op, static = _captured_op(name, kw, a)
    ans = op.impl(a, **static)
    vjp, = vjp_parts(op, ct, ans, (a,), static, [0])
    return op.impl(u, **static), vjp  # the JVP is LINEAR: the op on the tangent


def _functional(name, kw, a, u, ct):
    f = _numpy_fn(name, kw)
    _, tangent = dualtape.jvp(f, (a,), (u,))
    _, pullback = dualtape.vjp(f, a)
    return tangent, pullback(ct)[0]


def _tape(name, kw, a, u, ct):
    x = dualtape.constant(a)
    with dualtape.GradientTape() as tape:
        tape.watch(x)
        y = _numpy_fn(name, kw)(x)
    g = tape.gradient(y, x, output_gradients=dualtape.constant(np.conj(ct)))
    with dualtape.autodiff.ForwardAccumulator(x, dualtape.constant(u)) as acc:
        y = _numpy_fn(name, kw)(x)
    return np.asarray(acc.jvp(y)), np.conj(np.asarray(g))


_MODULES = {}


def _transformed(name, kw):
    key = (name, repr(sorted(kw.items())))
    if key not in _MODULES:
        import dualtape.transforms as dt
        path = pathlib.Path(tempfile.mkdtemp()) / f"fft_case_{len(_MODULES)}.py"
        args = ", ".join(f"{k}={v!r}" for k, v in kw.items())
        path.write_text(f"import numpy as np\n\n\ndef f(a):\n    return np.fft.{name}(a, {args})\n")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _MODULES[key] = (dt.vjp(module.f), dt.jvp(module.f))
    return _MODULES[key]


def _transformer(name, kw, a, u, ct):
    f_vjp, f_jvp = _transformed(name, kw)
    got = f_vjp(a, ct)
    tangent = f_jvp(a, u)
    return tangent[1] if isinstance(tangent, tuple) else tangent, got[0] if isinstance(got, tuple) else got


RUNNERS = {"rules": _rules, "functional": _functional, "tape": _tape, "transformer": _transformer}


def compare(modes, verbose=False):
    rng = np.random.default_rng(0)
    worst = {"value": 0.0}
    worst.update({f"{m} {w}": 0.0 for m in modes for w in ("jvp", "vjp")})
    failures, count = [], 0
    for name, shape, kind, kw in cases():
        a = _random(rng, shape, kind)
        u = _random(rng, shape, kind)
        ans, pullback = jax.vjp(_jax_fn(name, kw), jnp.asarray(a))
        ans = np.asarray(ans)
        ct = _random(rng, ans.shape, "complex" if ans.dtype.kind == "c" else "real")
        want_vjp, = pullback(jnp.asarray(ct))
        _, want_jvp = jax.jvp(_jax_fn(name, kw), (jnp.asarray(a),), (jnp.asarray(u),))
        label = f"{name}{shape} {kind} {kw}"
        value = getattr(dnp, name)(a, **kw)
        results = {"value": _diff(value, ans)}
        if np.asarray(value).dtype != ans.dtype:
            failures.append(f"{label}: dtype {np.asarray(value).dtype}, jax {ans.dtype}")
        for mode in modes:
            try:
                jvp, vjp = RUNNERS[mode](name, kw, a, u, ct)
            except Exception as error:  # noqa: BLE001  (reported per case)
                failures.append(f"{label} [{mode}]: {type(error).__name__}: {str(error)[:200]}")
                continue
            results[f"{mode} jvp"] = _diff(jvp, want_jvp)
            results[f"{mode} vjp"] = _diff(vjp, want_vjp)
            if np.asarray(vjp).dtype != np.asarray(want_vjp).dtype:
                failures.append(f"{label} [{mode}]: vjp dtype {np.asarray(vjp).dtype}, jax {want_vjp.dtype}")
        for key, d in results.items():
            worst[key] = max(worst[key], d)
            if not d <= ARGS.tolerance:
                failures.append(f"{label} [{key}]: difference {d:.3g}")
        if verbose:
            print(label, {k: f"{v:.1e}" for k, v in results.items()})
        count += 1
    return count, worst, failures


def compare_errors():
    """(rows, disagreements): for each error case, what NumPy, JAX and dualtape raise."""
    rows, disagreements = [], []
    for name, a, kw in error_cases():
        outcome = {}
        for who, fn in (("numpy", getattr(np.fft, name)), ("jax", getattr(jnp.fft, name)),
                        ("dualtape", getattr(dnp, name))):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)  # NumPy's s= without axes=
                    fn(jnp.asarray(a) if who == "jax" else a, **kw)
                outcome[who] = None
            except Exception as error:  # noqa: BLE001
                outcome[who] = error
        dt_error = outcome["dualtape"]
        if (outcome["jax"] is not None and dt_error is None) or (
                dt_error is not None and outcome["jax"] is None and outcome["numpy"] is None):
            disagreements.append((name, kw, outcome))  # JAX refuses what dualtape runs, or no one else refuses
        describe = {k: "ok" if e is None else type(e).__name__ for k, e in outcome.items()}
        rows.append((f"{name}(shape {np.shape(a)}, {np.asarray(a).dtype}, {kw})", describe,
                     "" if dt_error is None else str(dt_error).splitlines()[0][:150]))
    return rows, disagreements


def main():
    count, worst, failures = compare(ARGS.modes, ARGS.verbose)
    print(f"{count} cases, modes {', '.join(ARGS.modes)}; largest max|dualtape - jax| / max(1, max|jax|):")
    for key, d in worst.items():
        print(f"  {key:18s} {d:.2e}")
    rows, disagreements = compare_errors()
    print(f"\n{len(rows)} error cases (numpy / jax / dualtape):")
    for call, describe, message in rows:
        print(f"  {call}: {describe['numpy']} / {describe['jax']} / {describe['dualtape']}"
              + (f"\n      {message}" if message else ""))
    print(f"\ndualtape raises wherever JAX does, and only where JAX or NumPy does: {len(rows) - len(disagreements)} "
          f"of {len(rows)} cases")
    for name, kw, outcome in disagreements:
        print(f"  DISAGREE {name} {kw}: jax {outcome['jax']!r}, dualtape {outcome['dualtape']!r}")
    if failures:
        kinds = {}
        for f in failures:
            label, _, reason = f.partition("] ")
            key = label[label.rindex("[") + 1:] + "] " + reason.split(":")[0][:60] if "[" in label else f[:60]
            kinds[key] = kinds.get(key, 0) + 1
        print(f"\n{len(failures)} failures, by mode and kind:")
        for key, count in sorted(kinds.items(), key=lambda item: -item[1]):
            print(f"  {count:5d}  [{key}")
        for f in failures[:ARGS.show]:
            print("  " + f)
    return 1 if failures or disagreements else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default=",".join(MODES),
                        type=lambda text: [m for m in text.split(",") if m])
    parser.add_argument("--tolerance", type=float, default=1e-9)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--show", type=int, default=20, help="failures printed in full")
    ARGS = parser.parse_args()
    sys.exit(main())
