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


class CommentsAsMarkers(ast.NodeTransformer):
    """Comments replaced by marker expressions `__comment_K__` that `render` writes back as
    their lines; so is a `return` of a tuple, written bare (`return bx, by`, `return bx,`: as
    the emitters and people spell it, where `ast.unparse` writes `return (bx, by)`). An `if`
    alone in an `else` is written `elif` unless it is marked `nested_else` (see `nested_else`):
    a marker line that `render` drops keeps it a block."""

    def __init__(self):
        self.texts = []
        self.trailing = set()  # indices of the markers of trailing comments
        self.undo = []  # what the markers replaced, put back by `restore`: the tree is not copied

    def generic_visit(self, node):
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                self.undo.append((value, list(value)))
            elif isinstance(value, ast.AST):
                self.undo.append((node, field, value))
        return super().generic_visit(node)

    def restore(self):
        """Put back every statement list and child node the markers replaced."""
        for entry in reversed(self.undo):
            if len(entry) == 2:
                entry[0][:] = entry[1]
            else:
                setattr(*entry)
        self.undo.clear()

    def marker(self, line):
        self.texts.append(line)
        return ast.Expr(value=ast.Name(id=f"__comment_{len(self.texts) - 1}__", ctx=ast.Load()))

    def visit_Comment(self, node):
        if getattr(node, "trailing", False):
            self.trailing.add(len(self.texts))
            return self.marker("  # " + node.text)
        return self.marker("# " + node.text)

    def visit_Return(self, node):
        if isinstance(node.value, ast.Tuple) and node.value.elts:
            items = [ast.unparse(self.visit(x)) for x in node.value.elts]
            return self.marker("return " + ", ".join(items) + ("," if len(items) == 1 else ""))
        return node

    def visit_If(self, node):
        self.generic_visit(node)
        if len(node.orelse) == 1 and getattr(node.orelse[0], "nested_else", False):
            self.undo.append((node.orelse, list(node.orelse)))
            node.orelse.insert(0, self.marker(None))
        return node

    def visit_Assign(self, node):
        if getattr(node, "bare_tuple", False) and isinstance(node.value, ast.Tuple) and len(node.value.elts) > 1:
            head = ast.unparse(ast.Assign(targets=node.targets, value=ast.Name(id="_", ctx=ast.Load()), lineno=0))
            return self.marker(head[:-1] + ", ".join(ast.unparse(x) for x in node.value.elts))
        return self.generic_visit(node)


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


def render(tree):
    """The source text of a node or a list of statements (no trailing newline)."""
    if isinstance(tree, list):
        tree = ast.Module(body=tree, type_ignores=[])
    return written(tree, CommentsAsMarkers())[0]


COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
            ast.With, ast.AsyncWith, ast.Try, ast.Match) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


class NumberingMarkers(CommentsAsMarkers):
    """Every simple statement (but a docstring) written through a marker, so that `numbered`
    knows its line."""

    def __init__(self, originals):
        super().__init__()
        self.originals = originals  # id of a node -> the node (the statements to number)
        self.statements = {}  # marker index -> the statement of the tree

    def visit(self, node):
        original = self.originals.get(id(node))
        if (original is None or not isinstance(node, ast.stmt) or isinstance(node, COMPOUND)
                or isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            return super().visit(node)
        new = super().visit(node)
        if not (isinstance(new, ast.Expr) and isinstance(new.value, ast.Name)
                and new.value.id.startswith("__comment_")):
            new = self.marker(ast.unparse(fill_locations(new)))
        self.statements[int(new.value.id[10:-2])] = original
        return new


def numbered(tree):
    """(the text `render` writes for `tree`, {line number (from 1): statement}) for each of its
    simple statements and comments: where a traceback's line number comes from in the tree."""
    if isinstance(tree, list):
        tree = ast.Module(body=tree, type_ignores=[])
    markers = NumberingMarkers({id(x): x for x in ast.walk(tree)})
    text, at = written(tree, markers)
    return text, {at[k]: st for k, st in markers.statements.items() if k in at}


def written(tree, markers):
    """(the text of `tree` with `markers` applied and written back, {marker index: its line})."""
    # (ast.unparse reads the line of a def or an assignment: built nodes get their parent's)
    try:
        text = ast.unparse(fill_locations(markers.visit(tree)))
    finally:
        markers.restore()
    if not markers.texts:
        return text, {}
    lines, at = [], {}
    for line in text.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("__comment_") and stripped.endswith("__"):
            k = int(stripped[10:-2])
            if markers.texts[k] is None:
                continue
            if k in markers.trailing and lines:  # (no line of its own: the statement keeps its line)
                lines[-1] += markers.texts[k]
                continue
            at[k] = len(lines) + 1
            line = line[:len(line) - len(stripped)] + markers.texts[k]
        lines.append(line)
    return "\n".join(lines), at


def fill_locations(tree):
    """`tree` with every node that has no line of its own given its parent's (what
    `ast.fix_missing_locations` does, without its recursive closure: a reference cycle per
    call, which the transformer must not leave behind); returns `tree`."""
    stack = [(tree, {"lineno": 1, "end_lineno": 1, "col_offset": 0, "end_col_offset": 0})]
    while stack:
        node, parent = stack.pop()
        own = dict(parent)
        for field in ("lineno", "col_offset"):
            if field in node._attributes:
                for name in (field, "end_" + field):
                    if getattr(node, name, None) is None:
                        setattr(node, name, parent[name])
                    own[name] = getattr(node, name)
        stack.extend((child, own) for child in ast.iter_child_nodes(node))
    return tree


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
