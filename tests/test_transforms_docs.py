"""docs/transforms.md: its ```python blocks run in order, and the ```text blocks after a
`print(... .source ...)` are exactly what the transformer prints."""

import contextlib
import io
import pathlib
import re

DOC = pathlib.Path(__file__).parent.parent / "docs" / "transforms.md"


def _blocks():
    return re.findall(r"```(python|text)\n(.*?)```", DOC.read_text(), flags=re.S)


def test_docs_python_blocks_run_and_outputs_match():
    namespace = {}
    blocks = _blocks()
    for k, (kind, code) in enumerate(blocks):
        if kind != "python":
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"{DOC.name}[{k}]", "exec"), namespace)
        if k + 1 < len(blocks) and blocks[k + 1][0] == "text" and "source" in code:
            assert out.getvalue().strip() == blocks[k + 1][1].strip(), (
                f"docs block {k} output changed:\n{out.getvalue()}")
