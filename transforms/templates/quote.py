"""Code from templates: a snippet of Python parsed once, its placeholder names replaced by nodes.

`code_stmt("ADJ = accumulate(ADJ, G)", ADJ="bx", G=node)` is the statement
`bx = accumulate(bx, <node>)`: the template text is parsed the first time it is used and
cached; every use copies the cached tree and substitutes. A placeholder is any name passed
as a keyword; its value is an identifier (a `str`, which becomes a name), a node, or a
number, bool or None (a constant). Nothing else is spelled as text and parsed again.

Two flavours, one per tree: `expr`/`stmts` give gast nodes, for the front end and call
resolution (the IR is gast); `code_expr`/`code_stmt`/`code_stmts` give standard `ast`
nodes, for generated code (ir/code.py), which passes rewrite and codegen renders once.
"""

import ast
import functools

from ..ir import syntax
from ..ir.syntax import nodes as n


@functools.lru_cache(maxsize=None)
def parsed_code(source):
    return tuple(ast.parse(source).body)


@functools.lru_cache(maxsize=None)
def parsed_gast(source):
    return tuple(syntax.parse(source).body)


def as_code(value):
    """A standard-ast node for a substitution value (see the module docstring)."""
    if isinstance(value, str):
        if not value.isidentifier():
            raise TypeError(f"a placeholder's text must be an identifier, not {value!r}: pass a node")
        return ast.Name(id=value, ctx=ast.Load())
    if is_gast(value):  # (gast's node classes derive from ast's: ask first)
        return syntax.to_ast(value)
    if isinstance(value, ast.AST):
        return syntax.copy(value)
    if value is None or isinstance(value, (bool, int, float)):
        return ast.Constant(value=value)
    raise TypeError(f"cannot substitute {type(value).__name__} {value!r} into a template")


def is_gast(node):
    """Whether `node` is a gast node (the IR's), not a standard-ast one (generated code's)."""
    return getattr(n, type(node).__name__, None) is type(node)


def as_gast(value):
    """A gast node for a substitution value."""
    if isinstance(value, str):
        if not value.isidentifier():
            raise TypeError(f"a placeholder's text must be an identifier, not {value!r}: pass a node")
        return syntax.name(value)
    if isinstance(value, syntax.AST):
        return syntax.copy(value)
    if value is None or isinstance(value, (bool, int, float)):
        return syntax.constant(value)
    raise TypeError(f"cannot substitute {type(value).__name__} {value!r} into a template")


def filled(node, subs, value_node):
    """A copy of the template tree `node` with each placeholder name in `subs` replaced by
    `value_node(subs[name])`, given the placeholder's context (one pass: copy and substitute)."""
    if isinstance(node, list):
        return [filled(x, subs, value_node) if isinstance(x, ast.AST) else x for x in node]
    if isinstance(node, (ast.Name, n.Name)) and node.id in subs:
        new = value_node(subs[node.id])
        if hasattr(new, "ctx"):
            set_context(new, type(node.ctx)())
        return new
    if isinstance(node, (ast.expr_context, n.expr_context)):
        return node
    cls = type(node)
    new = cls.__new__(cls)
    new.__dict__.update({k: filled(v, subs, value_node) if isinstance(v, (list, ast.AST)) else v
                         for k, v in node.__dict__.items()})
    return new


def set_context(node, ctx):
    """`ctx` (Load, Store) on `node`, and on the items of a tuple or list it is."""
    node.ctx = ctx
    if isinstance(node, (ast.Tuple, ast.List, n.Tuple, n.List)):
        for elt in node.elts:
            if hasattr(elt, "ctx"):
                set_context(elt, type(ctx)())


def code_stmts(source, **subs):
    """The statements of `source` (standard ast), placeholders substituted."""
    return [filled(st, subs, as_code) for st in parsed_code(source)]


def code_stmt(source, **subs):
    (st,) = code_stmts(source, **subs)
    return st


def code_expr(source, **subs):
    return code_stmt(source, **subs).value


def stmts(source, **subs):
    """The statements of `source` (gast), placeholders substituted."""
    return [filled(st, subs, as_gast) for st in parsed_gast(source)]


def stmt(source, **subs):
    (st,) = stmts(source, **subs)
    return st


def expr(source, **subs):
    return stmt(source, **subs).value
