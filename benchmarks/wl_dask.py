"""Gradients over a chunked design matrix: dualtape on Dask (a LocalCluster) vs on NumPy.

The gradient of a least-squares and a logistic loss w.r.t. the weights, over X of ROWS x
FEATURES float64 (10 million x 10 by default: 800 MB), by `dualtape.grad`:

- NumPy, one process: X in memory, the gradient computed eagerly. Run in a child process
  so that its peak resident memory (ru_maxrss) is its own.
- Dask, a LocalCluster of WORKERS worker processes (one thread each): X generated and
  persisted in chunks of CHUNK rows across the workers, the gradient built lazily by dualtape
  (nothing computes) and then computed by the cluster. Peak memory is each worker
  process's ru_maxrss.

Both report the median wall time of ROUNDS gradient calls (graph building included for
Dask) and the check of each value against the closed form (X^T (Xw - y), and
X^T (sigmoid(Xw) - y) / n). Standalone (not in run_all.py: it needs the dask extra):

    .venv/bin/python benchmarks/wl_dask.py                     # 10M x 10, chunks of 1M rows
    .venv/bin/python benchmarks/wl_dask.py --rows 100000 --chunk 10000   # a quick look
"""

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

import dualtape

try:
    from .workloads_src import least_squares, logistic
except ImportError:
    from workloads_src import least_squares, logistic


def closed_form(name, w, X, y):
    if name == "least_squares":
        return X.T @ (X @ w - y)
    return X.T @ (1.0 / (1.0 + np.exp(-(X @ w))) - y) / X.shape[0]


LOSSES = {"least_squares": least_squares, "logistic": logistic}


def _peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def _weights(features):
    return np.linspace(-0.3, 0.3, features)


def run_numpy(rows, features, rounds):
    """The NumPy side, in this (child) process: times, checks and peak memory as JSON."""
    base_mb = _peak_mb()
    rng = np.random.default_rng(0)
    X = rng.standard_normal((rows, features))
    y = {"least_squares": rng.standard_normal(rows), "logistic": (rng.random(rows) < 0.5).astype(float)}
    w = _weights(features)
    data_mb = _peak_mb()
    out = {"base_mb": base_mb, "data_peak_mb": data_mb}
    for name, loss in LOSSES.items():
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            g = dualtape.grad(loss)(w, X, y[name])
            times.append(time.perf_counter() - start)
        err = float(np.max(np.abs(g - closed_form(name, w, X, y[name]))))
        out[name] = {"median_s": statistics.median(times), "max_abs_err": err}
    out["peak_mb"] = _peak_mb()
    return out


def run_dask(rows, features, chunk, workers, rounds):
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, memory_limit=0) as cluster, Client(cluster) as client:
        base = client.run(_peak_mb)
        rng = da.random.default_rng(0)
        X = rng.standard_normal((rows, features), chunks=(chunk, features))
        y = {"least_squares": rng.standard_normal(rows, chunks=chunk),
             "logistic": (rng.random(rows, chunks=chunk) < 0.5).astype(float)}
        X, y["least_squares"], y["logistic"] = client.persist([X, y["least_squares"], y["logistic"]])
        client.wait_for_workers(workers)
        from dask.distributed import wait
        wait([X, y["least_squares"], y["logistic"]])
        data = client.run(_peak_mb)
        w = _weights(features)
        out = {"worker_base_mb": base, "worker_data_mb": data}
        for name, loss in LOSSES.items():
            g, ref = client.compute([dualtape.grad(loss)(w, X, y[name]), closed_form(name, w, X, y[name])],
                                    sync=True)
            times = []
            for _ in range(rounds):
                start = time.perf_counter()
                lazy = dualtape.grad(loss)(w, X, y[name])
                assert isinstance(lazy, da.Array)
                lazy.compute()
                times.append(time.perf_counter() - start)
            out[name] = {"median_s": statistics.median(times), "max_abs_err": float(np.max(np.abs(g - ref)))}
        out["worker_peak_mb"] = client.run(_peak_mb)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--features", type=int, default=10)
    parser.add_argument("--chunk", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--numpy-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.numpy_child:
        print(json.dumps(run_numpy(args.rows, args.features, args.rounds)))
        return
    child = subprocess.run([sys.executable, __file__, "--numpy-child", "--rows", str(args.rows),
                            "--features", str(args.features), "--rounds", str(args.rounds)],
                           capture_output=True, text=True, check=True)
    numpy_side = json.loads(child.stdout)
    dask_side = run_dask(args.rows, args.features, args.chunk, args.workers, args.rounds)
    gb = args.rows * args.features * 8 / 1e9
    print(f"X: {args.rows:,} x {args.features} float64 ({gb:.2f} GB); Dask: {args.workers} worker "
          f"processes x 1 thread, chunks of {args.chunk:,} rows; median of {args.rounds} rounds\n")
    print("| loss | NumPy, 1 process: time | Dask LocalCluster: time | max abs error NumPy / Dask |")
    print("|---|---|---|---|")
    for name in LOSSES:
        n, d = numpy_side[name], dask_side[name]
        print(f"| {name} | {n['median_s']:.2f} s | {d['median_s']:.2f} s | "
              f"{n['max_abs_err']:.1e} / {d['max_abs_err']:.1e} |")
    print("\n| peak resident memory | NumPy, 1 process | each Dask worker |")
    print("|---|---|---|")
    def per_worker(key):
        return ", ".join(f"{mb:.0f}" for _, mb in sorted(dask_side[key].items())) + " MB"

    print(f"| after start-up | {numpy_side['base_mb']:.0f} MB | {per_worker('worker_base_mb')} |")
    print(f"| with the data in memory | {numpy_side['data_peak_mb']:.0f} MB | {per_worker('worker_data_mb')} |")
    print(f"| peak, gradients included | {numpy_side['peak_mb']:.0f} MB | {per_worker('worker_peak_mb')} |")

if __name__ == "__main__":
    main()
