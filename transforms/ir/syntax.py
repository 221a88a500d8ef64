"""The only module importing gast: parsing, printing and a few node constructors.

gast gives one AST across Python versions (Tangent broke when `ast.Num` went away);
the rest of `dualtape.transforms` reaches gast only through these helpers.
"""

import copy as _copy
import math as _math

import gast

AST = gast.AST
NodeTransformer = gast.NodeTransformer
walk = gast.walk
nodes = gast  # node classes, e.g. syntax.nodes.Name, for isinstance checks


def parse(source):
    """A gast Module for `source`."""
    return gast.parse(source)


def from_ast(tree):
    """The gast tree of a standard-library `ast` tree (parse.lambda_source builds one)."""
    return gast.ast_to_gast(tree)


def to_ast(node):
    """The standard-library `ast` tree of a gast node (generated code is standard ast: ir/code.py)."""
    return gast.gast_to_ast(node)


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
    """A deep copy of a node (templates are reused for every instantiation)."""
    return _copy.deepcopy(node)


def load_names(node):
    """Names read anywhere inside `node`."""
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def store_names(node):
    """Names written anywhere inside `node` (assignment targets, loop variables)."""
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


iter_child_nodes = gast.iter_child_nodes
