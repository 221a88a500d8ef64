"""The benchmark scripts run at toy sizes, so they cannot rot (they check their own results)."""

import pathlib
import subprocess
import sys

import pytest

BENCHMARKS = pathlib.Path(__file__).resolve().parent.parent / "benchmarks"
QUICK = ["bench_tape.py", "bench_jacobians.py"]


@pytest.mark.parametrize("script", QUICK)
def test_benchmark_runs_quick(script):
    result = subprocess.run([sys.executable, str(BENCHMARKS / script), "--quick"],
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "dualtape" in result.stdout
