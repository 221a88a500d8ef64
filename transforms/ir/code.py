"""Generated code as a tree: statement lists of the standard `ast`, with comments.

Emitters (reverse/, forward/) build each generated function as an `ast.FunctionDef` whose
bodies may hold `Comment` statements (`# forward`, `# b = a * a` before its adjoint); the
passes of optimize/ and jit/ rewrite those trees; `render` writes the text once, when
codegen/ assembles the module. Templates (templates/quote.py) build the statements.
"""

import ast
import copy
import functools
import io
import tokenize

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
    return written(copy.deepcopy(tree), CommentsAsMarkers())[0]


COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
            ast.With, ast.AsyncWith, ast.Try, ast.Match) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


class NumberingMarkers(CommentsAsMarkers):
    """Every simple statement (but a docstring) written through a marker, so that `numbered`
    knows its line."""

    def __init__(self, originals):
        super().__init__()
        self.originals = originals  # id of a node of the copy -> the node of the tree
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
            new = self.marker(ast.unparse(ast.fix_missing_locations(new)))
        self.statements[int(new.value.id[10:-2])] = original
        return new


def numbered(tree):
    """(the text `render` writes for `tree`, {line number (from 1): statement}) for each of its
    simple statements and comments: where a traceback's line number comes from in the tree."""
    if isinstance(tree, list):
        tree = ast.Module(body=tree, type_ignores=[])
    copied = copy.deepcopy(tree)
    markers = NumberingMarkers({id(c): o for c, o in zip(ast.walk(copied), ast.walk(tree))})
    text, at = written(copied, markers)
    return text, {at[k]: st for k, st in markers.statements.items() if k in at}


def written(tree, markers):
    """(the text of `tree` with `markers` applied and written back, {marker index: its line})."""
    # (ast.unparse reads the line of a def or an assignment: built nodes get their parent's)
    text = ast.unparse(ast.fix_missing_locations(markers.visit(tree)))
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


# -- the text form, while a stage still reads or writes lines (to go when all stages are trees) --

def as_tree(body):
    """Statements of `body`: a list of statements as it is; a list of source lines (indented
    text, comment lines included) parsed into statements with `Comment`s."""
    if not body or not all(isinstance(line, str) for line in body):
        return body
    lines, texts, trailing = [], [], set()
    source = "\n".join(body).split("\n")
    ends = trailing_comments(source)
    for i, line in enumerate(source):
        stripped = line.lstrip()
        if stripped.startswith("#"):
            texts.append(comment_text(stripped))
            line = line[:len(line) - len(stripped)] + f"__comment_{len(texts) - 1}__"
        elif i in ends:  # `code  # text`: the code, then a trailing Comment after it (in its block)
            code = line[:ends[i][0]].rstrip()
            texts.append(comment_text(ends[i][1]))
            trailing.add(len(texts) - 1)
            lines.append(code)
            after = next((x for x in source[i + 1:] if x.strip()), "") if code.endswith(":") else line
            line = after[:len(after) - len(after.lstrip())] + f"__comment_{len(texts) - 1}__"
        lines.append(line)
    tree = ast.parse("\n".join(lines))

    class Back(ast.NodeTransformer):
        def visit_Expr(self, node):
            if isinstance(node.value, ast.Name) and node.value.id.startswith("__comment_"):
                k = int(node.value.id[10:-2])
                return Comment(texts[k], trailing=k in trailing)
            return self.generic_visit(node)

        def visit_If(self, node):  # `else:` then an indented `if` (an `elif` starts where the `if` does)
            if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If) \
                    and node.orelse[0].col_offset > node.col_offset:
                nested_else(node.orelse[0])
            return self.generic_visit(node)

        def visit_Assign(self, node):  # `a, b = b, a`: a tuple without parentheses starts at its first item
            value = node.value
            if isinstance(value, ast.Tuple) and len(value.elts) > 1 and value.col_offset == value.elts[0].col_offset:
                bare_tuple(node)
            return node
    return Back().visit(tree).body


def comment_text(comment):
    """The text of a `# text` comment."""
    return comment[1:].strip() if comment.startswith("# ") else comment[1:]


def trailing_comments(lines):
    """{line index: (column, comment)} of the comments that end a line of code."""
    if not any("#" in line and not line.lstrip().startswith("#") for line in lines):
        return {}
    found = {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline))
    except (tokenize.TokenError, SyntaxError):
        return {}
    for tok, nxt in zip(tokens, tokens[1:]):
        if tok.type == tokenize.COMMENT and nxt.type == tokenize.NEWLINE and tok.line[:tok.start[1]].strip():
            found[tok.start[0] - 1] = (tok.start[1], tok.string)
    return found


def expression_of(source):
    """The standard-ast expression written as `source` (transitional: for callers that still
    pass an expression as text)."""
    return ast.parse(source, mode="eval").body


@functools.lru_cache(maxsize=256)
def parsed_arguments(signature):
    return expression_of(f"lambda {signature}: None").args


def arguments_of(signature):
    """The `ast.arguments` of a parameter list written as text (`"x, bout=1.0"`, no
    annotations); an `ast.arguments` as it is (transitional: for callers that still pass a
    signature string)."""
    if isinstance(signature, ast.arguments):
        return signature
    return copy.deepcopy(parsed_arguments(signature))


def as_lines(body):
    """Source lines of `body`: a list of lines as it is; statements rendered."""
    if not body or all(isinstance(line, str) for line in body):
        return body
    return render(list(body)).split("\n")
