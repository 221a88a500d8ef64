"""VJP rules as templates: a rule's `return` expression with its parameters substituted.

`sin_vjp(g, ans, x): return g * dnp.cos(x)` instantiated with g -> bs, x -> z gives the
adjoint line `bz = bs * dnp.cos(z)`. The tape calls the same function, so the generated
code and the tape cannot disagree about a derivative.
"""

import functools
import inspect
import textwrap

from dualtape.core.registry import RuleError

from ..ir import syntax
from ..ir.syntax import nodes as n


@functools.lru_cache(maxsize=None)
def rule_template(rule):
    """(parameter names, keyword defaults, return expression node) of a rule function."""
    source = textwrap.dedent(inspect.getsource(rule))
    fn = syntax.parse(source).body[0]
    body = [s for s in fn.body if not (isinstance(s, n.Expr) and syntax.is_constant(s.value))]
    if len(body) != 1 or not isinstance(body[0], n.Return) or body[0].value is None:
        raise RuleError(f"[{rule.__name__}] cannot be used as a template: its body has {len(body)} "
                        "statements. Write a single `return <expr>`, moving the work into a rulekit helper.")
    sig = inspect.signature(rule)
    params = list(sig.parameters)
    defaults = {k: p.default for k, p in sig.parameters.items() if p.default is not inspect.Parameter.empty}
    return params, defaults, body[0].value


def rule_uses(rule):
    """The parameter names a rule's expression reads."""
    params, _, expr = rule_template(rule)
    return syntax.load_names(expr) & set(params)


class _Substitute(syntax.NodeTransformer):
    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Name(self, node):
        if isinstance(node.ctx, n.Load) and node.id in self.mapping:
            return syntax.copy(self.mapping[node.id])
        return node


def instantiate(rule, mapping):
    """The rule's return expression with parameter names replaced by the nodes in `mapping`.

    Keyword-only parameters missing from `mapping` take the rule's default value.
    """
    params, defaults, expr = rule_template(rule)
    full = {k: syntax.constant(v) if isinstance(v, (int, float, bool, type(None))) else syntax.literal(v)
            for k, v in defaults.items()}
    full.update(mapping)
    return _Substitute(full).visit(syntax.copy(expr))
