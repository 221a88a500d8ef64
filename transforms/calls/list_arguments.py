"""A call of a user function that changes a list argument in place, read as a call that
returns the changed list.

`push(acc, v)` with `def push(acc, v): acc.append(v * 1.0)` changes the caller's list: the
transformer differentiates what functions return, so it would miss the change. Where the
argument is a name of the caller that holds a list the caller made and that nothing else
holds (`owned_list`), the call is read as

    _r = push_lists(acc, v)     # push's version: works on its own copy, returns it
    acc = _r[1]                 # the caller's name rebound to the changed list
    ...  _r[0] ...              # the call's value

where `push_lists` is `push` taking `acc_given` with `acc = acc_given[:]` (a copy) first and `return (value, acc)` for each
return (a lifted function: frontend/function_values.lift). Its list is one it made, so its
`append` / `pop` are written as list operations (frontend/list_methods.py). Rebinding gives
the values the change in place gives only while no other name holds the list: anything else
keeps the normalizer's refusal (a parameter's list, an alias, a list stored in a container,
a version whose value would hold the list)."""

import builtins
import inspect

from ..frontend.desugar import located, stmt_at
from ..frontend.mutations import mutated_parameters
from ..ir import syntax
from ..ir.naming import unused_name
from ..ir.syntax import nodes as n
from ..templates import quote
from .versions import lifted_version, versions_of

_FRESH = (n.List, n.ListComp)


def returning_call(norm, call, obj, out, s, value=True, target=None):
    """The value of `call` (an atom, into `target` if given; True where `value` is False) read
    as the module docstring says, its statements emitted into `out`; None where that does not
    apply (the caller refuses the call)."""
    if any(isinstance(a, n.Starred) for a in call.args) or call.keywords:
        return None
    if not any(norm.expr_varied(a) for a in call.args):  # (not differentiated: it runs as written)
        return None
    changed = mutated_parameters(obj)
    if not changed or any(k.startswith("global:") for k in changed):
        return None
    try:
        sig = inspect.signature(obj)
        bound = sig.bind(*call.args)
    except (TypeError, ValueError):
        return None
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values()):
        return None
    params = tuple(p for p in sig.parameters if p in changed)
    if not params or any(p not in bound.arguments for p in params):
        return None
    if any(not changed[p].startswith((f"{p}.", f"{p}[")) for p in params):
        return None  # (changed through an alias or another call: the version would not see it)
    holders = [bound.arguments[p] for p in params]
    if not all(isinstance(h, n.Name) and owned_list(norm, h.id) for h in holders) \
            or len({h.id for h in holders}) != len(holders):
        return None
    if _shared_with_another_argument(call.args, {h.id for h in holders}):
        return None
    version = _version(obj, params)
    if version is None:
        return None
    name = register(norm, version)
    args = [bound.arguments.get(p, None) for p in sig.parameters]
    if any(a is None for a in args):  # a default left out: pass it as Python would
        defaults = {p: v.default for p, v in sig.parameters.items()}
        try:
            args = [a if a is not None else syntax.literal(defaults[p]) for a, p in zip(args, sig.parameters)]
        except ValueError:  # (a default no literal spells: the call stays refused)
            return None
    held = norm.expr(n.Call(func=syntax.name(name), args=args, keywords=[]), out, s)
    for k, h in enumerate(holders, 1):
        norm.expr(quote.expr("H[K]", H=held, K=k), out, s, target=h.id)
    return norm.expr(quote.expr("H[0]", H=held), out, s, target=target) if value else True


def _shared_with_another_argument(args, names):
    """Whether a list in `names` also reaches the function another way than as its own argument
    (`push(acc, acc)`, `push(acc, [acc])`): the version's copy would not be what that one sees.
    Reading an item (`push(acc, acc[-1] * 2.0)`) happens before the call and is fine."""
    for a in args:
        if isinstance(a, n.Name) and a.id in names:
            continue
        parents = {id(child): node for node in syntax.walk(a) for child in syntax.iter_child_nodes(node)}
        for node in syntax.walk(a):
            if isinstance(node, n.Name) and node.id in names:
                parent = parents.get(id(node))
                if not (isinstance(parent, n.Subscript) and parent.value is node):
                    return True
    seen = [a.id for a in args if isinstance(a, n.Name) and a.id in names]
    return len(seen) != len(set(seen))


def owned_list(norm, name):
    """Whether the caller's `name` holds a list it made that no other name holds: not a
    parameter, bound only to list displays, comprehensions, `list(...)` and sums of lists,
    and read only by item, slice, loop, operand or as a call's argument (no alias, no container
    holding it, no attribute)."""
    if name in norm.params:
        return False
    parents = {}
    for node in syntax.walk(norm.info.node):
        for child in syntax.iter_child_nodes(node):
            parents[id(child)] = node
    for node in syntax.walk(norm.info.node):
        if not (isinstance(node, n.Name) and node.id == name):
            continue
        parent = parents.get(id(node))
        if isinstance(node.ctx, n.Store):
            if not (isinstance(parent, n.Assign) and parent.targets == [node] and _makes_list(norm, parent.value)):
                return False
        elif isinstance(node.ctx, n.Load):
            if isinstance(parent, (n.Call, n.keyword)) and getattr(parent, "func", None) is not node:
                continue
            if isinstance(parent, n.Subscript) and parent.value is node:
                continue
            if isinstance(parent, (n.BinOp, n.For, n.comprehension, n.Compare)) \
                    and getattr(parent, "target", None) is not node:
                continue
            return False
        else:
            return False
    return True


def _makes_list(norm, value):
    if isinstance(value, _FRESH):
        return True
    if isinstance(value, n.Call) and norm.resolve(value.func) is builtins.list:
        return True
    return isinstance(value, n.BinOp) and isinstance(value.op, n.Add) and (
        isinstance(value.left, _FRESH) or isinstance(value.right, _FRESH))


def _version(fn, params):
    """`fn` working on its own copies of the lists `params` and returning (value, *params),
    or None when its returns would hold one of them (an alias the caller could not follow)."""
    versions = versions_of(fn, "lists")
    if params not in versions:
        versions[params] = lifted_version(fn, "lists", lambda tree: _returning_copies(tree, params, fn.__globals__))
    return versions[params]


def _returning_copies(tree, params, namespace):
    """`tree` rewritten to copy the lists `params` first and return them after its value; False
    where a return would hold one of them, or it defines functions or yields."""
    returns = [x for x in syntax.walk(tree) if isinstance(x, n.Return)]
    if any(x.value is not None and _may_hold(x.value, set(params), namespace) for x in returns) or \
            any(isinstance(x, (n.FunctionDef, n.Lambda, n.Yield, n.YieldFrom)) and x is not tree
                for x in syntax.walk(tree)):
        return False
    if not isinstance(tree.body[-1], n.Return):  # (falling off the end returns None: say so)
        tree.body.append(located(n.Return(value=None), tree.body[-1]))
    value_name = unused_name("value", syntax.store_names(tree) | syntax.load_names(tree) | set(params))
    _returning_lists(tree, params, value_name)
    first_body = tree.body[0]
    doc = 1 if isinstance(first_body, n.Expr) and syntax.is_constant(first_body.value) else 0
    taken = syntax.store_names(tree) | syntax.load_names(tree) | {a.id for a in tree.args.args}
    given = {p: unused_name(f"{p}_given", taken) for p in params}  # (the list made here is not a parameter)
    for a in tree.args.posonlyargs + tree.args.args + tree.args.kwonlyargs:
        if a.id in given:
            a.id = given[a.id]
    tree.body[doc:doc] = [stmt_at("P = GIVEN[:]", first_body, P=p, GIVEN=given[p]) for p in params]
    return True


def _returning_lists(node, params, value_name):
    """Each `return v` in `node`'s statement lists as `value = v` then `return (value, *params)`:
    the value first (`return acc.pop()`: the pop happens before the list is returned)."""
    for field in ("body", "orelse", "finalbody"):
        body = getattr(node, field, None)
        if not isinstance(body, list):
            continue
        new = []
        for st in body:
            if isinstance(st, n.Return):
                lists = [syntax.name(p) for p in params]
                if st.value is None:
                    ret = quote.stmt("return VALUE", VALUE=n.Tuple(elts=[syntax.constant(None)] + lists, ctx=n.Load()))
                    new.append(located(ret, st))
                else:
                    new.append(stmt_at("V = E", st, V=value_name, E=st.value))
                    ret = quote.stmt("return VALUE", VALUE=n.Tuple(elts=[syntax.name(value_name)] + lists, ctx=n.Load()))
                    new.append(located(ret, st))
                continue
            if not isinstance(st, (n.FunctionDef, n.ClassDef)):
                _returning_lists(st, params, value_name)
            new.append(st)
        body[:] = new
    for handler in getattr(node, "handlers", ()):
        _returning_lists(handler, params, value_name)


def _may_hold(value, params, namespace):
    """Whether the returned `value` may be (or hold) one of the lists `params` itself: any use
    of their names but a method's receiver (`acc.pop()`), an item or slice read, an operand, an
    argument of a builtin or NumPy function (`len(acc)`, `np.stack(acc)`)."""
    parents = {}
    for node in syntax.walk(value):
        for child in syntax.iter_child_nodes(node):
            parents[id(child)] = node
    for node in syntax.walk(value):
        if isinstance(node, n.Name) and node.id in params:
            parent = parents.get(id(node))
            if isinstance(parent, n.Call) and node in parent.args and _reads_only(parent.func, namespace):
                continue
            if not (isinstance(parent, (n.Attribute, n.Subscript, n.BinOp, n.Compare)) and parent is not value):
                return True
    return False


def _reads_only(func, namespace):
    """Whether the called `func` (a name or `np.name`) is a builtin or NumPy function, which
    returns a new value rather than the list it is given."""
    if isinstance(func, n.Name):
        obj = namespace.get(func.id, getattr(builtins, func.id, None))
    elif isinstance(func, n.Attribute) and isinstance(func.value, n.Name):
        obj = getattr(namespace.get(func.value.id), func.attr, None)
    else:
        return False
    return obj in (len, sum, min, max, sorted, tuple) or (getattr(obj, "__module__", None) or "").startswith("numpy")


def register(norm, version):
    """The name the caller's generated code calls `version` by (in the caller's namespace)."""
    if norm.info.namespace.get(version.__name__) is version:
        return version.__name__
    name = unused_name(version.__name__, set(norm.info.namespace) | norm.used)
    norm.info.namespace[name] = version
    norm.used.add(name)
    return name
