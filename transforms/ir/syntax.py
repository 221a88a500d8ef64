"""The only module importing gast: parsing, printing and a few node constructors.

gast gives one AST across Python versions (Tangent broke when `ast.Num` went away);
the rest of `dualtape.transforms` reaches gast only through these helpers.
"""

import ast as _ast_module
from collections import deque as _deque
import math as _math

import gast

AST = gast.AST
NodeTransformer = gast.NodeTransformer
nodes = gast  # node classes, e.g. syntax.nodes.Name, for isinstance checks


def parse(source):
    """A gast Module for `source`."""
    return gast.parse(source)


def from_ast(tree):
    """The gast tree of a standard-library `ast` tree (parse.lambda_source builds one)."""
    return gast.ast_to_gast(tree)


def to_ast(node):
    """The standard-library `ast` tree of a gast node (generated code is standard ast: ir/code.py).

    What gast.gast_to_ast gives, a few times faster for what the emitters convert (the IR's
    expressions, one at a time): a node whose fields are spelled alike in both trees is copied
    field by field; a name is a name; the rest (parameters, definitions, handlers) is gast's."""
    if isinstance(node, list):
        return [to_ast(x) if isinstance(x, AST) else x for x in node]
    kind = type(node)
    if kind is gast.Name and type(node.ctx) in _CONTEXTS_AST:
        new = _ast_module.Name(id=node.id, ctx=_CONTEXTS_AST[type(node.ctx)])
    elif kind in _ALIKE:
        new = _ALIKE[kind]()
        for field in kind._fields:
            value = getattr(node, field, None)
            setattr(new, field, to_ast(value) if isinstance(value, (list, AST)) else value)
    else:
        return gast.gast_to_ast(node)
    for attr in _LOCATION:
        if attr in node.__dict__:
            setattr(new, attr, node.__dict__[attr])
    return new


_LOCATION = ("lineno", "col_offset", "end_lineno", "end_col_offset")
_CONTEXTS_AST = {gast.Load: _ast_module.Load(), gast.Store: _ast_module.Store(), gast.Del: _ast_module.Del()}
_ALIKE = {getattr(gast, name): getattr(_ast_module, name) for name in dir(gast)
          if isinstance(getattr(gast, name), type) and issubclass(getattr(gast, name), gast.AST)
          and isinstance(getattr(_ast_module, name, None), type)
          and getattr(gast, name)._fields == getattr(_ast_module, name)._fields
          and name not in ("Name", "arguments", "arg", "ExceptHandler", "FunctionDef", "AsyncFunctionDef",
                           "ClassDef", "Lambda", "Module", "Interactive", "Expression", "FunctionType")}


def walk(node):
    """Every node of `node`'s tree, `node` first, breadth first (`ast.walk`, with less overhead:
    the passes walk the trees of every statement many times)."""
    todo = _deque([node])
    pop, push, extend = todo.popleft, todo.append, todo.extend
    while todo:
        node = pop()
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                extend([x for x in value if isinstance(x, AST)])
            elif isinstance(value, AST):
                push(value)
        yield node


def replace_children(node, new_of):
    """Each child of `node` (a field's node, or an item of a list field) for which
    `new_of(child)` gives a node, replaced by that node; True if any was."""
    changed = False
    for field in node._fields:
        value = getattr(node, field, None)
        if isinstance(value, list):
            for i, item in enumerate(value):
                new = new_of(item)
                if new is not None:
                    value[i], changed = new, True
        else:
            new = new_of(value)
            if new is not None:
                setattr(node, field, new)
                changed = True
    return changed


def unparse(node):
    """Python source for a gast node, without a trailing newline."""
    return gast.unparse(node).strip()


def name(identifier, store=False):
    return gast.Name(id=identifier, ctx=gast.Store() if store else gast.Load(),
                     annotation=None, type_comment=None)


def constant(value):
    return gast.Constant(value=value, kind=None)


def literal(value):
    """The expression Python's parser makes of `repr(value)`, for the values parameter defaults
    are: None, bools, numbers (a negative one as `-x`; `inf` and `nan` as names), strings, and
    tuples and lists of them."""
    if type(value) in (tuple, list):
        return (gast.Tuple if type(value) is tuple else gast.List)(elts=[literal(v) for v in value], ctx=gast.Load())
    if type(value) in (int, float):
        if value != value or value in (float("inf"), float("-inf")):
            node = name("nan" if value != value else "inf")
            return gast.UnaryOp(op=gast.USub(), operand=node) if value < 0 else node
        if value < 0 or (type(value) is float and _math.copysign(1.0, value) < 0):
            return gast.UnaryOp(op=gast.USub(), operand=literal(-value))
    if value is None or type(value) in (bool, int, float, str, bytes):
        return constant(value)
    raise ValueError(f"no literal spells {type(value).__name__} {value!r}")


def attribute(value, attr):
    """`value.attr` (a load); `value` is a node or an identifier."""
    return gast.Attribute(value=name(value) if isinstance(value, str) else value, attr=attr, ctx=gast.Load())


def is_constant(node):
    return isinstance(node, gast.Constant)


def copy(node):
    """A deep copy of a node or a list of nodes, gast or standard ast (templates are reused
    for every instantiation). Every node and list is new; the contexts (`Load()`, which hold
    nothing) and the other values (names, constants, marks) are shared: several times faster
    than `copy.deepcopy`, which the transformer would spend a fifth of its time in."""
    if isinstance(node, list):
        return [copy(x) for x in node]
    if not isinstance(node, AST) or isinstance(node, _CONTEXTS):
        return node
    cls = type(node)
    new = cls.__new__(cls)
    new.__dict__.update({k: copy(v) if isinstance(v, (list, AST)) else v for k, v in node.__dict__.items()})
    return new


_CONTEXTS = (gast.expr_context, _ast_module.expr_context)


def load_names(node):
    """Names read anywhere inside `node`."""
    return {n.id for n in walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def store_names(node):
    """Names written anywhere inside `node` (assignment targets, loop variables)."""
    return {n.id for n in walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def comprehension_scoped(node):
    """The ids of the Name nodes inside `node` that name a comprehension's own variables
    (`k` in `[k + i for k in ks]`): Python scopes them to the comprehension, so they are
    neither read nor written by the statement holding it (its first iterable is evaluated
    outside: `[k for k in k]` reads the outer `k`)."""
    out = set()
    for comp in walk(node):
        if isinstance(comp, (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)):
            bound = set().union(*(store_names(g.target) for g in comp.generators))
            outside = {id(x) for x in walk(comp.generators[0].iter)}
            out |= {id(x) for x in walk(comp) if isinstance(x, gast.Name) and x.id in bound and id(x) not in outside}
    return out


iter_child_nodes = gast.iter_child_nodes
