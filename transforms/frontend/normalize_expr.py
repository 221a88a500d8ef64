"""Expressions of the normalizer: un-nesting `np.sin(x * w) + b` into one Op per operation.

`Expressions` is mixed into `Normalizer`: `expr` emits the Ops computing an expression and
returns the atom holding it; `call` resolves a call to a registry op or a user function.
"""

import builtins
import collections
import inspect

import numpy as np

from ..ir import syntax
from ..calls import list_arguments, rewrites as call_rewrites, opmap, star_args
from .. import runtime
from ..ir.syntax import nodes as n
from .expr_atoms import array_as_stack, is_pad_pairs, is_simple, name_hint
from ..templates import quote
from ..ir.nodes import If, Op, Primal, is_name  # noqa: F401
from .mutations import MUTATORS, changed_names
from .list_sequences import sequence_call
from .dicts import dict_display, dict_of_pairs, zip_pairs

_BINOPS = {n.Add: ("+", "add"), n.Sub: ("-", "sub"), n.Mult: ("*", "mul"), n.Div: ("/", "div"),
           n.Pow: ("**", "pow"), n.MatMult: ("@", "matmul"), n.Mod: ("%", "mod"),
           n.FloorDiv: ("//", "floordiv")}
_BINOP_FN = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide, "**": np.power,
             "@": np.matmul, "%": np.mod, "//": np.floor_divide}


class Expressions:
    """Expression and call normalization (a mixin of Normalizer)."""

    # -- expressions ------------------------------------------------------------------------------
    def _solve(self, e, out, s, target):
        """np.linalg.solve(a, b) as the registry op on a matrix right-hand side: a vector b
        (NumPy 2: b.ndim == 1) is solved as the column b[:, None] and x read back as a vector,
        as dnp.linalg_solve does; the op's rules are for matrices (a vector b would meet them
        with the wrong shapes)."""
        a = self.expr(e.args[0], out, s)
        b = self.expr(e.args[1], out, s)
        column = self.expr(quote.expr("np.reshape(B, solve_rhs_shape(np.shape(B)))", B=b), out, s)
        call = n.Call(func=syntax.copy(e.func), args=[syntax.copy(a), syntax.copy(column)], keywords=[])
        call._matrix_rhs = True
        x = self.expr(call, out, s)
        return self.expr(quote.expr("np.reshape(X, solve_x_shape(np.shape(X), np.ndim(B)))", X=x, B=b),
                         out, s, target)

    def _as_einsum(self, obj, e, out, s):
        """np.outer, np.tensordot, np.trace, np.diagonal and np.einsum with '...' as np.einsum
        with explicit subscripts, computed from the operands' shapes at run time by a runtime
        helper (`tensordot_subscripts(np.shape(a), np.shape(b), 1)`): the Einsum op's rules
        then serve every mode. None: not one of these calls."""
        if not opmap.hashable(obj) or obj not in (np.outer, np.tensordot, np.trace, np.diagonal, np.einsum):
            return None
        if obj is np.einsum:
            sub = e.args[0] if e.args else None
            if not (syntax.is_constant(sub) and isinstance(sub.value, str) and "..." in sub.value) or e.keywords:
                return None
            atoms = [self.expr(a, out, s) for a in e.args[1:]]
            shapes = [quote.expr("np.shape(A)", A=a) for a in atoms]
            subscripts = n.Call(func=syntax.name("einsum_subscripts"), args=[syntax.constant(sub.value)] + shapes,
                                keywords=[])
            return n.Call(func=syntax.attribute("np", "einsum"), args=[subscripts] + [syntax.copy(a) for a in atoms],
                          keywords=[])
        try:
            bound = inspect.signature(obj).bind(*e.args, **{k.arg: k.value for k in e.keywords})
        except TypeError:
            return None
        args = dict(bound.arguments)
        if any(args.get(k) is not None and not (syntax.is_constant(args[k]) and args[k].value is None)
               for k in ("out", "dtype")):
            return None
        statics = {k: v for k, v in args.items() if k in ("axes", "offset", "axis1", "axis2")}
        if any(self.expr_varied(v) for v in statics.values()):
            return None  # refused by the usual path: a static argument must not depend on the inputs
        if obj is np.outer:
            a, b = (self.expr(args[k], out, s) for k in ("a", "b"))
            return quote.expr("np.einsum('i,j->ij', np.reshape(A, (-1,)), np.reshape(B, (-1,)))", A=a, B=b)
        if obj is np.tensordot:
            a, b = (self.expr(args[k], out, s) for k in ("a", "b"))
            return quote.expr("np.einsum(tensordot_subscripts(np.shape(A), np.shape(B), AXES), A, B)", A=a, B=b,
                              AXES=statics.get("axes", 2))
        a = self.expr(args["a"], out, s)
        offset, axis1, axis2 = statics.get("offset", 0), statics.get("axis1", 0), statics.get("axis2", 1)
        block = self.expr(quote.expr("A[diagonal_block(np.shape(A), OFFSET, AXIS1, AXIS2)]", A=a, OFFSET=offset,
                                     AXIS1=axis1, AXIS2=axis2), out, s)
        return quote.expr("np.einsum(diagonal_subscripts(np.ndim(A), AXIS1, AXIS2, KEEP), BLOCK)", A=a, AXIS1=axis1,
                          AXIS2=axis2, KEEP=obj is np.diagonal, BLOCK=block)

    def _slogdet(self, e, out, s, target):
        """np.linalg.slogdet(a) as the pair (sign, log|det a|) of its two registry ops (the sign
        a constant), spelled with the runtime names slogdet_sign / slogdet_logabs."""
        line, text = self.loc(s)
        a = self.expr(e.args[0], out, s)
        sign = self.fresh("_sign")
        node = n.Assign(targets=[syntax.name(sign, store=True)],
                        value=quote.expr("slogdet_sign(A)", A=a), type_comment=None)
        node.lineno = s.lineno
        out.append(Primal(node, line, text))
        self.constant_parts = getattr(self, "constant_parts", []) + ["LogMatrixDeterminantSign"]  # (complex_ops)
        logabs = self.fresh(name_hint("logabsdet", a))
        self._emit(Op(target=logabs, kind="prim", expr=quote.expr("slogdet_logabs(A)", A=a), args=[a],
                      line=line, text=text, spec=opmap.lookup(runtime.slogdet_logabs), static={}), out)
        return self.expr(n.Tuple(elts=[syntax.name(sign), syntax.name(logabs)], ctx=n.Load()), out, s, target)

    def note_complex(self, e, s):
        """Note the first complex literal (`1j`) or `complex(...)` call meeting a value: the
        pipeline then checks that every op of the function has complex rules (`complex_ops`),
        as the runtime modes check each op, and refuses the function otherwise.

        `expr` calls this at every BinOp and Call on its way down, so each node is looked at
        once: a subtree an enclosing call already found clean is skipped (walking every operand
        at every level would be quadratic: a 300-term sum took seconds more to transform)."""
        if getattr(self, "_complex_checked", None) is None:
            self._complex_checked = set()  # the nodes themselves, kept alive: no id reuse
        checked = self._complex_checked
        parts = [e.left, e.right] if isinstance(e, n.BinOp) else list(e.args) + [k.value for k in e.keywords]
        for part in parts:
            queue = collections.deque([part])  # breadth first, as syntax.walk: the same node is named
            while queue:
                node = queue.popleft()
                if node in checked:
                    continue
                checked.add(node)
                if _is_complex(node, self.resolve) and getattr(self, "complex_literal", None) is None:
                    self.complex_literal = (syntax.unparse(node), s)
                queue.extend(syntax.iter_child_nodes(node))

    def list_names(self):
        """Names some assignment binds to a list or tuple literal, or to what `_listy` reads as a
        list (`ys = [a] + zs`, `t = ys + ws`: they may hold a Python list)."""
        if getattr(self, "_list_names", None) is None:
            assigns = [(t.id, node.value) for node in syntax.walk(self.info.node) if isinstance(node, n.Assign)
                       for t in node.targets if isinstance(t, n.Name)]
            names, grew = set(), True
            while grew:  # to a fixed point: a name bound to a concatenation of list names
                grew = False
                for name, value in assigns:
                    if name not in names and self._listy_in(value, names):
                        names.add(name)
                        grew = True
            self._list_names = names
        return self._list_names

    def operand(self, e, other=None):
        """An array operand as NumPy sees it: a list literal of differentiated values
        (`x * [a, 2.0]`) is np.asarray of it, i.e. `np.stack([a, 2.0])`, so its derivative is
        an array too (batched tangents, tensors and dual numbers included). Not when
        the other operand of `+`/`*` may be a list or an int: that is list concatenation or repetition."""
        if other is not None and (self._listy(other) or (syntax.is_constant(other) and isinstance(other.value, int))):
            return e
        e = self._items_of_fixed_list(e)
        if (isinstance(e, (n.List, n.Tuple)) and e.elts and self.expr_varied(e)
                and not any(isinstance(x, n.Starred) for x in e.elts)
                and self.resolve(syntax.attribute("np", "stack")) is np.stack):
            e = type(e)(elts=[self._items_of_fixed_list(x) for x in e.elts], ctx=n.Load())
            return array_as_stack(e)
        return e

    def _list_operator(self, op, left, right, names=None):
        """Whether `left + right` may be list concatenation (an operand is a list display or a
        name bound to one) or `left * right` list repetition (such an operand times a value that
        is not differentiated): the op is then a "listop", whose derivative checks at run time."""
        names = self.list_names() if names is None else names
        listy = lambda x: self._listy_in(x, names)  # noqa: E731
        if isinstance(op, n.Add):
            return listy(left) or listy(right)
        return isinstance(op, n.Mult) and ((listy(left) and not self.expr_varied(right))
                                           or (listy(right) and not self.expr_varied(left)))

    def _listy(self, x):
        return self._listy_in(x, self.list_names())

    def _listy_in(self, x, names):
        """Whether `x` is visibly a list or tuple, given the names known to hold one: a display or
        comprehension, such a name, a slice of one (`ys[1:]`), list(...) / tuple(...) / sorted(...),
        a concatenation or repetition of one."""
        if isinstance(x, n.Subscript) and isinstance(x.slice, n.Slice):
            return self._listy_in(x.value, names)
        if isinstance(x, n.Call) and isinstance(x.func, n.Name) and x.func.id in ("list", "tuple", "sorted"):
            return self.resolve(x.func) in (list, tuple, sorted)
        if isinstance(x, n.BinOp) and isinstance(x.op, (n.Add, n.Mult)):  # [a] + ys + [b]: (A + B) + C
            return self._list_operator(x.op, x.left, x.right, names)
        return isinstance(x, (n.List, n.Tuple, n.ListComp)) or (isinstance(x, n.Name) and x.id in names)

    def _items_of_fixed_list(self, e):
        """A name only ever bound to list literals of L items as the literal `[y[0], ..., y[L-1]]`."""
        if isinstance(e, n.Name) and self.expr_varied(e) and e.id in self.fixed_lists():
            return n.List(elts=[quote.expr("E[K]", E=e.id, K=k) for k in range(self.fixed_lists()[e.id])], ctx=n.Load())
        return e

    def fixed_lists(self):
        """{name: L} for the local names whose every binding is `name = [...]` (or a tuple) of L
        items: NumPy reads such a name as an array of L rows wherever it is an op's operand."""
        if getattr(self, "_fixed_lists", None) is None:
            lengths, other = {}, set()
            for node in syntax.walk(self.info.node):
                if isinstance(node, n.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], n.Name) \
                        and isinstance(node.value, (n.List, n.Tuple)) and not any(
                            isinstance(x, n.Starred) for x in node.value.elts):
                    lengths.setdefault(node.targets[0].id, set()).add(len(node.value.elts))
                elif isinstance(node, (n.Assign, n.AugAssign, n.AnnAssign, n.For, n.NamedExpr, n.comprehension)):
                    targets = node.targets if isinstance(node, n.Assign) else [node.target]
                    for t in targets:
                        other |= syntax.store_names(t)
                elif isinstance(node, n.Call):  # changed in place: `rows.append(v)`, `push(rows, v)`
                    if isinstance(node.func, n.Attribute) and node.func.attr in MUTATORS \
                            and isinstance(node.func.value, n.Name):
                        other.add(node.func.value.id)
                    if opmap.is_user_function(self.resolve(node.func)):
                        other |= {a.id for a in node.args if isinstance(a, n.Name)}
                        other |= {k.value.id for k in node.keywords if isinstance(k.value, n.Name)}
            other |= set(self.params)
            self._fixed_lists = {k: next(iter(v)) for k, v in lengths.items()
                                 if len(v) == 1 and k not in other and next(iter(v)) > 0}
        return self._fixed_lists

    def expr(self, e, out, s, target=None):
        """Emit Ops computing `e`; return the atom (a Name or an inactive expression) holding it."""
        line, text = self.loc(s)
        if not self.expr_varied(e):
            if target is None and is_simple(e):
                return e
            name = target or self.fresh()
            node = n.Assign(targets=[syntax.name(name, store=True)], value=e, type_comment=None)
            node.lineno = s.lineno
            out.append(Primal(node, line, text, changed_names(node, self.locals, self.resolve)))
            return syntax.name(name)
        if isinstance(e, n.Name):
            if target is not None and target != e.id:
                self._emit(Op(target=target, kind="copy", expr=syntax.copy(e), args=[e],
                              line=line, text=text), out)
                return syntax.name(target)
            return e
        if isinstance(e, (n.BinOp, n.Call)):
            self.note_complex(e, s)
        if isinstance(e, n.BinOp):
            symbol, word = _BINOPS[type(e.op)]
            left, right = e.left, e.right
            if not isinstance(e.op, n.MatMult):  # `[a] + [b]`, `[a] * 2`, `[a] + l`: Python's list operators
                left, right = self.operand(left, right), self.operand(right, left)
            a = self.expr(left, out, s)
            b = self.expr(right, out, s)
            spec = opmap.lookup(_BINOP_FN[symbol])
            name = target or self.fresh(name_hint(word, a, b))
            kind = "listop" if self._list_operator(e.op, left, right) else "prim"  # runtime_lists.py
            self._emit(Op(target=name, kind=kind, expr=n.BinOp(left=syntax.copy(a), op=e.op, right=syntax.copy(b)),
                          args=[a, b], line=line, text=text, spec=spec), out)
            return syntax.name(name)
        if isinstance(e, n.UnaryOp):
            if isinstance(e.op, n.UAdd):
                return self.expr(e.operand, out, s, target)
            if isinstance(e.op, n.USub):
                a = self.expr(e.operand, out, s)
                name = target or self.fresh(name_hint("neg", a))
                self._emit(Op(target=name, kind="prim", expr=n.UnaryOp(op=n.USub(), operand=syntax.copy(a)),
                              args=[a], line=line, text=text, spec=opmap.lookup(np.negative)), out)
                return syntax.name(name)
        if isinstance(e, n.Call):
            return self.call(e, out, s, target)
        if isinstance(e, n.Subscript):
            base = self.expr(e.value, out, s)
            name = target or self.fresh()
            self._emit(Op(target=name, kind="getitem", expr=n.Subscript(value=syntax.copy(base), slice=e.slice, ctx=n.Load()),
                          args=[base], line=line, text=text, index=e.slice), out)
            return syntax.name(name)
        if isinstance(e, (n.Tuple, n.List)):
            atoms = [self.expr(x, out, s) for x in e.elts]
            name = target or self.fresh()
            node = (n.Tuple if isinstance(e, n.Tuple) else n.List)(elts=[syntax.copy(a) for a in atoms], ctx=n.Load())
            self._emit(Op(target=name, kind="pack", expr=node, args=atoms,
                          line=line, text=text, container="tuple" if isinstance(e, n.Tuple) else "list"), out)
            return syntax.name(name)
        if isinstance(e, n.Dict):  # {"a": x, "b": y}, {k: x}: frontend/dicts.py
            return dict_display(self, e, out, s, target)
        if isinstance(e, n.IfExp):
            name = target or self.fresh()
            body, orelse = [], []
            self.expr(e.body, body, s, target=name)
            self.expr(e.orelse, orelse, s, target=name)
            out.append(If(e.test, body, orelse, line, text))
            return syntax.name(name)
        if isinstance(e, n.Attribute):
            raise self.fail(s, f"attribute `.{e.attr}` of a differentiated value is not supported",
                            "Use the NumPy function instead (e.g. np.transpose(x) for x.T).")
        construct = {n.ListComp: "a list comprehension", n.GeneratorExp: "a generator expression",
                     n.DictComp: "a dict comprehension", n.SetComp: "a set comprehension",
                     n.Lambda: "a lambda", n.Starred: "a starred expression"}.get(type(e), type(e).__name__)
        raise self.fail(s, f"{construct} over differentiated values is not supported",
                        "Write it as a for loop that builds the result, or wrap it with dualtape.custom_gradient.")

    def call(self, e, out, s, target):
        line, text = self.loc(s)
        obj = self.resolve(e.func)
        func_src = syntax.unparse(e.func)
        e = star_args.starred_results(self, e, out, s)  # zip(*unpack(params)): the result held, spread
        spread = star_args.spread(self, e)  # g(*[a, b]), g(**{"k": v}): the items written out
        if spread is not None:
            return self.expr(spread, out, s, target)
        obj = star_args.specialized(obj, e) or obj  # def g(*args, **kw): its version for this call
        if any(isinstance(a, n.Starred) for a in e.args) or any(k.arg is None for k in e.keywords):
            raise self.fail(s, f"`*args` / `**kwargs` in the call of {func_src} on differentiated values",
                            "Pass each argument by name or position.")
        if obj is builtins.float:
            return self.expr(e.args[0], out, s, target)
        pairs = zip_pairs(self.resolve, e)  # dict(zip(keys, values)): frontend/dicts.py
        if pairs is not None:
            return dict_of_pairs(self, *pairs, out, s, target)
        if obj is np.ravel and len(e.args) == 1 and not e.keywords:  # as `x.ravel()`: a reshape
            return self.expr(n.Call(func=syntax.attribute("np", "reshape"), args=[e.args[0], quote.expr("(-1,)")],
                                    keywords=[]), out, s, target)
        as_numpy = opmap.tf_call(obj, e)  # `tf.reduce_sum(x)` in `import dualtape as tf` code
        if as_numpy is not None:
            return self.expr(as_numpy, out, s, target)
        written = call_rewrites.rewrite(self, obj, e, out, s)  # np.piecewise, np.split: written out
        if written is not None:
            return self.expr(written, out, s, target)
        sequence = sequence_call(self, obj, e, out, s, target)  # np.stack(ys) of a list held by a name
        if sequence is not None:
            return sequence
        if (obj is np.array and len(e.args) == 1 and not e.keywords and isinstance(e.args[0], (n.List, n.Tuple))
                and e.args[0].elts and self.resolve(syntax.attribute("np", "stack")) is np.stack):
            # np.array([a, b]) of differentiated values is np.stack([a, b]) (nested lists stacked
            # level by level): one op with rules in every mode, and traced values stay traced
            return self.expr(array_as_stack(e.args[0]), out, s, target)
        if obj is np.linalg.solve and len(e.args) == 2 and not e.keywords and not getattr(e, "_matrix_rhs", False):
            return self._solve(e, out, s, target)
        if obj is np.linalg.slogdet and len(e.args) == 1 and not e.keywords:
            return self._slogdet(e, out, s, target)
        if (obj is np.copy or obj is np.array) and len(e.args) == 1 and not e.keywords:
            # a copy: new memory (aliasing.py lets code write into it), the identity derivative
            a = self.expr(e.args[0], out, s)
            name = target or self.fresh(name_hint("copy", a))
            call = n.Call(func=syntax.copy(e.func), args=[syntax.copy(a)], keywords=[])
            self._emit(Op(target=name, kind="copy", expr=call, args=[a],
                          line=line, text=text), out)
            return syntax.name(name)
        rewritten = self._as_einsum(obj, e, out, s)
        if rewritten is not None:
            return self.expr(rewritten, out, s, target)
        spec = self.lookup(obj) if obj is not None else None
        if spec is not None:
            if spec.prim.vjp is None:
                raise self.fail(s, f"`{func_src}` ({spec.prim.name}) has no gradient in the registry",
                                "Declare its VJP rule with defop, wrap the call with dualtape.custom_gradient, "
                                "or mark it non-differentiable (stop_gradient).")
            keywords = {k.arg: k.value for k in e.keywords}
            try:
                inputs, static = spec.bind(list(e.args), keywords)
                opmap.refuse_non_float_dtype(spec, list(e.args), keywords, self.locals, self.info.namespace)
            except opmap.VariadicError as exc:
                raise self.fail(s, exc.args[0], exc.args[1]) from None
            except TypeError as exc:
                raise self.fail(s, f"cannot bind the arguments of `{func_src}`: {exc}",
                                "Call it with NumPy's signature.") from None
            if spec.prim.variadic and spec.wrapper is None:
                inputs = list(e.args)
            as_array = not spec.prim.variadic and opmap.lookup(obj) is spec  # a registry op, not an adjoint helper
            atoms = [self.expr(self.operand(a) if as_array and k not in spec.prim.nondiff_argnums else a, out, s)
                     if a is not None else None for k, a in enumerate(inputs)]
            for k, v in static.items():
                if self.expr_varied(v):
                    raise self.fail(s, f"the static argument `{k}` of `{func_src}` depends on a differentiated value",
                                    "Static arguments (axis, shape, ...) must not depend on the inputs being differentiated.")
            if spec.prim.name == "GatherV2" and syntax.is_constant(static.get("axis")) and static["axis"].value is None:
                # np.take without axis flattens x first (dnp.take does it at run time)
                static["axis"] = quote.expr("take_axis(X)", X=atoms[0])
            if spec.prim.name == "PadV2" and "pad_width" in static and not is_pad_pairs(static["pad_width"]):
                # dnp.pad spreads `1` or `(1, 2)` over the axes at run time; the rules need the pairs
                static["pad_width"] = quote.expr("pad_pairs(PAD_WIDTH, X)", PAD_WIDTH=static["pad_width"], X=atoms[0])
            call = syntax.copy(e)
            mapping = {id(a): atom for a, atom in zip(inputs, atoms) if a is not None}
            call.args = [syntax.copy(mapping.get(id(a), a)) for a in e.args]
            for k in call.keywords:
                orig = keywords[k.arg]
                k.value = syntax.copy(mapping.get(id(orig), orig))
            if spec.prim.variadic and spec.wrapper is not None:  # the list of arrays, written with atoms
                seq_at = [(call.args, 0)] if e.args and isinstance(e.args[0], (n.List, n.Tuple)) else [
                    (call.keywords, j) for j, k in enumerate(e.keywords) if k.arg == "arrays"]
                for holder, j in seq_at:
                    orig = e.args[0] if holder is call.args else e.keywords[j].value
                    seq = type(orig)(elts=[syntax.copy(mapping.get(id(x), x)) for x in orig.elts], ctx=n.Load())
                    if holder is call.args:
                        holder[0] = seq
                    else:
                        holder[j].value = seq
            name = target or self.fresh(name_hint(getattr(obj, "__name__", "call"), *[a for a in atoms if a is not None][:1]))
            self._emit(Op(target=name, kind="prim", expr=call, args=[a for a in atoms],
                          line=line, text=text, spec=spec, static=static), out)
            return syntax.name(name)
        if obj is not None and self.reads_source(obj):
            value = list_arguments.returning_call(self, e, obj, out, s, target=target)
            if value is not None:  # take(acc) changing the caller's own list: acc rebound to the result
                return value
            self.check_no_mutation(e, obj, s)
            args = [self.expr(a, out, s) for a in e.args]
            kws = {k.arg: self.expr(k.value, out, s) for k in e.keywords}
            call = n.Call(func=syntax.copy(e.func), args=[syntax.copy(a) for a in args],
                          keywords=[n.keyword(arg=k, value=syntax.copy(v)) for k, v in kws.items()])
            name = target or self.fresh(name_hint(obj.__name__, *args[:1]))
            self._emit(Op(target=name, kind="call", expr=call, args=args,
                          line=line, text=text, fn=obj, keywords=kws), out)
            return syntax.name(name)
        what = f"`{func_src}`" if obj is None else f"`{func_src}` ({type(obj).__name__})"
        raise self.fail(s, f"the call of {what} on differentiated values cannot be differentiated: "
                        "it is neither a registry op nor a Python function with readable source",
                        "Wrap it with dualtape.custom_gradient, declare it with defop, or mark it "
                        "non-differentiable (stop_gradient).")


def _is_complex(node, resolve):
    """A complex literal, or a call of complex / np.complex128 / np.complex64."""
    return (isinstance(node, n.Constant) and isinstance(node.value, complex)) or (
        isinstance(node, n.Call) and resolve(node.func) in (complex, np.complex128, np.complex64))


