"""`*args` and `**kwargs`, where the source says how many values and which keywords they hold.

At a call: `g(*[a, b])`, `g(*(a, b))`, `g(*xs)` of a name only ever bound to a list or tuple
display of L items, and `g(**{"k": v})` are the call `g(a, b)`, `g(xs[0], ..., xs[L-1])`,
`g(k=v)` (`spread`); so are `zip(*rows)` and `np.stack(...)`-style calls.

A user function with `*args` / `**kwargs` called with known positional and keyword counts
gets a version per call shape (`specialized`): for `def g(a, *args, **kw)` called as
`g(x, y, z, scale=s)` it is read as

    def g(a, args_0, args_1, *, scale):
        args = (args_0, args_1)
        ...                 # kw["scale"] read as `scale`; h(**kw) as h(scale=scale)

`args` is the tuple Python makes; `kw` can only be read by a literal key, passed on with `**`
or measured with len (any other use is refused: the transformer holds no dicts).
"""

import inspect
import types

from ..ir import syntax
from ..ir.syntax import nodes as n
from ..templates import quote
from . import opmap
from .opmap import is_user_function
from ..frontend.parse import source_tree
from .versions import versions_of

# -- call sites ------------------------------------------------------------------------------


def spread(normalizer, call):
    """`call` with each `*seq` / `**dict` whose items the source shows written out, or None
    when it has none (or one whose items it cannot tell: the caller refuses it)."""
    if not (any(isinstance(a, n.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)):
        return _sequence_written_out(normalizer, call)
    args = []
    for a in call.args:
        if not isinstance(a, n.Starred):
            args.append(a)
            continue
        items = _items(normalizer, a.value)
        if items is None:
            return None
        args += items
    keywords = []
    for k in call.keywords:
        if k.arg is not None:
            keywords.append(k)
            continue
        d = k.value
        if not (isinstance(d, n.Dict) and all(syntax.is_constant(key) and isinstance(key.value, str)
                                              and key.value.isidentifier() for key in d.keys)):
            return None
        keywords += [n.keyword(arg=key.value, value=v) for key, v in zip(d.keys, d.values)]
    names = [k.arg for k in keywords]
    if len(set(names)) != len(names):
        return None  # (Python raises: a keyword given twice)
    return n.Call(func=call.func, args=args, keywords=keywords)


def _sequence_written_out(normalizer, call):
    """np.stack(rows) (np.concatenate, np.hstack, ...) of a name only ever bound to a list display
    of L items as np.stack([rows[0], ..., rows[L-1]]), and of a sum of such names and displays
    (`np.hstack(args + (ones,))`) likewise; None for any other call."""
    seq = call.args[0] if call.args else None
    if not (isinstance(seq, (n.Name, n.BinOp)) and normalizer.expr_varied(seq)):
        return None
    if _written_into(normalizer, seq):  # (`ys[1] = c`: the list op stacks its items' tangents by shape)
        return None
    obj = normalizer.resolve(call.func)
    spec = opmap.lookup(obj) if obj is not None else None
    items = _items(normalizer, seq)
    if spec is None or not spec.prim.variadic or spec.wrapper is None or items is None:
        return None
    return n.Call(func=call.func, args=[n.List(elts=items, ctx=n.Load())] + call.args[1:], keywords=call.keywords)


def _written_into(normalizer, seq):
    """Whether a name in `seq` has items assigned (`ys[k] = v`) anywhere in the function."""
    names = {x.id for x in syntax.walk(seq) if isinstance(x, n.Name)}
    for node in syntax.walk(normalizer.info.node):
        if isinstance(node, (n.Assign, n.AugAssign)):
            for t in node.targets if isinstance(node, n.Assign) else [node.target]:
                if isinstance(t, n.Subscript) and isinstance(t.value, n.Name) and t.value.id in names:
                    return True
    return False


def _items(normalizer, seq):
    if isinstance(seq, (n.List, n.Tuple)) and not any(isinstance(e, n.Starred) for e in seq.elts):
        return list(seq.elts)
    if isinstance(seq, n.BinOp) and isinstance(seq.op, n.Add):  # `args + (ones,)`: both sides known
        left, right = _items(normalizer, seq.left), _items(normalizer, seq.right)
        return None if left is None or right is None else left + right
    if isinstance(seq, n.Name) and seq.id in normalizer.fixed_lists():
        return [quote.expr("E[K]", E=seq.id, K=k) for k in range(normalizer.fixed_lists()[seq.id])]
    return None


def starred_results(normalizer, call, out, s):
    """`call` with each `*g(...)` of a user function g whose every `return` is a tuple display
    of the same length L evaluated once, into a name (`_g = g(...)`), and spread as
    `*(_g[0], ..., _g[L-1])`; `call` itself when it has none (`zip(*unpack(params))`)."""
    args = list(call.args)
    for i, a in enumerate(args):
        if isinstance(a, n.Starred) and isinstance(a.value, n.Call):
            length = returned_length(normalizer.resolve(a.value.func))
            if length is not None:
                held = normalizer.expr(a.value, out, s)
                args[i] = n.Starred(value=n.Tuple(elts=[quote.expr("E[K]", E=held, K=k) for k in range(length)],
                                                  ctx=n.Load()), ctx=n.Load())
    return call if args == call.args else n.Call(func=call.func, args=args, keywords=call.keywords)


def returned_length(fn):
    """L when every `return` of the user function `fn` returns a tuple display of L items
    (no starred item), else None."""
    if not is_user_function(fn) or has_star_parameters(fn):
        return None
    try:
        tree = source_tree(fn).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return None
    returns, todo = [], list(tree.body)
    while todo:  # (the function's own returns: not those of functions or lambdas it defines)
        node = todo.pop()
        if isinstance(node, (n.FunctionDef, n.AsyncFunctionDef, n.Lambda, n.ClassDef)):
            continue
        if isinstance(node, n.Return):
            returns.append(node.value)
        todo.extend(syntax.iter_child_nodes(node))
    lengths = {len(v.elts) if isinstance(v, n.Tuple) and not any(isinstance(e, n.Starred) for e in v.elts)
               else None for v in returns}
    return lengths.pop() if len(lengths) == 1 else None


# -- user functions with *args / **kwargs ------------------------------------------------------

def has_star_parameters(fn):
    code = getattr(fn, "__code__", None)
    return code is not None and bool(code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS))


def specialized(fn, call):
    """The version of the user function `fn` (with *args or **kwargs) for the call `call` (no
    starred arguments), or None when fn has none or the call does not bind."""
    if not (is_user_function(fn) and has_star_parameters(fn)):
        return None
    if any(isinstance(a, n.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    sig = inspect.signature(fn)
    try:
        bound = sig.bind(*range(len(call.args)), **{k.arg: None for k in call.keywords})
    except TypeError:
        return None
    params = list(sig.parameters.values())
    var = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)
    kw = next((p.name for p in params if p.kind == p.VAR_KEYWORD), None)
    extra = len(bound.arguments.get(var, ())) if var else 0
    keys = tuple(bound.arguments.get(kw, {})) if kw else ()
    shape = (extra, keys)
    versions = versions_of(fn, "star")
    if shape not in versions:
        versions[shape] = _version(fn, sig, var, kw, extra, keys)
    return versions[shape]


def _version(fn, sig, var, kw, extra, keys):
    """A copy of `fn` whose signature names each value of the call shape; the front end reads
    its source through `specialize` (the copy's `__dualtape_star__`)."""
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__, copy.__module__ = fn.__qualname__, fn.__module__
    params = []
    P = inspect.Parameter
    names = set(sig.parameters) | set(fn.__code__.co_varnames) | set(fn.__code__.co_names)
    var_names = [_unused(f"{var}_{i}", names) for i in range(extra)] if var else []
    for p in sig.parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            params += [P(name, P.POSITIONAL_OR_KEYWORD) for name in var_names]
        elif p.kind == p.VAR_KEYWORD:
            params += [P(key, P.KEYWORD_ONLY) for key in keys]
        elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and extra:
            params.append(p.replace(kind=P.POSITIONAL_OR_KEYWORD, default=P.empty))  # (all passed)
        else:
            params.append(p)
    copy.__signature__ = sig.replace(parameters=params)
    copy.__dualtape_star__ = (var, var_names, kw, keys, fn)
    return copy


def _unused(name, taken):
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def specialize(info, fail):
    """Rewrite the parsed FunctionDef of a version made by `specialized` (info.fn) into the
    function of its call shape (see the module docstring); nothing for any other function.
    `fail(node, what, fix)` makes the refusal of a use of **kwargs it cannot follow."""
    star = getattr(info.fn, "__dualtape_star__", None)
    if star is None:
        return
    var, var_names, kw, keys, _ = star
    node = info.node
    args = node.args
    if var_names:  # every positional parameter is passed: no defaults
        args.args = args.posonlyargs + args.args
        args.posonlyargs, args.defaults = [], []
    args.args = args.args + [n.Name(id=name, ctx=n.Param(), annotation=None, type_comment=None) for name in var_names]
    args.vararg = None
    stored = syntax.store_names(node) | {a.id for a in args.args + args.kwonlyargs}
    clash = sorted(set(keys) & stored)
    if clash:
        raise fail(node, f"the keyword `{clash[0]}` passed into `**{kw}` is also a name in {info.name}",
                   f"Read it from `{kw}` under another name, or pass another keyword.")
    args.kwonlyargs = args.kwonlyargs + [n.Name(id=key, ctx=n.Param(), annotation=None, type_comment=None)
                                         for key in keys]
    args.kw_defaults = args.kw_defaults + [None] * len(keys)
    args.kwarg = None
    if kw:
        _read_keywords(node, kw, keys, fail)
    prefix = []
    if var:
        value = n.Tuple(elts=[syntax.name(name) for name in var_names], ctx=n.Load())
        prefix.append(quote.stmt("ARGS = VALUE", ARGS=var, VALUE=value))
    first = node.body[0] if node.body else node
    doc = 1 if node.body and isinstance(first, n.Expr) and syntax.is_constant(first.value) else 0
    for st in prefix:
        for sub in syntax.walk(st):
            if isinstance(sub, (n.stmt, n.expr)):
                sub.lineno, sub.col_offset = getattr(first, "lineno", 1), 0
    node.body[doc:doc] = prefix


def _read_keywords(node, kw, keys, fail):
    """kw["k"] -> k, h(**kw) -> h(k=k, ...), len(kw) -> the count; any other read of kw refused."""
    parents = {}
    for parent in syntax.walk(node):
        for child in syntax.iter_child_nodes(parent):
            parents[id(child)] = parent
    for x in list(syntax.walk(node)):
        if not (isinstance(x, n.Name) and x.id == kw):
            continue
        parent = parents.get(id(x))
        if isinstance(x.ctx, n.Store):
            raise fail(x, f"an assignment to `{kw}` (the **kwargs dict) is not supported",
                       "Assign to another name.")
        if isinstance(parent, n.Subscript) and parent.value is x and syntax.is_constant(parent.slice) \
                and parent.slice.value in keys and isinstance(parent.ctx, n.Load):
            _replace(parents, parent, syntax.name(parent.slice.value))
        elif isinstance(parent, n.keyword) and parent.arg is None:
            call = parents[id(parent)]
            at = call.keywords.index(parent)
            call.keywords[at:at + 1] = [n.keyword(arg=key, value=syntax.name(key)) for key in keys]
        elif isinstance(parent, n.Call) and parent.args == [x] and isinstance(parent.func, n.Name) \
                and parent.func.id == "len":
            _replace(parents, parent, syntax.constant(len(keys)))
        else:
            raise fail(x, f"this use of `{kw}` (the **kwargs dict) cannot be followed by the transformer: it "
                       f"holds {', '.join(keys) or 'no keywords'} here",
                       f"Read it by a literal key (`{kw}['name']`), pass it on with `**{kw}`, or name the "
                       "keyword parameters.")


def _replace(parents, old, new):
    parent = parents[id(old)]
    for field in parent._fields:
        value = getattr(parent, field, None)
        if value is old:
            setattr(parent, field, new)
            return
        if isinstance(value, list) and any(v is old for v in value):
            value[[i for i, v in enumerate(value) if v is old][0]] = new
            return
