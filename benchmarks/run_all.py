"""Run every benchmark workload and write benchmarks/results.md.

Run: python benchmarks/run_all.py [--quick] [--rounds N] [--no-peers] [--only TEXT] [-o PATH] [--no-plots]

Method (see harness.py): one BLAS / OpenMP / XLA / torch thread, the process pinned to CPU 0
(the script re-executes itself under `taskset -c 0`), every implementation's value checked
against a hand-written NumPy floor before it is timed, then interleaved rounds of per-call
CPU and wall time; medians over rounds with their min-max spread. Peers (torch, autograd,
JAX eager and jit) are timed where installed and reported as "not installed" otherwise.
`--quick` runs toy sizes with a few calls (what the test suite runs).
Next to the markdown it writes the same figures as JSON (`results.json`), and after a full run
without `--only` draws docs/plots/benchmarks.png (every workload's time per peer, log axis) and
docs/plots/checkpoint_tradeoff.png (memory against time per checkpoint setting) from them
(plots.py; needs matplotlib).
"""

import os
import shutil
import sys

THREAD_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "VECLIB_MAXIMUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1",
              "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
              "JAX_PLATFORMS": "cpu", "TF_CPP_MIN_LOG_LEVEL": "2"}
PIN_CPU = int(os.environ.get("DUALTAPE_BENCH_CPU", "0"))


def pin():
    """Set the thread variables before any library reads them and run on one core: re-exec
    under `taskset -c 0` (so every thread a library starts later is pinned too), or, without
    taskset, set this process's affinity. Returns how the process is pinned."""
    os.environ.update(THREAD_ENV)
    if os.sched_getaffinity(0) == {PIN_CPU}:
        return f"taskset -c {PIN_CPU}" if os.environ.get("DUALTAPE_BENCH_PINNED") else f"CPU {PIN_CPU}"
    if shutil.which("taskset") and not os.environ.get("DUALTAPE_BENCH_PINNED"):
        os.environ["DUALTAPE_BENCH_PINNED"] = "1"
        os.execvp("taskset", ["taskset", "-c", str(PIN_CPU), sys.executable] + sys.argv)
    os.sched_setaffinity(0, {PIN_CPU})
    return f"sched_setaffinity CPU {PIN_CPU}"


PINNING = pin() if __name__ == "__main__" else "not pinned (imported)"

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import importlib  # noqa: E402
import importlib.metadata  # noqa: E402
import pathlib  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

import harness  # noqa: E402

WORKLOADS = ["wl_mlp", "wl_flat", "wl_jacobians", "wl_chain", "wl_rk4", "wl_jit", "wl_checkpoint", "wl_globals", "wl_vmap",
             "wl_sparse_hessians"]
PEER_PACKAGES = ["torch", "autograd", "jax", "jaxlib", "numba"]


def version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def cpu_model():
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git_commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True,
                              text=True, check=False).stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def header(args, elapsed):
    peers = ", ".join(f"{p} {version(p)}" for p in PEER_PACKAGES)
    mode = "quick (toy sizes)" if args.quick else "full"
    return "\n".join([
        "# dualtape benchmarks",
        "",
        f"Written by `python benchmarks/run_all.py{' --quick' if args.quick else ''} --rounds {args.rounds}`"
        f"{' --no-peers' if args.no_peers else ''} on {datetime.datetime.now():%Y-%m-%d %H:%M} "
        f"({mode}, {elapsed:.0f} s). Do not edit by hand: every speed figure in the README and docs/ comes from here.",
        "",
        f"- Machine: {cpu_model()}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}; "
        "shared with other work, hence the spread.",
        f"- Versions: Python {platform.python_version()}, NumPy {np.__version__}, dualtape {version('dualtape')} "
        f"(commit {git_commit()}); peers: {peers}.",
        f"- Threads: one ({', '.join(f'{k}={v}' for k, v in THREAD_ENV.items() if k.endswith('THREADS'))}, "
        f"XLA_FLAGS=\"{THREAD_ENV['XLA_FLAGS']}\", torch.set_num_threads(1)).",
        f"- Pinning: {PINNING}.",
        f"- Method: every implementation's value is checked against the hand-written NumPy floor "
        f"(`np.testing.assert_allclose`, tolerance under each table) before it is timed; a mismatch is "
        f"reported, not timed. Then {args.rounds} interleaved rounds: round r runs every implementation of "
        f"the case in an order rotated by r, each call timed on its own in CPU time (`time.process_time_ns`) "
        f"and wall time. Figures are the median over rounds of the per-round median per call; the spread "
        f"is the min–max of the per-round medians. Ratios use the CPU medians. A very slow implementation "
        f"takes part in fewer rounds (see calls × rounds). JAX jit's compile time is reported in its note, "
        f"not in its time. dualtape's jit disk cache starts empty (a folder of this run's), so every "
        f"compile time reported is a cold compile, except the rows marked cached.",
        ""])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="toy sizes and few calls (the test suite)")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 7, quick 1)")
    parser.add_argument("--no-peers", action="store_true", help="time dualtape and the floors only")
    parser.add_argument("--only", default="", help="run only the cases whose name contains this text")
    parser.add_argument("-o", "--output", default=str(HERE / "results.md"))
    parser.add_argument("--no-plots", action="store_true", help="skip the checkpoint sweep and the pictures")
    args = parser.parse_args(argv)
    if args.rounds is None:
        args.rounds = 1 if args.quick else 7
    target_s, budget_s, max_calls = (0.002, 1.0, 3) if args.quick else (0.25, 40.0, 400)
    harness.cold_jit_cache()
    np.ones(2 * 10**6)  # free one 16 MB block first: glibc's mmap threshold then is the same for all
    start = time.perf_counter()
    sections, key_rows, bad, records = [], [], [], []
    for module_name in WORKLOADS:
        module = importlib.import_module(module_name)
        for case in module.cases(args.quick):
            if args.only and args.only.lower() not in case.name.lower():
                continue
            if args.no_peers:
                case.impls = [i for i in case.impls if i.family not in harness.PEERS]
            print(f"{case.name}", flush=True)
            results = harness.run_case(case, args.rounds, target_s=target_s, budget_s=budget_s,
                                       max_calls=max_calls, log=lambda line: print(line, flush=True))
            sections.append(harness.table(case, results))
            key_rows.append(harness.key_row(case, results))
            records.append(harness.record(case, results))
            bad += [f"{case.name}: {r.impl.name}: {r.status}" for r in results
                    if r.impl.family in (harness.DUALTAPE, harness.FLOOR)
                    and r.status not in ("ok", "not installed")]  # (numba: an optional extra)
    elapsed = time.perf_counter() - start
    text = "\n".join([
        header(args, elapsed),
        "## Summary",
        "",
        "CPU µs per call, median over rounds [min–max]; in parentheses, the best dualtape variant's "
        "time divided by that column's (below 1: dualtape is faster). Each peer column holds that "
        "peer's best variant.",
        "",
        harness.KEY_HEADER] + key_rows + ["", "## Workloads", ""] + sections)
    if bad:
        text += "\n## Failed checks\n\n" + "\n".join(f"- {b}" for b in bad) + "\n"
    output = pathlib.Path(args.output)
    output.write_text(text, encoding="utf-8")
    data = {"commit": git_commit(), "quick": args.quick, "workloads": records}
    plots = not (args.no_plots or args.quick or args.only)
    if plots:
        import wl_checkpoint
        print("checkpoint trade-off", flush=True)
        data["tradeoff"] = wl_checkpoint.tradeoff(quick=False)
    output.with_suffix(".json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    if plots:
        try:
            import plots as pictures
            for path in pictures.draw(data):
                print(f"wrote {path}")
        except ImportError as error:
            print(f"no pictures ({error}): pip install matplotlib (the docs extra) and run benchmarks/plots.py")
    print(f"wrote {args.output} in {elapsed:.0f} s" + (f"; {len(bad)} failed checks" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
