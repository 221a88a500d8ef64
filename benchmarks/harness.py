"""The benchmark harness: value checks, interleaved timing rounds, statistics, markdown.

A workload module defines `cases(quick)`, a list of `Case`s. A case holds the hand-written
NumPy *floor* and the implementations to compare with it. Each implementation is built by
`make()` (an ImportError there means "not installed"), called once and its value compared
with the floor's (`np.testing.assert_allclose(value, floor, rtol, atol)`); only the ones
that match are timed. Timing runs in rounds: round r calls every implementation of the
case `calls` times, in an order rotated by r, so load from other processes on a shared
machine falls on all of them alike. Each call is timed on its own, in CPU time
(`time.process_time_ns`) and wall time (`time.perf_counter_ns`); a round's figure is the
median over its calls, and the reported figure the median over rounds, with the min-max
over rounds as its spread.

The process-wide settings (one BLAS thread, pinning to one core) are made by run_all.py
before NumPy is imported.
"""

import dataclasses
import statistics
import time
from typing import Callable

import numpy as np

DUALTAPE, FLOOR = "dualtape", "floor"
PEERS = ("torch", "autograd", "jax", "jax.jit")


def cold_jit_cache():
    """Point dualtape's jit disk cache (transforms/jit/disk_cache.py) at an empty folder of
    this run's, unless DUALTAPE_JIT_CACHE is set: every compile time a run reports is then a
    cold compile, never a load of what an earlier run left."""
    import atexit
    import os
    import shutil
    import tempfile
    if "DUALTAPE_JIT_CACHE" not in os.environ:
        os.environ["DUALTAPE_JIT_CACHE"] = folder = tempfile.mkdtemp(prefix="dualtape-bench-jit-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)


class NotInstalled(Exception):
    """Raised by a `make` whose library is missing (ImportError is treated alike)."""


@dataclasses.dataclass
class Impl:
    name: str                      # as shown in the table
    family: str                    # DUALTAPE, FLOOR, or one of PEERS
    make: Callable[[], Callable]   # builds the zero-argument function to time
    to_numpy: Callable = None      # value -> array or list of arrays (default: np.asarray / list)
    note: str = ""


@dataclasses.dataclass
class Case:
    name: str
    impls: list                    # the floor first
    rtol: float = 1e-7
    atol: float = 1e-10
    per: int = 1                   # report time per `per` (e.g. per recorded op)
    unit: str = "call"
    description: str = ""


@dataclasses.dataclass
class Result:
    impl: Impl
    status: str = "ok"             # ok | not installed | value mismatch: ... | error: ...
    cpu: list = dataclasses.field(default_factory=list)    # per-round medians, ns per call
    wall: list = dataclasses.field(default_factory=list)
    first_call_ms: float = None    # the checking call (includes jax.jit compilation)
    calls: int = 0

    @property
    def timed(self):
        return self.status == "ok" and bool(self.cpu)


def as_arrays(value):
    """A value as a flat list of float64 arrays (tensors, tuples, lists, torch, jax)."""
    if isinstance(value, dict):
        value = [value[k] for k in sorted(value)]
    if isinstance(value, (list, tuple)):
        out = []
        for v in value:
            out += as_arrays(v)
        return out
    if hasattr(value, "detach"):          # torch
        value = value.detach().cpu().numpy()
    elif hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()
    return [np.asarray(value, dtype=np.float64)]


def check_value(got, expected, rtol, atol):
    got, expected = as_arrays(got), as_arrays(expected)
    if len(got) != len(expected):
        raise AssertionError(f"{len(got)} arrays, floor has {len(expected)}")
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.reshape(e.shape) if g.size == e.size else g, e, rtol=rtol, atol=atol)


def _one_line(error):
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:160]}"


def prepare(case):
    """Build and check every implementation; returns (results, {name: fn}) for the timed ones."""
    results, fns, expected = [], {}, None
    for impl in case.impls:
        result = Result(impl)
        results.append(result)
        try:
            fn = impl.make()
        except (ImportError, NotInstalled):
            result.status = "not installed"
            continue
        except Exception as error:  # noqa: BLE001  (reported in the table)
            result.status = f"error: {_one_line(error)}"
            continue
        try:
            start = time.perf_counter()
            value = fn()
            result.first_call_ms = 1e3 * (time.perf_counter() - start)
            if impl.to_numpy is not None:
                value = impl.to_numpy(value)
            if impl.family == FLOOR:
                expected = value
            elif expected is None:
                raise RuntimeError("the floor did not run")
            else:
                check_value(value, expected, case.rtol, case.atol)
        except AssertionError as error:
            result.status = f"value mismatch: {_one_line(error)}"
            continue
        except Exception as error:  # noqa: BLE001
            result.status = f"error: {_one_line(error)}"
            continue
        fns[impl.name] = fn
    return results, fns


def calls_for(fn, first_s, target_s, min_calls, max_calls):
    """How many calls fill about target_s of one round, measured by warm-up calls after the
    checking call (which may include compilation or lazy set-up). A function whose checking
    call took over 0.2 s gets one warm-up call, over 5 s none."""
    once = first_s
    for _ in range(2 if first_s < 0.2 else 1 if first_s < 5 else 0):
        start = time.perf_counter()
        fn()
        once = time.perf_counter() - start
    return int(min(max_calls, max(min_calls, target_s / max(once, 1e-7)))), once


def run_case(case, rounds, target_s=0.15, budget_s=40.0, max_calls=400, log=print):
    """Check, then time in interleaved rounds. An implementation slower than budget_s over
    all rounds takes part in the first budget_s / (its call time) rounds only (at least one)."""
    results, fns = prepare(case)
    live = [r for r in results if r.impl.name in fns]
    n_rounds = {}
    for r in live:
        r.calls, once = calls_for(fns[r.impl.name], r.first_call_ms / 1e3, target_s, 1, max_calls)
        n_rounds[r.impl.name] = max(1, min(rounds, int(budget_s / max(once * r.calls, 1e-9))))
    for rnd in range(rounds):
        order = live[rnd % len(live):] + live[:rnd % len(live)] if live else []
        for r in order:
            if rnd >= n_rounds[r.impl.name]:
                continue
            fn, cpu, wall = fns[r.impl.name], [], []
            for _ in range(r.calls):
                c0, w0 = time.process_time_ns(), time.perf_counter_ns()
                fn()
                w1, c1 = time.perf_counter_ns(), time.process_time_ns()
                cpu.append(c1 - c0)
                wall.append(w1 - w0)
            r.cpu.append(statistics.median(cpu))
            r.wall.append(statistics.median(wall))
    for r in results:
        log(f"  {case.name} | {r.impl.name}: {r.status}"
            + (f", {summary(r.cpu)[0] / 1e3 / case.per:.2f} us cpu" if r.timed else ""))
    return results


def main(title, cases, pinning, argv=None, max_calls=400):
    """A workload's command line: `[--quick] [--rounds N] [--only TEXT]`, then each case's table."""
    import argparse
    parser = argparse.ArgumentParser(description=title)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", default="")
    args = parser.parse_args(argv)
    cold_jit_cache()
    target_s, budget_s, max_calls = (0.002, 1.0, 3) if args.quick else (0.25, 40.0, max_calls)
    print(f"# {title} ({pinning})\n")
    for case in cases(args.quick):
        if args.only.lower() not in case.name.lower():
            continue
        results = run_case(case, args.rounds, target_s=target_s, budget_s=budget_s, max_calls=max_calls)
        print()
        print(table(case, results))
        print(flush=True)


def summary(values):
    return statistics.median(values), min(values), max(values)


# -- markdown ------------------------------------------------------------------------------------

def _us(ns, per):
    us = ns / 1e3 / per
    return f"{us:,.0f}" if us >= 1000 else f"{us:.3g}" if us < 10 else f"{us:.1f}"


def _ratio(x):
    return f"{x:.2g}" if x < 0.1 else f"{x:.2f}"


def table(case, results):
    """One markdown table for one case."""
    floor = next((r for r in results if r.impl.family == FLOOR and r.timed), None)
    peers = [r for r in results if r.impl.family in PEERS and r.timed]
    best_peer = min(peers, key=lambda r: summary(r.cpu)[0], default=None)
    per = case.per
    lines = [f"### {case.name}", ""]
    if case.description:
        lines += [case.description, ""]
    unit = f"µs/{case.unit}"
    lines += [f"| implementation | CPU {unit} (median) | spread (min–max over rounds) | wall {unit} | "
              f"× floor | × best peer | calls × rounds | note |",
              "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        note = r.impl.note
        if r.impl.family == "jax.jit" and r.first_call_ms is not None and r.status == "ok":
            note = (note + "; " if note else "") + f"compile + first call {r.first_call_ms:,.0f} ms (not in the time)"
        if not r.timed:
            lines.append(f"| {r.impl.name} | {r.status} | | | | | | {note} |")
            continue
        cpu, lo, hi = summary(r.cpu)
        wall = summary(r.wall)[0]
        vs_floor = _ratio(cpu / summary(floor.cpu)[0]) if floor else "—"
        vs_peer = _ratio(cpu / summary(best_peer.cpu)[0]) if best_peer else "—"
        name = f"**{r.impl.name}**" if r.impl.family == DUALTAPE else r.impl.name
        lines.append(f"| {name} | {_us(cpu, per)} | {_us(lo, per)}–{_us(hi, per)} | {_us(wall, per)} | "
                     f"{vs_floor} | {vs_peer} | {r.calls} × {len(r.cpu)} | {note} |")
    peer_line = f"best peer: {best_peer.impl.name}" if best_peer else "no peer timed"
    lines += ["", f"Values checked against the floor with rtol={case.rtol:g}, atol={case.atol:g}; {peer_line}.", ""]
    return "\n".join(lines)


def key_row(case, results):
    """One line of the summary table: the best dualtape variant against the floor and each peer."""
    timed = [r for r in results if r.timed]
    ours = min((r for r in timed if r.impl.family == DUALTAPE), key=lambda r: summary(r.cpu)[0], default=None)

    def cell(family):
        rs = [r for r in timed if r.impl.family == family]
        if not rs:
            missing = [r for r in results if r.impl.family == family]
            return missing[0].status.split(" (")[0] if missing else "—"
        best = min(rs, key=lambda r: summary(r.cpu)[0])
        med, lo, hi = summary(best.cpu)
        ratio = f" ({_ratio(summary(ours.cpu)[0] / med)}×)" if ours else ""
        return f"{_us(med, case.per)} [{_us(lo, case.per)}–{_us(hi, case.per)}]{ratio}"

    if ours is None:
        return f"| {case.name} | — | {cell(FLOOR)} | " + " | ".join(cell(p) for p in PEERS) + " |"
    med, lo, hi = summary(ours.cpu)
    return (f"| {case.name} | {ours.impl.name}: {_us(med, case.per)} [{_us(lo, case.per)}–{_us(hi, case.per)}] | "
            f"{cell(FLOOR)} | " + " | ".join(cell(p) for p in PEERS) + " |")


def record(case, results):
    """The case's figures as plain data (run_all.py's results.json; plots.py draws from it):
    per implementation its family, status, and CPU µs per unit as (median, min, max) or None."""
    impls = []
    for r in results:
        cpu = [v / 1e3 / case.per for v in summary(r.cpu)] if r.timed else None
        impls.append({"name": r.impl.name, "family": r.impl.family, "status": r.status, "cpu_us": cpu,
                      "calls": r.calls, "rounds": len(r.cpu)})
    return {"name": case.name, "unit": case.unit, "impls": impls}


KEY_HEADER = ("| workload | best dualtape, CPU µs [min–max] | floor (dualtape ÷ it) | torch eager | autograd | "
              "JAX eager | JAX jit |\n|---|---|---|---|---|---|---|")


def peer_impls(torch, autograd, jax, names, jit_note=""):
    """The four peers most cases compare, in the tables' order: torch, autograd, JAX eager and
    JAX jit. `torch` and `autograd` are makes; `jax(jit)` returns the make of either JAX
    implementation; `names` are the four names as shown in the table."""
    return [Impl(names[0], "torch", torch),
            Impl(names[1], "autograd", autograd),
            Impl(names[2], "jax", jax(False)),
            Impl(names[3], "jax.jit", jax(True), note=jit_note)]
