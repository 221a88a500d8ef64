"""The pytest plugin of benchmarks/autograd_suite.py: skips the tests out of scope (OUT_OF_SCOPE,
with the reason), sorts every other outcome into passed / wrong (an AssertionError: a number or a
shape differs) / refused-or-error (any other exception), and writes them as JSON to the path in
$AUTOGRAD_SUITE_RESULTS."""

import json
import os

import pytest

# Tests outside dualtape's scope: they test autograd's own machinery, not derivatives. Keyed by
# file (every test of it) or by file::test.
OUT_OF_SCOPE = {
    "test_vspaces.py": "autograd's VSpace classes (internal vector-space objects)",
    "test_logic.py::test_no_vjp_def": "autograd's primitive_vjps table (internal)",
    "test_logic.py::test_no_jvp_def": "autograd's primitive_jvps table (internal)",
    "test_logic.py::test_falseyness": "autograd's primitive_vjps table (internal)",
    "test_misc.py::test_const_graph": "const_graph: autograd's tracer-graph cache (internal)",
    "test_misc.py::test_const_graph_args": "const_graph: autograd's tracer-graph cache (internal)",
    "test_wrappers.py::test_deprecated_defgrad_wrapper": "autograd's deprecated Primitive.defgrad method",
    "test_wrappers.py::test_deprecated_defvjp_wrapper": "autograd's deprecated Primitive.defvjp method",
    "test_wrappers.py::test_deprecated_defvjp_is_zero_wrapper": "autograd's deprecated Primitive.defvjp_is_zero",
    "test_wrappers.py::test_deprecated_quick_grad_check_wrapper": "autograd's deprecated quick_grad_check",
    "test_numpy.py::test_numpy_version": "checks autograd's own numpy version bound",
    "test_wrappers.py::test_custom_where": "autograd.numpy.where's own wrapper on plain arrays (keyword arguments "
                                           "NumPy's where does not take)",
    "test_wrappers.py::test_custom_where_dtypes": "autograd.numpy.where's own return types on plain values "
                                                  "(NumPy's where returns arrays)",
}


def out_of_scope_reason(nodeid):
    file_name = nodeid.split("::")[0].rsplit("/", 1)[-1]
    test_name = nodeid.split("::")[1].split("[")[0] if "::" in nodeid else ""
    return OUT_OF_SCOPE.get(f"{file_name}::{test_name}") or OUT_OF_SCOPE.get(file_name)


RESULTS = {}


def pytest_collection_modifyitems(config, items):
    for item in items:
        reason = out_of_scope_reason(item.nodeid)
        if reason:
            item.add_marker(pytest.mark.skip(reason=f"out of scope: {reason}"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    nodeid = item.nodeid.rsplit("tests/", 1)[-1]
    if report.skipped:
        RESULTS[nodeid] = {"outcome": "out_of_scope", "detail": str(report.longrepr[-1])[:300]}
    elif report.failed:
        wrong = call.excinfo is not None and call.excinfo.errisinstance(AssertionError) and call.when == "call"
        if call.excinfo is not None:
            detail = f"{call.excinfo.typename}: {str(call.excinfo.value)[:400]}"
        else:
            detail = str(report.longrepr)[:400]
        RESULTS[nodeid] = {"outcome": "wrong" if wrong else "error", "detail": detail}
    elif call.when == "call" and nodeid not in RESULTS:
        RESULTS[nodeid] = {"outcome": "passed", "detail": ""}


def pytest_collectreport(report):
    if report.failed:  # a file that does not import: every test of it is refused, counted as one
        nodeid = report.nodeid.rsplit("tests/", 1)[-1]
        RESULTS[f"{nodeid}::(collection)"] = {"outcome": "error", "detail": str(report.longrepr)[-400:]}


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("AUTOGRAD_SUITE_RESULTS")
    if path:
        with open(path, "w") as f:
            json.dump(RESULTS, f, indent=1, sort_keys=True)
