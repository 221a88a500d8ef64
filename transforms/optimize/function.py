"""The function a pass of optimize/ rewrites: its body as statements, its parameters, the order
of its lines.

Every public pass takes a body as statements (standard `ast`, with `ir.code.Comment`s), rewrites
them (the emitter made them for it) and gives back the body to use from then on.
"""

import ast

from ..ir import syntax

BLOCKS = ("body", "orelse", "finalbody")


def arguments(params):
    """`ast.arguments` for parameters given as such, or as a list of names."""
    if isinstance(params, ast.arguments):
        return params
    return ast.arguments(posonlyargs=[], args=[ast.arg(arg=name) for name in params], vararg=None,
                         kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])


def function(body, params):
    """The function `_f(params)` whose body is `body` (the same list: rewriting one rewrites
    the other)."""
    return ast.FunctionDef(name="_f", args=arguments(params), body=body, decorator_list=[], returns=None,
                           type_comment=None)


def parameter_names(args, star=True):
    """The names of `args` (an `ast.arguments`), `*args` and `**kwargs` included when `star`."""
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    if star:
        names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return names


def number_lines(fn):
    """Number the lines of `fn` in program order, one per simple statement, comment, block
    header (`for ...:`, `else:`, `except ...:`): each statement's `lineno` is its first line and
    `end_lineno` its last, and every expression of a statement's own line (not of its blocks)
    has that line as `lineno`. Returns `fn`."""
    line = [0]

    def mark(node, number):
        for sub in syntax.walk(node):
            if "lineno" in sub._attributes:
                sub.lineno = sub.end_lineno = number

    def number(body):
        for st in body:
            line[0] += 1
            st.lineno = line[0]
            for field, value in ast.iter_fields(st):
                if field in BLOCKS or field == "handlers":
                    continue
                for node in value if isinstance(value, list) else [value]:
                    if isinstance(node, ast.AST):
                        mark(node, st.lineno)
            number(getattr(st, "body", None) or [])
            for handler in getattr(st, "handlers", ()):
                line[0] += 1
                handler.lineno = line[0]
                if handler.type is not None:
                    mark(handler.type, line[0])
                number(handler.body)
                handler.end_lineno = line[0]
            for field in ("orelse", "finalbody"):
                if getattr(st, field, None):
                    line[0] += 1  # `else:` / `finally:`
                    number(getattr(st, field))
            st.end_lineno = line[0]

    line[0] += 1
    fn.lineno = line[0]
    mark(fn.args, fn.lineno)
    number(fn.body)
    fn.end_lineno = line[0]
    return fn


def name_counts(node):
    """(loads, stores): how many times each name is read, and assigned or deleted, in `node`."""
    loads, stores = {}, {}
    for sub in syntax.walk(node):
        if isinstance(sub, ast.Name):
            table = loads if isinstance(sub.ctx, ast.Load) else stores
            table[sub.id] = table.get(sub.id, 0) + 1
    return loads, stores


def blocks(node):
    """The statement lists inside `node`, each once (`body`, `orelse`, `finalbody`, handlers')."""
    for sub in syntax.walk(node):
        for _, inner in inner_blocks(sub):
            yield inner


def inner_blocks(st):
    """(field, statements) of each non-empty statement list directly inside `st` (its body,
    orelse and finalbody)."""
    for field in BLOCKS:
        inner = getattr(st, field, None)
        if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
            yield field, inner


def statements(body):
    """Every statement of the list `body` and of the blocks nested in it (`inner_blocks`: not
    in except handlers), in the order of the source."""
    for st in body:
        yield st
        for _, inner in inner_blocks(st):
            yield from statements(inner)


def splice(fn, replace, after=None):
    """Rewrite every statement list of `fn` (except handlers' too): a statement whose id is in
    `replace` becomes that list of statements, and the list `after[id]` follows one whose id is
    there."""
    after = after or {}

    def block(body):
        out = []
        for st in body:
            for field, inner in inner_blocks(st):
                setattr(st, field, block(inner))
            for handler in getattr(st, "handlers", ()):
                handler.body = block(handler.body)
            out.extend(replace.get(id(st), [st]))
            out.extend(after.get(id(st), ()))
        return out

    fn.body = block(fn.body)


def remove(fn, doomed):
    """Remove from every block of `fn` the statements whose ids are in `doomed`."""
    for block in list(blocks(fn)):
        if any(id(st) in doomed for st in block):
            block[:] = [st for st in block if id(st) not in doomed]
