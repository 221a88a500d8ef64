"""Dicts over differentiated values.

Displays with constant keys, `{"a": x, "b": x * 2.0}`: a "pack" op (`container` "dict", `index`
its keys) like a list display. Its adjoint and tangent are dicts with the same keys (`d["a"]`
reads one; runtime.add_at, zeros_like, tangent_item take dicts), as for a dict argument.

Dicts whose keys are known only at run time: keys are never differentiated, so the dict is a
list of keys (plain Python) and a list of values (a list display or comprehension), packed by a
"dict" op, `d = dict(zip(_keys, _values))` (`index` the keys' name). A comprehension
`{K: V for ...}` is first written as `dict(zip((K for ...), [V for ...]))` (the values'
comprehension then becomes a loop: comprehensions.py); a display `{k: x}` has the keys' tuple and
the values' list. The op's adjoint is the list of the values' adjoints (runtime.dict_adjoint:
zeros for a key the dict's adjoint lacks), its tangent the dict of their tangents.

Loops over a dict, `for k, v in d.items()`, `for v in d.values()`, `for k in d.keys()` and
`for k in d` (d visibly a dict: read with a constant string key or a dict method, or with the
loop's own key; written `d.keys()` first), are loops over the list of its keys, `v = d[k]` read
with the key. Keys computed from differentiated values and `**` unpacking stay refused."""

import builtins
import contextlib
import contextvars

from ..ir import syntax
from ..ir.syntax import nodes as n
from ..ir.nodes import For, Op, Primal
from ..ir.naming import unused_name
from ..templates import quote
from .desugar import located, stmt_at

DICT_VIEWS = ("keys", "values", "items")  # a dict's methods a loop reads it by


def static_keys(e):
    """The constant keys of a dict display, or None if one is not a constant or repeats."""
    if not e.keys or any(k is None or not syntax.is_constant(k) or type(k.value) not in (str, int) for k in e.keys):
        return None
    keys = [k.value for k in e.keys]
    return keys if len(set(keys)) == len(keys) else None


def dict_display(norm, e, out, s, target):
    """The "pack" op of a dict display with constant keys; the "dict" op of one whose keys are
    known at run time only."""
    keys = static_keys(e)
    line, text = norm.loc(s)
    if keys is None:
        if any(k is None for k in e.keys):
            raise norm.fail(s, "`**` unpacking in a dict display over differentiated values is not supported",
                            "Write each key out (`{'a': d['a'], 'b': x}`), or build the dict with a comprehension.")
        return dict_of_pairs(norm, n.Tuple(elts=list(e.keys), ctx=n.Load()), n.List(elts=list(e.values), ctx=n.Load()),
                             out, s, target)
    atoms = [norm.expr(v, out, s) for v in e.values]
    name = target or norm.fresh()
    node = n.Dict(keys=[syntax.constant(k) for k in keys], values=[syntax.copy(a) for a in atoms])
    norm._emit(Op(target=name, kind="pack", expr=node, args=atoms, line=line, text=text, container="dict",
                  index=keys), out)
    return syntax.name(name)


def rewrite_dict_reads(fn_node, params, varied):
    """Loops over a dict display's keys, values or items and `d.get(key)`, where the name `d` is
    bound once, to a display with constant keys, and never changed: its keys are known, so
    `for k, v in d.items()` is `for k in ('a', 'b'): v = d[k]` (the normalizer indexes other
    loops by position), `d.get('a')` is `d['a']` (a missing key: the default). True if changed."""
    displays, changed_names, bindings = {}, set(params), set()
    for node in syntax.walk(fn_node):
        if isinstance(node, n.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], n.Name):
            name = node.targets[0].id
            if isinstance(node.value, n.Dict) and static_keys(node.value) is not None and name not in displays:
                displays[name] = static_keys(node.value)
                bindings.add(id(node.targets[0]))
                continue
        if isinstance(node, n.Name) and isinstance(node.ctx, (n.Store, n.Del)) and id(node) not in bindings:
            changed_names.add(node.id)
        if isinstance(node, n.Call) and isinstance(node.func, n.Attribute) and isinstance(node.func.value, n.Name) \
                and node.func.attr not in ("keys", "values", "items", "get"):
            changed_names.add(node.func.value.id)  # d.update(...), d.pop(...): keys may change
        if isinstance(node, (n.Subscript, n.Attribute)) and isinstance(node.ctx, (n.Store, n.Del)) \
                and isinstance(node.value, n.Name):
            changed_names.add(node.value.id)
        if isinstance(node, (n.FunctionDef, n.Lambda)) and node is not fn_node:
            changed_names |= {x.id for x in syntax.walk(node) if isinstance(x, n.Name)}
    keys = {d: k for d, k in displays.items() if d not in changed_names and varied(syntax.name(d))}
    if not keys:
        return False
    done, taken = False, {x.id for x in syntax.walk(fn_node) if isinstance(x, n.Name)}
    for node in syntax.walk(fn_node):
        if isinstance(node, n.For):
            done |= _loop_over_keys(node, keys, taken)
        done |= syntax.replace_children(node, lambda item: _get(item, keys))
    return done


def _method(node, keys, names):
    if (isinstance(node, n.Call) and isinstance(node.func, n.Attribute) and node.func.attr in names
            and isinstance(node.func.value, n.Name) and node.func.value.id in keys):
        return node.func.value.id, node.func.attr
    return None, None


def _keys_node(keys, like):
    node = n.Tuple(elts=[syntax.constant(k) for k in keys], ctx=n.Load())
    for sub in syntax.walk(node):
        sub.lineno, sub.col_offset = getattr(like, "lineno", 1), 0
    return node


def _loop_over_keys(loop, keys, taken):
    it = loop.iter
    if isinstance(it, n.Name) and it.id in keys:
        name, method = it.id, "keys"
    else:
        name, method = _method(it, keys, ("keys", "values", "items"))
        if name is None or it.args:
            return False
    if method == "keys":
        loop.iter = _keys_node(keys[name], loop)
        return True
    if method == "items":
        if not (isinstance(loop.target, n.Tuple) and len(loop.target.elts) == 2
                and isinstance(loop.target.elts[0], n.Name)):
            return False
        key, value = loop.target.elts
    else:
        key = syntax.name(unused_name("_key", taken), store=True)
        taken.add(key.id)
        value = loop.target
    read = stmt_at("VALUE = D[KEY]", loop, VALUE=value, D=syntax.name(name), KEY=syntax.name(key.id))
    loop.target, loop.iter = syntax.name(key.id, store=True), _keys_node(keys[name], loop)
    loop.body = [read] + list(loop.body)
    return True


def _get(node, keys):
    name, _ = _method(node, keys, ("get",))
    if name is None or not 1 <= len(node.args) <= 2 or node.keywords or not syntax.is_constant(node.args[0]):
        return None
    if node.args[0].value in keys[name]:
        new = n.Subscript(value=syntax.name(name), slice=syntax.copy(node.args[0]), ctx=n.Load())
    else:
        new = syntax.copy(node.args[1]) if len(node.args) == 2 else syntax.constant(None)
    for sub in syntax.walk(new):
        sub.lineno, sub.col_offset = getattr(node, "lineno", 1), 0
    return new


# -- dicts with keys known at run time --------------------------------------------------------------

def dict_of_pairs(norm, keys, values, out, s, target):
    """The "dict" op of `dict(zip(keys, values))`: the keys (a tuple or a generator, never
    differentiated) as a list first, then the values as a list and the op packing them."""
    line, text = norm.loc(s)
    if keys_varied(norm, keys):
        raise norm.fail(s, f"the keys `{syntax.unparse(keys)}` of a dict depend on differentiated values",
                        "Compute keys from constants, loop indices or another dict's keys; keep differentiated "
                        "values in the dict's values.")
    items = norm.expr(values, out, s)
    keys_name = norm.fresh("_keys")
    if isinstance(keys, n.GeneratorExp):  # a comprehension's: as many keys as values, or its iterable ran dry
        node = stmt_at("KEYS = key_list(ITEMS, len(VALUES))", s, KEYS=syntax.name(keys_name, store=True), ITEMS=keys,
                       VALUES=syntax.copy(items))
    else:
        node = stmt_at("KEYS = key_list(ITEMS)", s, KEYS=syntax.name(keys_name, store=True), ITEMS=keys)
    out.append(Primal(node, line, text))
    name = target or norm.fresh()
    expr = quote.expr("dict(zip(KEYS, VALUES))", KEYS=syntax.name(keys_name), VALUES=items)
    norm._emit(Op(target=name, kind="dict", expr=expr, args=[items], line=line, text=text,
                  index=syntax.name(keys_name)), out)
    return syntax.name(name)


def zip_pairs(resolve, e):
    """(keys, values) of `dict(zip(keys, values))`, or None for another call."""
    if len(e.args) != 1 or e.keywords or resolve(e.func) is not builtins.dict:
        return None
    pairs = e.args[0]
    if (isinstance(pairs, n.Call) and resolve(pairs.func) is builtins.zip and len(pairs.args) == 2
            and not pairs.keywords and not any(isinstance(a, n.Starred) for a in pairs.args)):
        return pairs.args
    return None


def keys_varied(norm, keys):
    """Whether keys (a tuple of them, or a generator of them) depend on differentiated values:
    a generator's variables bound to a dict's keys never do, those bound to the items of a
    differentiated iterable do."""
    if not isinstance(keys, n.GeneratorExp):
        return norm.expr_varied(keys)
    varied = set()
    reads = lambda e: norm.expr_varied(e) or bool(syntax.load_names(e) & varied)  # noqa: E731
    for gen in keys.generators:
        loop = dict_loop(gen.target, gen.iter)
        if loop is not None:
            value = loop[2]
            if value is not None and reads(loop[0]):
                varied |= syntax.store_names(value)
        else:
            varied |= _bound_varied(gen.target, gen.iter, reads, norm.resolve)
    return reads(keys.elt)


def _bound_varied(target, it, reads, resolve):
    """The names a generator binds to differentiated values: item by item for `zip(a, b)` and
    `enumerate(a)` (an index never is), else all of them when the iterable is."""
    if isinstance(it, n.Call) and isinstance(target, n.Tuple) and not it.keywords:
        fn = resolve(it.func)
        if fn is builtins.zip and len(target.elts) == len(it.args):
            return set().union(*(syntax.store_names(t) for t, a in zip(target.elts, it.args) if reads(a)))
        if fn is builtins.enumerate and len(target.elts) == 2 and len(it.args) == 1:
            return syntax.store_names(target.elts[1]) if reads(it.args[0]) else set()
    return syntax.store_names(target) if reads(it) else set()


def dict_names(fn_node, resolve):
    """The names a function visibly uses as dicts: read with a constant string key
    (`p["w"]`) or with a dict method (`p.items()`), and never bound to anything but a dict it
    builds (`p = p["layers"]` may make `p` a list)."""
    names = set()
    for node in syntax.walk(fn_node):
        if (isinstance(node, n.Subscript) and isinstance(node.value, n.Name) and syntax.is_constant(node.slice)
                and isinstance(node.slice.value, str)):
            names.add(node.value.id)
        elif (isinstance(node, n.Call) and isinstance(node.func, n.Attribute) and isinstance(node.func.value, n.Name)
              and node.func.attr in DICT_VIEWS):
            names.add(node.func.value.id)
    return names - dict_bindings(fn_node, resolve)[1]


def dict_bindings(fn_node, resolve):
    """(names bound to a dict the function builds: a display, a comprehension, `dict(...)`;
    names bound to anything else, loop variables and unpacking included)."""
    built, other = set(), set()
    for node in syntax.walk(fn_node):
        if isinstance(node, n.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], n.Name):
            value = node.value
            builds = isinstance(value, (n.Dict, n.DictComp)) or (
                isinstance(value, n.Call) and resolve(value.func) is builtins.dict)
            (built if builds else other).add(node.targets[0].id)
        elif isinstance(node, (n.AugAssign, n.AnnAssign, n.For, n.NamedExpr, n.comprehension)):
            other |= syntax.store_names(node.target)
        elif isinstance(node, n.Assign):
            for t in node.targets:
                other |= {x.id for x in syntax.walk(t) if isinstance(x, n.Name) and isinstance(x.ctx, n.Store)}
    return built, other


def dict_loop(target, it):
    """(dict, key target, value target or None) of a loop over a dict's keys, values or items
    (`for k, v in d.items()`, `for v in d.values()`, `for k in d.keys()`), or None for another
    loop."""
    if not (isinstance(it, n.Call) and isinstance(it.func, n.Attribute) and not it.args and not it.keywords
            and it.func.attr in DICT_VIEWS):
        return None
    if it.func.attr == "keys":
        return it.func.value, target, None
    if it.func.attr == "values":
        return it.func.value, None, target
    if isinstance(target, n.Tuple) and len(target.elts) == 2:
        return it.func.value, target.elts[0], target.elts[1]
    return None


_DICT_ARGUMENTS = contextvars.ContextVar("dict_arguments", default=None)


@contextlib.contextmanager
def dict_arguments(fn, bound):
    """While a version of `fn` is built for these arguments (`bound`), the parameters holding
    dicts are known (the version key holds their types): `for k in p` over one iterates its keys."""
    dicts = frozenset(k for k, v in bound.arguments.items() if isinstance(v, dict))
    token = _DICT_ARGUMENTS.set((fn, dicts)) if dicts else None
    try:
        yield
    finally:
        if token is not None:
            _DICT_ARGUMENTS.reset(token)


def dict_parameters(fn):
    """The parameters of `fn` that hold dicts in the version being built (dict_arguments)."""
    known = _DICT_ARGUMENTS.get()
    return known[1] if known is not None and known[0] is fn else frozenset()


def rewrite_dict_iterations(fn_node, varied, resolve, known=frozenset()):
    """`for k in d` over a differentiated dict as `for k in d.keys()`, in loops and
    comprehensions, where `d` is visibly a dict (dict_names) or the loop reads `d[k]`: its keys
    are never differentiated, and a list reaching it fails (no `.keys()`) rather than being
    read as a dict. `known`: parameters that hold dicts in this version (dict_parameters),
    differentiated or not, and never rebound. True if anything changed."""
    rebound = syntax.store_names(fn_node)
    known = {p for p in known if p not in rebound}
    names, changed = dict_names(fn_node, resolve) | known, False
    for node in syntax.walk(fn_node):
        if isinstance(node, n.For):
            loops, body = [node], node.body
        elif isinstance(node, (n.ListComp, n.SetComp, n.GeneratorExp, n.DictComp)):
            loops = node.generators
            body = [node.key, node.value] if isinstance(node, n.DictComp) else [node.elt]
            body = body + [test for g in node.generators for test in g.ifs]
        else:
            continue
        for loop in loops:
            it = loop.iter
            if not (isinstance(it, n.Name) and (varied(it) or it.id in names)):
                continue  # (a dict not differentiated, visibly one: its keys too, as the loop may be kept)
            key = loop.target.id if isinstance(loop.target, n.Name) else None
            read = key is not None and any(
                isinstance(x, n.Subscript) and isinstance(x.value, n.Name) and x.value.id == it.id
                and isinstance(x.slice, n.Name) and x.slice.id == key for b in body for x in syntax.walk(b))
            if it.id in names or read:
                loop.iter = located(quote.expr("D.keys()", D=it), it)
                changed = True
    return changed


def for_dict(norm, s, out):
    """The IR loop of a loop over a dict (see dict_loop), or None for another loop: the keys as
    a list (plain Python), then `k = _keys[_i]` and `v = d[k]` at the top of each pass."""
    loop = dict_loop(s.target, s.iter)
    if loop is None:
        return None
    d, key, value = loop
    line, text = norm.loc(s)
    rebound = syntax.store_names(n.Module(body=s.body, type_ignores=[])) | syntax.store_names(s.target)
    if not isinstance(d, n.Name) or d.id in rebound:  # Python reads the dict the loop starts with
        d = norm.expr(d, out, s, target=norm.fresh("_dict"))
    keys, index = norm.fresh("_keys"), norm.fresh("_i")
    out.append(Primal(stmt_at("KEYS = dict_keys(D)", s, KEYS=syntax.name(keys, store=True), D=d), line, text))
    if not isinstance(key, n.Name):
        inner = syntax.name(norm.fresh("_key"), store=True)
        prefix = [stmt_at("KEY = KEYS[I]", s, KEY=inner, KEYS=syntax.name(keys), I=syntax.name(index))]
        if key is not None:
            prefix.append(stmt_at("TARGET = KEY", s, TARGET=key, KEY=syntax.name(inner.id)))
        key = inner
    else:
        prefix = [stmt_at("KEY = KEYS[I]", s, KEY=key, KEYS=syntax.name(keys), I=syntax.name(index))]
    if value is not None:
        prefix.append(stmt_at("VALUE = D[KEY]", s, VALUE=value, D=syntax.copy(d), KEY=syntax.name(key.id)))
    body = []
    for st in prefix:
        norm.stmt(st, body)
    iter_node = quote.expr("range(len(KEYS))", KEYS=syntax.name(keys))
    return For(index, iter_node, body + norm.block(s.body), getattr(s, "_dualtape_break", None), line, text)


def hoist_dict_comprehensions(fn_node, varied, resolve):
    """Write each differentiated dict comprehension `{K: V for ...}` as
    `dict(zip((K for ...), [V for ...]))` (see the module docstring). True if anything changed."""
    if not _builtin_dict_and_zip(resolve):
        return False  # (a local `dict` or `zip`: the comprehension stays, and refused)
    changed = False
    for node in list(syntax.walk(fn_node)):
        changed |= syntax.replace_children(node, lambda item: _zipped(item, varied))
    return changed


def _zipped(item, varied):
    """`dict(zip((K for ...), [V for ...]))` for a differentiated dict comprehension, else None."""
    if not (isinstance(item, n.DictComp) and varied(item)) or any(g.is_async for g in item.generators):
        return None
    keys = n.GeneratorExp(elt=item.key, generators=syntax.copy(item.generators))
    values = n.ListComp(elt=item.value, generators=item.generators)
    return located(quote.expr("dict(zip(KEYS, VALUES))", KEYS=keys, VALUES=values), item)


def rewrite_dict_writes(fn_node, varied, resolve):
    """`d[key] = v` (and `d[key] += v`) into a dict the function builds (every binding of `d` a
    display, a comprehension or `dict(...)`), with differentiated values: the new dict,
    `d = dict(zip([*d.keys(), key], [d[_k] for _k in d.keys()] + [v]))` (a repeated key keeps
    its place and takes the last value, as the write does). True if anything changed."""
    bound, other = dict_bindings(fn_node, resolve)
    dicts = bound - other
    if not dicts or not _builtin_dict_and_zip(resolve):
        return False
    taken = {x.id for x in syntax.walk(fn_node) if isinstance(x, n.Name)}
    changed = False
    for node in list(syntax.walk(fn_node)):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if not (isinstance(block, list) and block and isinstance(block[0], n.stmt)):
                continue
            for i, st in enumerate(block):
                target = (st.targets[0] if isinstance(st, n.Assign) and len(st.targets) == 1
                          else getattr(st, "target", None))
                if not (isinstance(st, (n.Assign, n.AugAssign)) and isinstance(target, n.Subscript)
                        and isinstance(target.value, n.Name) and target.value.id in dicts
                        and (varied(st.value) or varied(target.value))):
                    continue
                d, key = target.value.id, target.slice
                value = st.value
                if isinstance(st, n.AugAssign):
                    value = n.BinOp(left=n.Subscript(value=syntax.name(d), slice=syntax.copy(key), ctx=n.Load()),
                                    op=st.op, right=value)
                k = unused_name("_key", taken)
                taken.add(k)
                block[i] = stmt_at("D = dict(zip([*D.keys(), KEY], [D[K] for K in D.keys()] + [VALUE]))", st,
                                   D=syntax.name(d), KEY=key, K=syntax.name(k), VALUE=value)
                block[i].targets[0].ctx = n.Store()
                changed = True
    return changed


def _builtin_dict_and_zip(resolve):
    """Whether `dict` and `zip` are Python's in the function (what the rewrites write)."""
    return resolve(syntax.name("dict")) is builtins.dict and resolve(syntax.name("zip")) is builtins.zip
