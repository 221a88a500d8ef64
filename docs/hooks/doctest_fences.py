"""Griffe extension: show the doctest examples of dualtape's docstrings as code.

dualtape's docstrings carry `>>>` examples in their running text, not under a Google-style
`Examples:` heading, so Markdown would read them as nested block quotes (and `[...]` in
them as link references). This wraps each run of `>>>`/`...` lines and the output lines
after it, up to a blank line, in a ```pycon fence. Fences already written stay as they are.
"""

import griffe


def fence_doctests(text):
    """`text` with each doctest block fenced as ```pycon."""
    out, in_fence, in_example = [], False, False
    for line in text.split("\n"):
        stripped = line.strip()
        if in_example:
            if stripped:
                out.append(line)
                continue
            out.append(indent + "```")
            in_example = False
        if stripped.startswith("```"):
            in_fence = not in_fence
        elif not in_fence and stripped.startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            if out and out[-1].strip():
                out.append("")  # a fence opens after a blank line
            out.append(indent + "```pycon")
            in_example = True
        out.append(line)
    if in_example:
        out.append(indent + "```")
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    def on_object(self, *, obj, **kwargs):
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
