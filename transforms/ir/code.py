"""Generated code as a tree: statement lists of the standard `ast`, with comments.

Emitters (reverse/, forward/) build each generated function as an `ast.FunctionDef` whose
bodies may hold `Comment` statements (`# forward`, `# b = a * a` before its adjoint); the
passes of optimize/ and jit/ rewrite those trees; `render` writes the text once, when
codegen/ assembles the module. Templates (templates/quote.py) build the statements.
"""

import ast

INDENT = "    "


class Comment(ast.stmt):
    """A `# text` line, kept in statement lists like a statement (it does nothing).

    A trailing comment (`trailing=True`) is written at the end of the line before it: first in
    a block, after the block's header (`if n > 0:  # text`, `else:  # text`); after a simple
    statement, on that statement's line."""

    _fields = ("text",)

    def __init__(self, text="", trailing=False, **kwargs):
        super().__init__(**kwargs)
        self.text = text
        self.trailing = trailing


def is_comment(st):
    return isinstance(st, Comment)


class Markers:
    """What `render` puts in place of the statements `ast.unparse` cannot write as we want,
    each a marker statement `__comment_K__` whose line is written back as `texts[K]`:
    comments; a `return` of a tuple, written bare (`return bx, by`, `return bx,`: as the
    emitters and people spell it, where `ast.unparse` writes `return (bx, by)`); an assignment
    marked `bare_tuple`. An `if` alone in an `else` is written `elif` unless it is marked
    `nested_else`: a marker line that is dropped (text None) keeps it a block. With
    `numbering`, a line marker (text LINE, dropped) stands before every other simple statement
    but a docstring, so that the line after it is known to be that statement's.

    Only statement lists are visited (comments and the marked statements are statements) and
    they are changed in place: `restore` puts back every list that was changed."""

    LINE = object()

    def __init__(self, numbering=False):
        self.numbering = numbering
        self.texts = []
        self.trailing = set()  # indices of the markers of trailing comments
        self.statements = {}  # marker index -> the statement it stands for or before (numbering)
        self.undo = []  # (list, its items before the markers)

    def restore(self):
        for body, items in reversed(self.undo):
            body[:] = items
        self.undo.clear()

    def marker(self, text, st=None):
        self.texts.append(text)
        if st is not None and self.numbering:
            self.statements[len(self.texts) - 1] = st
        return ast.Expr(value=ast.Name(id=f"__comment_{len(self.texts) - 1}__", ctx=ast.Load()))

    def block(self, body):
        """Markers into the statement list `body`, in place."""
        new = []
        for st in body:
            new += self.statement(st)
        if len(new) != len(body) or any(a is not b for a, b in zip(new, body)):
            self.undo.append((body, list(body)))
            body[:] = new

    def statement(self, st):
        """The statements that write `st`."""
        if isinstance(st, Comment):
            if st.trailing:
                self.trailing.add(len(self.texts))
                return [self.marker("  # " + st.text)]
            return [self.marker("# " + st.text, st)]
        if not hasattr(st, "lineno"):  # (ast.unparse reads the line of a def, a loop or an assignment)
            st.lineno = 1
        if isinstance(st, COMPOUND):
            self.blocks(st)
            if isinstance(st, ast.If) and len(st.orelse) == 1 and getattr(st.orelse[0], "nested_else", False):
                self.undo.append((st.orelse, list(st.orelse)))
                st.orelse.insert(0, self.marker(None))
            return [st]
        if isinstance(st, ast.Return) and isinstance(st.value, ast.Tuple) and st.value.elts:
            items = [ast.unparse(x) for x in st.value.elts]
            return [self.marker("return " + ", ".join(items) + ("," if len(items) == 1 else ""), st)]
        if getattr(st, "bare_tuple", False) and isinstance(st.value, ast.Tuple) and len(st.value.elts) > 1:
            head = ast.unparse(ast.Assign(targets=st.targets, value=ast.Name(id="_", ctx=ast.Load()), lineno=1))
            return [self.marker(head[:-1] + ", ".join(ast.unparse(x) for x in st.value.elts), st)]
        if not self.numbering or isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) \
                and isinstance(st.value.value, str):
            return [st]
        return [self.marker(self.LINE, st), st]

    def blocks(self, st):
        for value in ast.iter_fields(st):
            value = value[1]
            if isinstance(value, list) and value:
                if isinstance(value[0], ast.stmt):
                    self.block(value)
                elif isinstance(value[0], (ast.excepthandler, ast.match_case)):
                    for part in value:
                        self.block(part.body)


def nested_else(st):
    """Mark the `if` statement `st`, alone in an `else`, to be written as a block
    (`else:` then `if` indented) rather than `elif`; returns it."""
    st.nested_else = True
    return st


def bare_tuple(st):
    """Mark the assignment `st` of a tuple to be written without parentheses (`a, b = b, a`,
    as people write a swap, where `ast.unparse` writes `a, b = (b, a)`); returns it."""
    st.bare_tuple = True
    return st


COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
            ast.With, ast.AsyncWith, ast.Try, ast.Match) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


def render(tree):
    """The source text of a node or a list of statements (no trailing newline)."""
    return written(tree, Markers())[0]


def numbered(tree):
    """(the text `render` writes for `tree`, {line number (from 1): statement}) for each of its
    simple statements and comments: where a traceback's line number comes from in the tree."""
    markers = Markers(numbering=True)
    text, at = written(tree, markers)
    return text, {at[k]: st for k, st in markers.statements.items() if k in at}


def written(tree, markers):
    """(the text of `tree` with `markers` applied and written back, {marker index: its line})."""
    if isinstance(tree, list):
        tree = ast.Module(body=tree, type_ignores=[])
    elif isinstance(tree, ast.stmt):
        tree = ast.Module(body=[tree], type_ignores=[])
    try:
        if isinstance(tree, ast.Module):
            markers.block(tree.body)
        text = ast.unparse(tree)
    finally:
        markers.restore()
    if not markers.texts:
        return text, {}
    lines, at = [], {}
    for line in text.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("__comment_") and stripped.endswith("__"):
            k = int(stripped[10:-2])
            said = markers.texts[k]
            if said is None:
                continue
            if said is markers.LINE:  # (the next line is the statement's)
                at[k] = len(lines) + 1
                continue
            if k in markers.trailing and lines:  # (no line of its own: the statement keeps its line)
                lines[-1] += said
                continue
            at[k] = len(lines) + 1
            line = line[:len(line) - len(stripped)] + said
        lines.append(line)
    return "\n".join(lines), at


class Rename(ast.NodeTransformer):
    """Every name, parameter and definition `old` spelled `new`, in place (attributes stay)."""

    def __init__(self, old, new):
        self.old, self.new = old, new

    def visit_Name(self, node):
        if node.id == self.old:
            node.id = self.new
        return node

    def visit_arg(self, node):
        if node.arg == self.old:
            node.arg = self.new
        return node

    def visit_FunctionDef(self, node):
        if node.name == self.old:
            node.name = self.new
        return self.generic_visit(node)

    visit_ClassDef = visit_FunctionDef
