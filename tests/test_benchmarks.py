"""The benchmark runner at toy sizes: it writes a well-formed results table, and it checks
every value against the floor before timing it (so the benchmarks cannot rot)."""

import json
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

BENCHMARKS = pathlib.Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import harness  # noqa: E402


def test_run_all_quick_writes_well_formed_tables(tmp_path):
    out = tmp_path / "results.md"
    result = subprocess.run([sys.executable, str(BENCHMARKS / "run_all.py"), "--quick", "--rounds", "1",
                             "--no-peers", "-o", str(out)],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# dualtape benchmarks")
    for word in ("Machine:", "Versions:", "Threads:", "Pinning:", "Method:", "## Summary"):
        assert word in text
    tables = re.findall(r"^### (.+)$", text, flags=re.M)
    assert len(tables) >= 9, tables
    # every workload of the issue is a case
    for name in ("MLP", "Hessian-vector product", "Jacobian of tanh", "batch_jacobian", "Hessian, n=",
                 "scalar chain", "length-", "Per recorded op", "RK4 pendulum"):
        assert any(name in t for t in tables), name
    assert text.count("Values checked against the floor with rtol=") == len(tables)
    assert "value mismatch" not in text and "error:" not in text
    # every table row has as many cells as its header; timed rows hold numbers
    for block in re.split(r"\n\n", text):
        rows = [line for line in block.splitlines() if line.startswith("|")]
        if not rows:
            continue
        assert all(row.count("|") == rows[0].count("|") for row in rows), block
    timed = re.findall(r"^\| \*\*(.+?)\*\* \| ([\d.,]+) \| ([\d.,]+)–([\d.,]+) \| ([\d.,]+) \| ([\d.]+) \|",
                       text, flags=re.M)
    assert len(timed) >= 15, timed     # the dualtape variants, each timed with a ratio to the floor
    assert all(float(ratio) > 0 for *_, ratio in timed)
    # the same figures as data, for the pictures: one record per table, the floor timed in each
    data = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert [r["name"] for r in data["workloads"]] == tables
    for record in data["workloads"]:
        floor = [i for i in record["impls"] if i["family"] == harness.FLOOR]
        assert floor and floor[0]["cpu_us"] is not None, record
        for impl in record["impls"]:
            if impl["cpu_us"] is not None:
                med, low, high = impl["cpu_us"]
                assert 0 < low <= med <= high, impl


def _case(wrong):
    x = np.linspace(0.0, 1.0, 5)
    return harness.Case("toy", rtol=1e-7, atol=0.0, impls=[
        harness.Impl("floor", harness.FLOOR, lambda: lambda: 2 * x),
        harness.Impl("right", harness.DUALTAPE, lambda: lambda: x + x),
        harness.Impl("planted wrong", harness.DUALTAPE, lambda: lambda: 2 * x + wrong),
        harness.Impl("missing peer", "torch", lambda: __import__("no_such_module_for_the_test"))])


def test_a_wrong_value_is_reported_not_timed():
    results = {r.impl.name: r for r in harness.run_case(_case(1e-3), rounds=2, target_s=0.001,
                                                         max_calls=3, log=lambda _: None)}
    assert results["right"].timed and len(results["right"].cpu) == 2
    assert results["planted wrong"].status.startswith("value mismatch")
    assert not results["planted wrong"].timed and results["planted wrong"].cpu == []
    assert results["missing peer"].status == "not installed"
    text = harness.table(_case(1e-3), list(results.values()))
    assert "| planted wrong | value mismatch" in text and "| missing peer | not installed" in text


def test_rounds_are_interleaved_and_rotated():
    calls = []
    case = harness.Case("order", impls=[
        harness.Impl("floor", harness.FLOOR, lambda: lambda: calls.append("f") or 1.0),
        harness.Impl("a", harness.DUALTAPE, lambda: lambda: calls.append("a") or 1.0),
        harness.Impl("b", harness.DUALTAPE, lambda: lambda: calls.append("b") or 1.0)])
    harness.run_case(case, rounds=3, target_s=1e-9, max_calls=1, log=lambda _: None)
    # the check call and two warm-up calls each, then one call per implementation per round
    assert "".join(calls[-9:]) == "fab" + "abf" + "bfa"


def test_check_programs_reports_progress_and_each_failure_as_found(monkeypatch, capsys):
    # it printed nothing until the end but the first failure per class and every 500 programs;
    # a long run shows progress every few programs and every failing program as it is found
    import types  # noqa: PLC0415

    import check_programs  # noqa: PLC0415

    seen = []

    def fake_check_modes(program, raise_on_failure, modes):
        seen.append(program)
        n = len(seen)
        failures = [("tape", "wrong", f"message {n}\nprogram:\n{program.source}")] if n in (2, 3, 5) else []
        return types.SimpleNamespace(skipped="", fd_unstable=False, checked=["tape"], failures=failures, refused={})

    monkeypatch.setattr(check_programs, "check_modes", fake_check_modes)
    assert check_programs.main(["6", "--every", "2", "--live", "2", "--seed", "3"]) == 1
    err = capsys.readouterr().err
    lines = err.splitlines()
    progress = [line for line in lines if line.startswith("... ")]
    assert [line.split()[1] for line in progress] == ["2/6", "4/6", "6/6"], err
    assert "1 wrong, 0 crashes" in progress[0] and "3 wrong" in progress[2] and "left" in progress[0]
    assert "=== tape wrong #1 (program 2):" in err and "message 2" in err   # in full, with its source
    assert "=== tape wrong #2 (program 3):" in err and "message 3" in err
    assert "=== tape wrong #3 (program 5; 2 shown in full): message 5" in err  # later: one line
    # each failure comes before the progress line that counts it
    assert err.index("message 2") < err.index("... 2/6") < err.index("message 3") < err.index("... 4/6")


def test_checkpoint_tradeoff_measures_every_setting_with_the_same_gradient():
    import wl_checkpoint
    data = wl_checkpoint.tradeoff(quick=True)  # asserts every setting's gradient equals the unchecked one
    labels = [p["label"] for p in data["points"]]
    assert "sqrt" in labels and len(labels) >= 5
    assert labels[-1] == "no checkpoints"  # sorted by peak memory: every checkpoint setting keeps less
    assert all(p["peak_bytes"] > 0 and p["seconds"] > 0 for p in data["points"])


def test_pictures_are_drawn_from_the_records(tmp_path):
    pytest.importorskip("matplotlib")
    import plots
    records = [{"name": "toy", "unit": "call", "impls": [
        {"name": "floor", "family": "floor", "status": "ok", "cpu_us": [1.0, 0.9, 1.2]},
        {"name": "ours", "family": "dualtape", "status": "ok", "cpu_us": [2.0, 1.9, 2.5]},
        {"name": "jit", "family": "jax.jit", "status": "not installed", "cpu_us": None}]}]
    assert plots.best_per_family(records[0]) == {"floor": [1.0, 0.9, 1.2], "dualtape": [2.0, 1.9, 2.5]}
    tradeoff = {"title": "t", "points": [{"label": "none", "peak_bytes": 2**22, "seconds": 0.1},
                                         {"label": "sqrt", "peak_bytes": 2**16, "seconds": 0.2}]}
    drawn = plots.draw({"workloads": records, "tradeoff": tradeoff}, out=tmp_path)
    assert [p.name for p in drawn] == ["benchmarks.png", "checkpoint_tradeoff.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in drawn)
