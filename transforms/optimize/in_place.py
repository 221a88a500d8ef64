"""Arithmetic written into arrays that nothing reads afterwards, instead of into new ones.

On arrays of a few thousand elements NumPy's `a * b` costs about as much to allocate and first
touch its result as to compute it: `np.multiply(a, b, out=a)` takes half the time. Forward over
reverse (hvp) makes many such temporaries (`_sub_1_mul_h_h = 1 - _mul_h_h`, then
`dh = d_add * _sub_1_mul_h_h`); this pass reuses them, in the versions compiled for known
argument shapes and dtypes (concrete.py), where the result's shape and dtype are known. Two
forms:

- a donor name: in `t = a + b`, where `a` holds an array made by arithmetic here (`a = x @ w`,
  `a = np.tanh(z)`, ...: new memory nothing else refers to), read by this operation only, in the
  same block after it is made (so never again, nor in a later pass of a loop), of the result's
  shape and dtype: `t = np.add(a, b, out=a)`. Also inside a larger expression and for `-a`;
- an anonymous operand: `t = x @ w + y @ v` is `t = x @ w` then `t += y @ v` (the left part, or
  the right one of `+` and `*`, which commute bit for bit, when it has the result's shape and
  dtype, and the other part does not read `t`).

Never into a parameter, a value saved or returned, one with a second name, or a view: a donor
is read once in the whole function, and is made by arithmetic (not `x.T`, `x[i]`, reshape).
"""

import ast

import numpy as np

from .function import blocks, function, name_counts, number_lines

_UFUNCS = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "true_divide"}
_COMMUTE = (ast.Add, ast.Mult)
_FRESH_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.MatMult, ast.Pow, ast.FloorDiv, ast.Mod)
_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _ufunc_call(node):
    """The NumPy ufunc name of a call `np.name(...)`, else None."""
    f = node.func if isinstance(node, ast.Call) else None
    if (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "np"
            and isinstance(getattr(np, f.attr, None), np.ufunc)):
        return f.attr
    return None


def _np(name, args, out):
    return ast.Call(func=ast.Attribute(value=ast.Name(id="np", ctx=ast.Load()), attr=name, ctx=ast.Load()),
                    args=args, keywords=[ast.keyword(arg="out", value=ast.Name(id=out, ctx=ast.Load()))])


class _Pass:
    def __init__(self, fn, infer_, params):
        self.infer = infer_
        self.loads, self.stores = name_counts(fn)
        self.params = set(params)
        self.made = {}  # name -> (its block, index there) where `name = <new array>`
        self.donated = set()  # names whose memory a rewrite has written into (dead: read once)
        self.types, self.kept = {}, []  # id(node) -> array(node), asked before rewriting; the nodes

    def learn(self, node):
        """Note the types of `node` and its parts as written, before rewriting changes them."""
        for sub in ast.walk(node):
            self.kept.append(sub)  # (their ids stay theirs)
            self.types[id(sub)] = self.array(sub)

    def array(self, node):
        """The (shape, dtype) of a NumPy array (not a scalar) `node` surely holds, else None."""
        if id(node) in self.types:
            return self.types[id(node)]
        v = self.infer(node)
        if v is None or v[0] != "a" or v[2] is None or isinstance(v[2], type) or not v[1]:
            return None
        return v[1], v[2]

    def fresh(self, node):
        """Whether `node` evaluates to a new array that no other value refers to."""
        if isinstance(node, ast.BinOp) and isinstance(node.op, _FRESH_OPS) or \
                isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return self.array(node) is not None
        if _ufunc_call(node) is not None and not any(k.arg is None for k in node.keywords):
            outs = [k.value for k in node.keywords if k.arg == "out"]
            if outs:  # (written into a donor by this pass: a new array itself, no longer read)
                return isinstance(outs[0], ast.Name) and outs[0].id in self.donated
            return self.array(node) is not None
        return False

    def donor(self, node, block, index, shape):
        """Whether the name `node`, read at `block[index]`, may be written into for a result of
        `shape` (shape, dtype)."""
        if not isinstance(node, ast.Name) or node.id in self.params:
            return False
        where = self.made.get(node.id)
        return (where is not None and where[0] is block and where[1] < index and self.loads.get(node.id) == 1
                and self.stores.get(node.id) == 1 and self.array(node) == shape)

    def into(self, ufunc, args, donor, shape):
        self.donated.add(donor)
        call = _np(ufunc, args, donor)
        self.learn(call)
        self.types[id(call)] = shape
        return call

    def rewrite(self, node, block, index):
        """`node` (an expression of `block[index]`) with its operations on donors written into them."""
        if isinstance(node, _SCOPES):
            return node  # (evaluated any number of times)
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                value[:] = [self.rewrite(v, block, index) if isinstance(v, ast.AST) else v for v in value]
            elif isinstance(value, ast.expr):
                setattr(node, field, self.rewrite(value, block, index))
        shape = self.array(node) if isinstance(node, (ast.BinOp, ast.UnaryOp)) else None
        if shape is None:
            return node
        if isinstance(node, ast.BinOp) and type(node.op) in _UFUNCS:
            for operand in (node.left, node.right):
                if self.donor(operand, block, index, shape):
                    return self.into(_UFUNCS[type(node.op)], [node.left, node.right], operand.id, shape)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
                self.donor(node.operand, block, index, shape):
            return self.into("negative", [node.operand], node.operand.id, shape)
        return node

    def split(self, st):
        """`t = L op R` as `t = L` and `t op= R` where L (or R, `op` commuting) is a new array of
        the result's shape and dtype and the other part does not read t; else None."""
        node, target = st.value, st.targets[0].id
        if not (isinstance(node, ast.BinOp) and type(node.op) in _UFUNCS):
            return None
        shape = self.array(node)
        if shape is None:
            return None
        sides = [(node.left, node.right)] + ([(node.right, node.left)] if isinstance(node.op, _COMMUTE) else [])
        for first, then in sides:
            if self.fresh(first) and self.array(first) == shape and target not in {
                    x.id for x in ast.walk(then) if isinstance(x, ast.Name)}:
                return [ast.Assign(targets=[ast.Name(id=target, ctx=ast.Store())], value=first),
                        ast.AugAssign(target=ast.Name(id=target, ctx=ast.Store()), op=node.op, value=then)]
        return None

    def block(self, block):
        changed = False
        i = 0
        while i < len(block):
            st = block[i]
            i += 1
            plain = isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
            if not (plain or isinstance(st, (ast.AugAssign, ast.Expr, ast.Return)) and st.value is not None):
                continue
            self.learn(st.value)
            before = ast.dump(st.value)
            st.value = self.rewrite(st.value, block, i - 1)
            changed = changed or ast.dump(st.value) != before
            if not plain:
                continue
            parts = self.split(st)
            if parts is not None:
                block[i - 1:i] = parts
                changed = True
                i += 1
            if parts is not None or self.fresh(st.value):
                self.made[st.targets[0].id] = (block, i - 1 - (parts is not None))
        return changed


def write_in_place(body, params, infer_):
    """`body` (statements: function.py) with arithmetic written into dead temporaries (see the
    module's docstring); `params`: the function's parameter names; `infer_`: concrete.py's
    (shape, dtype) of an expression. A new list where anything changed."""
    fn = function(body, [])
    state = _Pass(fn, infer_, params)
    changed = False
    for block in list(blocks(fn)):
        changed = state.block(block) or changed
    if not changed:
        return body
    number_lines(fn)
    return list(fn.body)
