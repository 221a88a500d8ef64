"""benchmarks/autograd_suite.py runs HIPS autograd's own tests on dualtape: a smoke test on two
of its files (the whole suite is a benchmark, not part of this suite)."""

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("scipy")

HARNESS = Path(__file__).resolve().parents[1] / "benchmarks" / "autograd_suite.py"


def load_harness():
    spec = importlib.util.spec_from_file_location("autograd_suite", HARNESS)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("autograd_suite", module)
    spec.loader.exec_module(module)
    return module


def test_harness_runs_autograd_tests_on_dualtape():
    harness = load_harness()
    results = harness.run(["test_direct.py", "test_tests.py", "test_jacobian.py"], timeout=600)
    per_file, total = harness.tally(results)
    assert set(per_file) == {"test_direct.py", "test_tests.py", "test_jacobian.py"}
    # test_tests.py checks that check_grads catches a wrong VJP: the harness's checks can fail
    assert per_file["test_tests.py"]["passed"] == 2
    assert total["wrong"] == 0, [k for k, v in results.items() if v["outcome"] == "wrong"]
    assert total["passed"] >= 9
    assert "total" in harness.report(results)
