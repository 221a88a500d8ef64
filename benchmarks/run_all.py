"""Run every benchmarks/bench_*.py side by side and write their tables to one file.

Run: python benchmarks/run_all.py [--quick] [-o benchmarks/results.md]
Peers that are not installed are skipped by each script. BLAS runs single-threaded, so
dualtape, its peers and the hand-written NumPy baselines are compared on equal terms.
"""

import argparse
import datetime
import os
import pathlib
import platform
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="toy sizes (as the test suite runs them)")
    parser.add_argument("-o", "--output", default=str(HERE / "results.md"))
    args = parser.parse_args(argv)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    sections = [f"# dualtape benchmarks\n\n{datetime.datetime.now():%Y-%m-%d %H:%M}, "
                f"Python {platform.python_version()}, {platform.machine()}, "
                f"{os.cpu_count()} cores{' (quick sizes)' if args.quick else ''}\n"]
    failed = []
    for script in sorted(HERE.glob("bench_*.py")):
        command = [sys.executable, str(script)] + (["--quick"] if args.quick else [])
        result = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        output = result.stdout + (f"\n(exit code {result.returncode})\n{result.stderr}" if result.returncode else "")
        if result.returncode:
            failed.append(script.name)
        sections.append(f"## {script.name}\n\n```text\n{output.rstrip()}\n```\n")
        print(sections[-1])
    pathlib.Path(args.output).write_text("\n".join(sections), encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
