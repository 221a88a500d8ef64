"""Python's builtins (and `math`'s functions of sequences) over differentiated values, written
out as the code Python runs, which the transformer follows:

    sum(xs, start)         _sum = start; for v in xs: _sum = _sum + v       (0 when no start)
    sum([a, b])            0 + a + b
    sum(f(v) for v in xs)  the same loop, the generator's variables renamed (they are its own)
    max(xs), min(xs)       the first largest (smallest) item, as Python compares: `if v > m`
    max(a, b, c)           max([a, b, c])  (max(a, b) is the registry's maximum)
    sorted(xs)             the items in the order of a stable argsort of their values: the
                           derivative follows the permutation
    reversed(xs)           xs[::-1]
    divmod(a, b)           (a // b, a % b)
    math.prod(xs, start)   the loop of sum with `*`
    math.dist(p, q)        math.sqrt(sum((a - b) ** 2 for a, b in zip(p, q)))
    math.log(x, base)      math.log(x) / math.log(base)  (as CPython; the base was ignored before)
    math.degrees(x)        x * (180.0 / math.pi)  (math.radians alike; math.ldexp(x, i): x * 2.0 ** i)

Only calls on differentiated values come here (the normalizer keeps the others as written).
Each rewrite gives the value Python gives, added or multiplied in Python's order.
"""

import builtins
import math

from ..ir import syntax
from ..ir.naming import GENERATED_LOCALS, unused_name
from ..ir.nodes import Primal
from ..ir.syntax import nodes as n
from ..templates import quote
from . import star_args
from ..frontend.desugar import located


def rewrite(normalizer, obj, call, out, s):
    """The node holding the value of a builtin's call written out (its statements emitted into
    `out`), or None for a call that is no builtin of this module."""
    rule = _RULES.get(obj) if _hashable(obj) else None
    if rule is None:
        return None
    if any(isinstance(a, n.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None  # (the normalizer refuses `*args` in a call)
    return rule(_Writer(normalizer, call, out, s))


def _hashable(obj):
    try:
        hash(obj)
        return True
    except TypeError:
        return False


class _Writer:
    """Emits the statements of one rewrite at the line of the call's statement."""

    def __init__(self, normalizer, call, out, s):
        self.norm, self.call, self.out, self.s = normalizer, call, out, s
        self.name = syntax.unparse(call.func)

    def fail(self, what, fix):
        return self.norm.fail(self.s, what, fix)

    def arguments(self, *names, required=1):
        """The call's arguments by Python's parameter names (positional or keyword)."""
        args, keywords = list(self.call.args), {k.arg: k.value for k in self.call.keywords}
        unknown = set(keywords) - set(names)
        if unknown or len(args) > len(names) or len(args) + len(keywords) < required:
            raise self.fail(f"`{self.name}(...)` with the keyword `{sorted(unknown)[0]}` on differentiated values "
                            "cannot be differentiated" if unknown else f"`{self.name}` takes {required} to "
                            f"{len(names)} arguments", "Write the loop it stands for out in the function.")
        values = dict(zip(names, args))
        values.update(keywords)
        return [values.get(k) for k in names]

    def fresh(self, hint, varied=False):
        """A new local name (`_sum`, `_sum_2`, ...); `varied` for a result, differentiated
        when any item is (an item's or index's name is varied when what it reads is)."""
        name = unused_name(hint, self.norm.used | GENERATED_LOCALS)
        self.norm.used.add(name)
        self.norm.temps.add(name)
        self.norm.locals.add(name)
        if varied:
            self.norm.varied.add(name)
        return name

    def emit(self, source, **subs):
        for st in quote.stmts(source, **subs):
            self.norm.stmt(located(st, self.s), self.out)

    def items(self, seq):
        """A name holding the items of `seq` (a list built by a loop for a generator or
        comprehension), or `seq` itself when it is a name."""
        if isinstance(seq, n.Name):
            return seq
        if isinstance(seq, (n.GeneratorExp, n.ListComp)):
            items = self.fresh("_items", varied=True)
            self.norm.list_names().add(items)  # (a list: `+` concatenates)
            self.emit("ITEMS = []", ITEMS=items)
            self.loop(seq, "ITEMS = ITEMS + [ITEM]", ITEMS=items)
            return syntax.name(items)
        items = self.fresh("_items", varied=True)
        self.emit("ITEMS = SEQ", ITEMS=items, SEQ=seq)
        return syntax.name(items)

    def loop(self, comprehension, body, **subs):
        """The loops of a generator or comprehension, `body` run for each item (ITEM) it gives;
        the generator's variables get names of their own (Python scopes them to it)."""
        renames = {}
        for gen in comprehension.generators:
            if gen.is_async:
                raise self.fail("an async comprehension cannot be differentiated", "Use a for loop.")
            for name in sorted(syntax.store_names(gen.target)):
                renames[name] = self.fresh("_" + name)
        if any(isinstance(x, (n.GeneratorExp, n.ListComp, n.SetComp, n.DictComp, n.Lambda, n.NamedExpr))
               for x in syntax.walk(comprehension) if x is not comprehension):
            raise self.fail(f"a nested comprehension, lambda or `:=` in the argument of `{self.name}` over "
                            "differentiated values cannot be differentiated",
                            "Write the loops out in the function.")
        renamed = _renamed(comprehension, renames)
        stmts = quote.stmts(body, ITEM=renamed.elt, **subs)
        for gen in reversed(renamed.generators):
            for test in reversed(gen.ifs):
                stmts = [n.If(test=test, body=stmts, orelse=[])]
            stmts = [n.For(target=gen.target, iter=gen.iter, body=stmts, orelse=[], type_comment=None)]
        for st in stmts:
            self.norm.stmt(located(st, self.s), self.out)


def _renamed(node, renames):
    """A copy of the comprehension `node` with the names in `renames` renamed (loads and
    stores), except in the first generator's iterable: Python evaluates it in the enclosing
    scope (`sum(v for v in v)` iterates over the outer `v`)."""
    node = syntax.copy(node)
    outer = node.generators[0].iter
    inner = [x for x in syntax.walk(node) if x is not outer]
    skip = {id(x) for x in syntax.walk(outer)}
    for x in inner:
        if isinstance(x, n.Name) and x.id in renames and id(x) not in skip:
            x.id = renames[x.id]
    return node


# -- the rewrites ------------------------------------------------------------------------------

def _fold(w, seq, start, op, hint):
    """start OP item OP item ..., left to right (sum, math.prod)."""
    if isinstance(seq, (n.List, n.Tuple)) and not any(isinstance(e, n.Starred) for e in seq.elts):
        value = start
        for e in seq.elts:
            value = n.BinOp(left=value, op=op(), right=e)
        return value
    symbol = {n.Add: "+", n.Mult: "*"}[op]
    acc = w.fresh(hint, varied=True)
    w.emit("ACC = START", ACC=acc, START=start)
    if isinstance(seq, (n.GeneratorExp, n.ListComp)):
        w.loop(seq, f"ACC = ACC {symbol} ITEM", ACC=acc)
    else:
        w.emit(f"for ITEM in SEQ:\n    ACC = ACC {symbol} ITEM", ITEM=w.fresh("_item"), SEQ=seq, ACC=acc)
    return syntax.name(acc)


def _sum(w):
    seq, start = w.arguments("iterable", "start")
    return _fold(w, seq, start if start is not None else syntax.constant(0), n.Add, "_sum")


def _prod(w):
    seq, start = w.arguments("iterable", "start")
    return _fold(w, seq, start if start is not None else syntax.constant(1), n.Mult, "_prod")


def _extreme(compare, hint):
    def rule(w):
        if any(k.arg in ("key", "default") for k in w.call.keywords):
            raise w.fail(f"`{w.name}(..., key=..., default=...)` on differentiated values cannot be differentiated",
                         "Write the loop that finds it out in the function.")
        if w.call.keywords or not w.call.args:
            raise w.fail(f"`{w.name}` takes an iterable or several arguments", f"Call it as {w.name}(xs).")
        if len(w.call.args) == 2:
            return None  # max(a, b): the registry's maximum (minimum)
        seq = w.call.args[0] if len(w.call.args) == 1 else n.List(elts=list(w.call.args), ctx=n.Load())
        items = w.items(seq)
        best, k = w.fresh(hint, varied=True), w.fresh("_pos")
        w.emit(f"BEST = ITEMS[0]\nfor K in range(1, len(ITEMS)):\n    if ITEMS[K] {compare} BEST:\n"
               "        BEST = ITEMS[K]", BEST=best, ITEMS=items, K=k)
        return syntax.name(best)
    return rule


def _sorted(w):
    seq, key, reverse = w.arguments("iterable", "key", "reverse")
    if key is not None and not (syntax.is_constant(key) and key.value is None):
        raise w.fail("`sorted(..., key=...)` on differentiated values cannot be differentiated",
                     "Sort by an index: `order = np.argsort(keys, kind='stable')`, then `[xs[i] for i in order]` "
                     "as a loop.")
    items = w.items(seq)
    order, result, k = w.fresh("_order"), w.fresh("_sorted", varied=True), w.fresh("_pos")
    reverse = reverse if reverse is not None else syntax.constant(False)
    line, text = w.norm.loc(w.s)  # (the order is an inactive list of ints: the values are compared, not used)
    w.out.append(Primal(located(quote.stmt("ORDER = sorted_order(ITEMS, REVERSE)", ORDER=order, ITEMS=items,
                                           REVERSE=reverse), w.s), line, text))
    w.norm.list_names().add(result)
    w.emit("RESULT = []\nfor K in ORDER:\n    RESULT = RESULT + [ITEMS[K]]", ORDER=order, ITEMS=items, RESULT=result, K=k)
    return syntax.name(result)


def _reversed(w):
    (seq,) = w.arguments("sequence")
    return quote.expr("SEQ[::-1]", SEQ=seq)


def _divmod(w):
    a, b = w.arguments("a", "b", required=2)
    return n.Tuple(elts=[n.BinOp(left=a, op=n.FloorDiv(), right=b),
                         n.BinOp(left=syntax.copy(a), op=n.Mod(), right=syntax.copy(b))], ctx=n.Load())


def _dist(w):
    p, q = w.arguments("p", "q", required=2)
    return quote.expr("math.sqrt(sum((A - B) ** 2 for A, B in zip(P, Q)))",
                      A=w.fresh("_p"), B=w.fresh("_q"), P=p, Q=q)


def _log(w):
    """math.log(x, base) as CPython computes it: log(x) / log(base)."""
    x, base = w.arguments("x", "base")
    if base is None:
        return None  # (the registry's log)
    return quote.expr("math.log(X) / math.log(BASE)", X=x, BASE=base)


def _degrees(w):
    (x,) = w.arguments("x")
    return quote.expr("X * (180.0 / math.pi)", X=x)  # (CPython's constant: 180 / pi, rounded once)


def _radians(w):
    (x,) = w.arguments("x")
    return quote.expr("X * (math.pi / 180.0)", X=x)


def _ldexp(w):
    x, i = w.arguments("x", "i", required=2)
    if w.norm.expr_varied(i):
        raise w.fail("the exponent of `math.ldexp` is an int: it cannot be differentiated",
                     "Differentiate the mantissa only, or write x * 2.0 ** e.")
    return quote.expr("X * 2.0 ** I", X=x, I=i)


def _fsum(w):
    raise w.fail("`math.fsum` on differentiated values cannot be differentiated (its exactly rounded value "
                 "is no sum the transformer writes)", "Use `sum(xs)` (or np.sum), which adds in order.")


_RULES = {builtins.sum: _sum, builtins.max: _extreme(">", "_max"), builtins.min: _extreme("<", "_min"),
          builtins.sorted: _sorted, builtins.reversed: _reversed, builtins.divmod: _divmod,
          math.prod: _prod, math.dist: _dist, math.fsum: _fsum, math.log: _log, math.degrees: _degrees,
          math.radians: _radians, math.ldexp: _ldexp}


# -- loops over zip / enumerate / reversed, nested ----------------------------------------------

_ITERATORS = (builtins.zip, builtins.enumerate, builtins.reversed)


def flat_loop(normalizer, s, out):
    """`for i, (a, b) in enumerate(zip(x, y), 1)` as `for i, a, b in zip(range(1, 1 + len(x)), x, y)`:
    one zip of sequences, which the normalizer indexes (zip stops at the shortest, as Python's).
    None for a loop it already reads (a zip or enumerate of sequences, without `start`)."""
    spread = None
    if isinstance(s.iter, n.Call):  # zip(*rows), zip(*unpack(params))
        held = star_args.starred_results(normalizer, s.iter, out, s)
        spread = star_args.spread(normalizer, held) or (held if held is not s.iter else None)
    if spread is not None:
        s = _loop_like(s, s.target, spread)
    if not _needs_flat(normalizer, s.iter):
        return s if spread is not None else None
    w = _Writer(normalizer, s.iter, out, s)
    pairs = _flatten(w, s.target, s.iter)
    if pairs is None:
        return s if spread is not None else None
    targets, seqs = zip(*pairs)
    it = seqs[0] if len(seqs) == 1 else n.Call(func=syntax.name("zip"), args=list(seqs), keywords=[])
    target = targets[0] if len(targets) == 1 else n.Tuple(elts=list(targets), ctx=n.Store())
    return _loop_like(s, target, it)


def _loop_like(s, target, it):
    """The loop `s` over `it` with `target`."""
    loop = n.For(target=target, iter=it, body=s.body, orelse=[], type_comment=None)
    for attr in ("lineno", "col_offset", "_dualtape_break"):
        if hasattr(s, attr):
            setattr(loop, attr, getattr(s, attr))
    return loop


def _call_of(normalizer, node, fns):
    return isinstance(node, n.Call) and normalizer.resolve(node.func) in fns


def _needs_flat(normalizer, it):
    if not _call_of(normalizer, it, _ITERATORS):
        return False
    if normalizer.resolve(it.func) is builtins.reversed and it.args and _call_of(normalizer, it.args[0], (builtins.range,)):
        return False  # (reversed(range(n)): the normalizer reads it as it always has)
    if normalizer.resolve(it.func) is builtins.reversed or len(it.args) > 1 or it.keywords:
        return True  # (enumerate's start)
    return any(_call_of(normalizer, a, _ITERATORS) for a in it.args)


def _flatten(w, target, it):
    """[(target, sequence)] whose zip the loop `for target in it` runs, or None."""
    if any(isinstance(a, n.Starred) for a in getattr(it, "args", [])) or any(
            k.arg is None for k in getattr(it, "keywords", [])):
        return None
    fn = w.norm.resolve(it.func) if isinstance(it, n.Call) else None
    if fn is builtins.zip and not it.keywords and isinstance(target, (n.Tuple, n.List)) \
            and len(target.elts) == len(it.args):
        pairs = []
        for t, a in zip(target.elts, it.args):
            inner = _flatten(w, t, a)
            if inner is None:
                return None
            pairs += inner
        return pairs
    if fn is builtins.enumerate and isinstance(target, (n.Tuple, n.List)) and len(target.elts) == 2:
        seq, start = w.arguments("iterable", "start") if it is w.call else _Writer(w.norm, it, w.out, w.s).arguments(
            "iterable", "start")
        inner = _flatten(w, target.elts[1], seq)
        if inner is None:
            return None
        start = start if start is not None else syntax.constant(0)
        first = inner[0][1]
        index = quote.expr("range(START, START + len(SEQ))", START=start, SEQ=syntax.copy(first))
        return [(target.elts[0], index)] + inner
    if fn is builtins.reversed and len(it.args) == 1 and not it.keywords:
        return _flatten(w, target, quote.expr("SEQ[::-1]", SEQ=_named(w, it.args[0])))
    return [(target, _named(w, it))]


def _named(w, seq):
    """`seq` as a name (bound before the loop where it is an expression: read once)."""
    if isinstance(seq, n.Name) or _call_of(w.norm, seq, (builtins.range,)) or (
            isinstance(seq, n.Subscript) and isinstance(seq.value, n.Name)):
        return seq
    items = w.fresh("_items", varied=w.norm.expr_varied(seq))
    w.emit("ITEMS = SEQ", ITEMS=items, SEQ=seq)
    return syntax.name(items)
