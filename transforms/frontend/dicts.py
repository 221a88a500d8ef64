"""Dict displays over differentiated values with constant keys, `{"a": x, "b": x * 2.0}`: a
"pack" op (`container` "dict", `index` its keys) like a list display. Its adjoint and tangent
are dicts with the same keys (`d["a"]` reads one; runtime.add_at, zeros_like, tangent_item
take dicts), as for a dict argument. Keys that are not constants (`{k: v}`), repeated keys and
`**` unpacking stay refused."""

from ..ir import syntax
from ..ir.syntax import nodes as n
from ..ir.nodes import Op
from ..ir.naming import unused_name
from .desugar import stmt_at


def static_keys(e):
    """The constant keys of a dict display, or None if one is not a constant or repeats."""
    if not e.keys or any(k is None or not syntax.is_constant(k) or type(k.value) not in (str, int) for k in e.keys):
        return None
    keys = [k.value for k in e.keys]
    return keys if len(set(keys)) == len(keys) else None


def dict_display(norm, e, out, s, target):
    """The "pack" op of a dict display with constant keys, or None for another dict."""
    keys = static_keys(e)
    if keys is None:
        return None
    line, text = norm.loc(s)
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
        for field in node._fields:
            value = getattr(node, field, None)
            items = value if isinstance(value, list) else [value]
            for i, item in enumerate(items):
                new = _get(item, keys)
                if new is not None:
                    if isinstance(value, list):
                        value[i] = new
                    else:
                        setattr(node, field, new)
                    done = True
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
