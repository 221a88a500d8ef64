"""Griffe extension: render dualtape's plain-text docstrings faithfully as Markdown.

dualtape's docstrings are written to be read as plain text (`help()`), not as Markdown:

- `>>>` examples sit in the running text, not under a Google-style `Examples:` heading, so
  Markdown would read them as nested block quotes (and `[...]` in them as link
  references). Each run of `>>>`/`...` lines and the output lines after it, up to a blank
  line, is wrapped in a ```pycon fence.
- Outside code (fences, indented blocks, `backtick spans`), `<v, J u>` would be taken for
  an HTML tag and `*args` / `x ** 2` for emphasis: `<`, `*` and `[` are escaped there.
  A `*` opening a line (a list item, a `*args:` parameter) is left alone.
"""

import re

import griffe

_CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def _escape(text):
    """Escape Markdown's `<`, `*` and `[` in `text` outside backtick spans."""
    parts, last = [], 0
    for match in _CODE_SPAN.finditer(text):
        parts.append(_escape_plain(text[last:match.start()]))
        parts.append(match.group(0))
        last = match.end()
    parts.append(_escape_plain(text[last:]))
    return "".join(parts)


def _escape_plain(text):
    return text.replace("<", "&lt;").replace("*", r"\*").replace("[", r"\[")


def _escape_line(line):
    body = line.lstrip()
    indent = line[: len(line) - len(body)]
    head = ""
    if body.startswith("*"):  # a list item or a `*args:` parameter name
        star = len(body) - len(body.lstrip("*"))
        head, body = body[:star], body[star:]
    return indent + head + _escape(body)


def fence_doctests(text):
    """`text` with each doctest block fenced as ```pycon and Markdown's specials escaped."""
    out, in_fence, in_example, in_indented = [], False, False, False
    previous_blank = True
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
        elif not in_fence and stripped:
            # An indented block after a blank line is code (the docstrings' `    code` style).
            if previous_blank:
                in_indented = line.startswith("    ") and not _section_item(out)
            if not in_indented:
                line = _escape_line(line)
        previous_blank = not stripped
        out.append(line)
    if in_example:
        out.append(indent + "```")
    return "\n".join(out)


_SECTION = re.compile(  # Google-style section headings: their items are indented
    r"^(Args|Arguments|Params|Parameters|Other Parameters|Keyword Args|Keyword Arguments|Type Parameters|"
    r"Returns?|Yields?|Receives?|Raises|Exceptions|Warns|Attributes|Methods|Functions|Classes|"
    r"Modules)\s*:\s*$")


def _section_item(out):
    """True when the last non-blank line above opens a Google-style section."""
    for line in reversed(out):
        if line.strip():
            return bool(_SECTION.match(line))
    return False


class DoctestFences(griffe.Extension):
    def on_object(self, *, obj, **kwargs):
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)
