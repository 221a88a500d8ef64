"""docs/ops.md, the table of supported NumPy functions, is generated from the registry and
the dispatch map by docs/make_op_table.py: the committed table must be the current one."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _generator():
    spec = importlib.util.spec_from_file_location("make_op_table", ROOT / "docs" / "make_op_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_table_is_up_to_date():
    text = _generator().render()
    committed = (ROOT / "docs" / "ops.md").read_text(encoding="utf-8")
    assert committed == text, ("docs/ops.md is out of date with the registry: run "
                               "`python docs/make_op_table.py` and commit docs/ops.md.")


def test_table_lists_the_issue_12_functions_in_every_mode():
    rows = {name: row for name, *row in _generator().rows()}
    for name in ("np.log2", "np.hypot", "np.hstack", "np.roll", "np.tril", "np.diag", "np.kron",
                 "np.cross", "np.diff", "np.take_along_axis", "np.vdot", "np.linalg.matrix_power",
                 "np.cumprod", "np.nansum", "np.median", "np.quantile", "np.percentile",
                 "np.average", "np.sort", "np.partition", "np.convolve", "np.interp"):
        aliases, op, tape, dual, transformer, note = rows[name]
        assert (tape, dual, transformer) == ("✓", "✓", "✓"), (name, rows[name])
    for name in ("np.argsort", "np.searchsorted", "np.isclose", "np.allclose"):
        assert tuple(rows[name][2:5]) == ("·", "·", "·"), (name, rows[name])
