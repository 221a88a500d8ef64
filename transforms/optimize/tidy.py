"""Simplify instantiated adjoint expressions so they read like hand-written code.

Constant folding (`2 - 1` -> `1`), algebraic identities (`g * 1.0`, `0 + g`, `-(-g)`,
`x ** 1`, `a + -b` -> `a - b`), and spelling (`dnp.cos(x)` -> `np.cos(x)`, or `math.cos(x)`
on Python floats, `dnp.multiply(a, b)` -> `a * b`). Nothing that changes shape or NaN
behaviour: `0 * x` stays.
"""

import inspect

import numpy as np

from dualtape.core import dnp

from ..ir import syntax
from ..templates.quote import is_gast
from ..ir.syntax import nodes as n

_OPERATOR_FNS = {"add": n.Add, "subtract": n.Sub, "multiply": n.Mult, "divide": n.Div,
                 "true_divide": n.Div, "power": n.Pow, "matmul": n.MatMult}
_MATH_SAFE = {"sin": "sin", "cos": "cos", "tanh": "tanh", "arctan": "atan"}


def _accepts(fn, keywords):
    """True when NumPy's `fn` takes these keyword arguments (dnp may add TF's extras)."""
    if not keywords:
        return True
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return all(k in params for k in keywords)


def _strip_neg(node):
    """`-a * b / c` without its leading minus, or None."""
    if isinstance(node, n.UnaryOp) and isinstance(node.op, n.USub):
        return node.operand
    if isinstance(node, n.BinOp) and isinstance(node.op, (n.Mult, n.Div)):
        left = _strip_neg(node.left)
        if left is not None:
            return n.BinOp(left=left, op=node.op, right=node.right)
    return None


def _num(node):
    return isinstance(node, n.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool)


def _is(node, value):
    return _num(node) and node.value == value


def _literal(node):
    """A literal whose identity is known: a Constant (None, a bool, a number, a string, ...)."""
    return isinstance(node, n.Constant)


class Simplifier(syntax.NodeTransformer):
    """One bottom-up pass; `is_scalar(node)` says whether an expression is a Python/NumPy scalar."""

    def __init__(self, is_scalar, optimize=True):
        self.is_scalar = is_scalar
        self.optimize = optimize

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if (isinstance(func, n.Name) and func.id == "power_slope" and len(node.args) == 2 and not node.keywords
                and _num(node.args[1]) and node.args[1].value != 0):  # Pow's x slope, exponent a nonzero literal:
            c = node.args[1]                                        # no 0 ** 0 guard (rulekit.power_slope)
            return self.visit_BinOp(n.BinOp(left=c, op=n.Mult(), right=n.BinOp(
                left=node.args[0], op=n.Pow(), right=n.BinOp(left=c, op=n.Sub(), right=syntax.constant(1)))))
        if isinstance(func, n.Attribute) and isinstance(func.value, n.Name) and func.value.id == "dnp":
            name = func.attr
            if name in _OPERATOR_FNS and len(node.args) == 2 and not node.keywords:
                return self.visit_BinOp(n.BinOp(left=node.args[0], op=_OPERATOR_FNS[name](), right=node.args[1]))
            if name == "negative" and len(node.args) == 1:
                return self.visit_UnaryOp(n.UnaryOp(op=n.USub(), operand=node.args[0]))
            if name in _MATH_SAFE and len(node.args) == 1 and self.is_scalar(node.args[0]):
                func.value.id, func.attr = "math", _MATH_SAFE[name]
            elif (callable(getattr(np, name, None)) and dnp.NUMPY_DISPATCH.get(getattr(np, name)) is getattr(dnp, name)
                  and _accepts(getattr(np, name), [k.arg for k in node.keywords])):
                func.value.id = "np"
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if not self.optimize:
            return node
        if isinstance(node.op, n.USub):
            if _num(node.operand):
                return syntax.constant(-node.operand.value)
            if isinstance(node.operand, n.UnaryOp) and isinstance(node.operand.op, n.USub):
                return node.operand.operand
        if isinstance(node.op, n.Not) and _literal(node.operand) and isinstance(node.operand.value, bool):
            return syntax.constant(not node.operand.value)  # `reverse=not False` -> `reverse=True`
        return node

    def visit_Compare(self, node):
        # a template's `axis is None` with a literal axis substituted reads `1 is None`:
        # Python warns about `is` with a literal (SyntaxWarning), so fold it whatever
        # `optimize` says. A literal is None only when it is the constant None.
        self.generic_visit(node)
        if (len(node.ops) == 1 and isinstance(node.ops[0], (n.Is, n.IsNot))
                and _literal(node.left) and _literal(node.comparators[0])):
            left, right = node.left.value, node.comparators[0].value
            if left is None or right is None or (type(left) is bool and type(right) is bool):
                same = left is right  # None, True and False are singletons: identity is known
                return syntax.constant(same if isinstance(node.ops[0], n.Is) else not same)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if _literal(node.test) and isinstance(node.test.value, bool):  # `a if False else b` -> `b`
            return node.body if node.test.value else node.orelse
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if not self.optimize:
            return node
        a, b, op = node.left, node.right, node.op
        if _num(a) and _num(b) and not isinstance(op, n.MatMult):
            try:
                value = {n.Add: a.value + b.value, n.Sub: a.value - b.value, n.Mult: a.value * b.value}.get(type(op))
                if value is None and isinstance(op, n.Div) and b.value != 0:
                    value = a.value / b.value
                if value is None and isinstance(op, n.Pow) and abs(b.value) < 16:
                    value = a.value ** b.value
            except (OverflowError, ZeroDivisionError):
                value = None
            if value is not None:
                return syntax.constant(value)
        if isinstance(op, n.Mult):
            if _is(b, 1):
                return a
            if _is(a, 1):
                return b
            if isinstance(a, n.UnaryOp) and isinstance(a.op, n.USub) and _num(b):
                return n.BinOp(left=a.operand, op=n.Mult(), right=syntax.constant(-b.value))
        if isinstance(op, n.Div) and _is(b, 1):
            return a
        if isinstance(op, n.Pow) and _is(b, 1):
            return a
        if isinstance(op, n.Add):
            if _is(a, 0):
                return b
            if _is(b, 0):
                return a
            if _strip_neg(b) is not None:
                return n.BinOp(left=a, op=n.Sub(), right=_strip_neg(b))
        if isinstance(op, n.Sub):
            if _is(b, 0):
                return a
            if _strip_neg(b) is not None:
                return n.BinOp(left=a, op=n.Add(), right=_strip_neg(b))
        return node


def simplify(node, is_scalar, optimize=True):
    """The simplified expression (a new node)."""
    return Simplifier(is_scalar, optimize).visit(node)


def accumulate_expr(adj, expr, optimize=True):
    """`adj + expr` (`expr` a gast or standard-ast expression), simplified (`b + -g * y` ->
    `b - g * y`): a standard-ast expression for generated code (ir/code.py)."""
    if not is_gast(expr):
        expr = syntax.from_ast(expr)
    node = n.BinOp(left=syntax.name(adj), op=n.Add(), right=syntax.copy(expr))
    return syntax.to_ast(simplify(node, lambda e: False, optimize))
