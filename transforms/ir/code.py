"""Generated code as a tree: statement lists of the standard `ast`, with comments.

Emitters (reverse/, forward/) build each generated function as an `ast.FunctionDef` whose
bodies may hold `Comment` statements (`# forward`, `# b = a * a` before its adjoint); the
passes of optimize/ and jit/ rewrite those trees; `render` writes the text once, when
codegen/ assembles the module. Templates (templates/quote.py) build the statements.
"""

import ast
import copy

INDENT = "    "


class Comment(ast.stmt):
    """A `# text` line, kept in statement lists like a statement (it does nothing)."""

    _fields = ("text",)

    def __init__(self, text="", **kwargs):
        super().__init__(**kwargs)
        self.text = text


def is_comment(st):
    return isinstance(st, Comment)


class CommentsAsMarkers(ast.NodeTransformer):
    """Comments replaced by marker expressions `__comment_K__` that `render` writes back."""

    def __init__(self):
        self.texts = []

    def visit_Comment(self, node):
        self.texts.append(node.text)
        return ast.Expr(value=ast.Name(id=f"__comment_{len(self.texts) - 1}__", ctx=ast.Load()))


def render(tree):
    """The source text of a node or a list of statements (no trailing newline)."""
    markers = CommentsAsMarkers()
    if isinstance(tree, list):
        tree = ast.Module(body=tree, type_ignores=[])
    text = ast.unparse(markers.visit(copy.deepcopy(tree)))
    if not markers.texts:
        return text
    lines = []
    for line in text.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("__comment_") and stripped.endswith("__"):
            line = line[:len(line) - len(stripped)] + "# " + markers.texts[int(stripped[10:-2])]
        lines.append(line)
    return "\n".join(lines)


# -- the text form, while a stage still reads or writes lines (to go when all stages are trees) --

def as_tree(body):
    """Statements of `body`: a list of statements as it is; a list of source lines (indented
    text, comment lines included) parsed into statements with `Comment`s."""
    if not body or not all(isinstance(line, str) for line in body):
        return body
    lines, texts = [], []
    for line in "\n".join(body).split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("#"):
            texts.append(stripped[1:].strip() if stripped.startswith("# ") else stripped[1:])
            line = line[:len(line) - len(stripped)] + f"__comment_{len(texts) - 1}__"
        lines.append(line)
    tree = ast.parse("\n".join(lines))

    class Back(ast.NodeTransformer):
        def visit_Expr(self, node):
            if isinstance(node.value, ast.Name) and node.value.id.startswith("__comment_"):
                return Comment(texts[int(node.value.id[10:-2])])
            return self.generic_visit(node)
    return Back().visit(tree).body


def as_lines(body):
    """Source lines of `body`: a list of lines as it is; statements rendered."""
    if not body or all(isinstance(line, str) for line in body):
        return body
    return render(list(body)).split("\n")
