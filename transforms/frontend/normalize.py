"""From a function's gast tree to a small IR: one operation per statement, over names.

`y = np.sin(x * w) + b` becomes `_mul_x_w = x * w`, `_sin_mul_x_w = np.sin(_mul_x_w)`,
`y = _sin_mul_x_w + b`: each `Op` is one registry primitive (or a copy, subscript read,
tuple build, or call of a user function) whose VJP rule the reverse pass instantiates.
Statements that carry no gradient stay verbatim as `Primal`. Control flow stays
structured: `If`, `For` (over a range; other iterables are indexed), `While`, and
subscript writes `SetItem`, which the backward sweep must undo.
"""

import builtins

import numpy as np

from ..ir import syntax
from ..calls import list_arguments, builtins as builtin_calls, odeint as odeint_calls, opmap
from ..calls.generators import rewrite_generator_calls
from ..ir.syntax import nodes as n
from ..ir.nodes import For, If, Op, Primal, SetItem, Stmt, While, is_name  # noqa: F401 (re-exported)
from .normalize_expr import Expressions
from .expr_atoms import as_load
from .desugar import stmt_at
from .comprehensions import hoist_comprehensions
from .dicts import (dict_loop, dict_parameters, for_dict, hoist_dict_comprehensions, rewrite_dict_iterations,
                    rewrite_dict_reads, rewrite_dict_writes)
from .list_methods import rewrite_list_methods
from .mutations import MUTATORS, changed_names, in_place_numpy, mutated_parameters, value_arguments
from ..templates import quote
from .parse import error


class Normalizer(Expressions):
    def __init__(self, info, params, wrt_names, api):
        self.info, self.api = info, api
        self.params = params
        names = [x for x in syntax.walk(info.node) if isinstance(x, n.Name)]
        self.locals = set(params) | {x.id for x in names if isinstance(x.ctx, n.Store)}
        self.used = self.locals | {x.id for x in names}
        self.varied = set(wrt_names)
        self._varied_fixpoint()
        if not info.filename.startswith("<dualtape "):  # comprehensions as loops, `ys.append(v)` as `ys = ys + [v]`
            rewrite_generator_calls(info.node, self.resolve, lambda version: list_arguments.register(self, version))
            if rewrite_dict_iterations(info.node, self.expr_varied, self.resolve,  # `for k in d`: over d.keys()
                                       dict_parameters(info.fn)):
                self.varied = set(wrt_names)  # (the keys were taken for items of d)
                self._varied_fixpoint()
            while (rewrite_dict_writes(info.node, self.expr_varied, self.resolve)  # d[k] = v: a new dict
                   | hoist_dict_comprehensions(info.node, self.expr_varied, self.resolve)  # dict(zip(keys, [...]))
                   | hoist_comprehensions(info.node, self.expr_varied, self.used)
                   | rewrite_dict_reads(info.node, params, self.expr_varied)  # `for k, v in d.items()`: its keys
                   | rewrite_list_methods(info.node, params, self.expr_varied, self.resolve)):
                self._varied_fixpoint()
            names = [x for x in syntax.walk(info.node) if isinstance(x, n.Name)]
            self.locals = set(params) | {x.id for x in names if isinstance(x.ctx, n.Store)}
            self.used = self.locals | {x.id for x in names}
        self.counter = 0
        self.temps = set()  # the names fresh() made: a user's `_sin_x` is never one of them

    # -- resolving names ----------------------------------------------------------------------
    def resolve(self, node):
        """The object a call target names (globals, closure, builtins), or None for locals."""
        return opmap.resolve(node, self.locals, self.info.namespace)

    def lookup(self, obj):
        """The OpSpec of a call target (a registry op), or None."""
        return opmap.lookup(obj)

    def is_nondiff(self, obj):
        return opmap.is_nondiff(obj)

    def reads_source(self, obj):
        """Whether a call of `obj` is differentiated by reading its source (a user function)."""
        return opmap.is_user_function(obj)

    def call(self, e, out, s, target):  # scipy.integrate.odeint: a call op of its own (odeint_calls)
        obj = self.resolve(e.func)
        return (odeint_calls.normalize_call(self, obj, e, out, s, target) if odeint_calls.is_odeint(obj)
                else super().call(e, out, s, target))

    # -- varied analysis on the source (flow-insensitive) --------------------------------------
    def expr_varied(self, e):
        if e is None:
            return False
        if isinstance(e, n.Name):
            return e.id in self.varied
        if isinstance(e, n.Constant):
            return False
        if isinstance(e, n.BinOp):
            if isinstance(e.op, n.FloorDiv):
                return False
            return self.expr_varied(e.left) or self.expr_varied(e.right)
        if isinstance(e, n.UnaryOp):
            return not isinstance(e.op, (n.Not, n.Invert)) and self.expr_varied(e.operand)
        if isinstance(e, (n.Compare, n.BoolOp)):
            return False
        if isinstance(e, n.IfExp):
            return self.expr_varied(e.body) or self.expr_varied(e.orelse)
        if isinstance(e, n.Call):
            obj = self.resolve(e.func)
            if obj is None and isinstance(e.func, n.Attribute) and e.func.attr == "keys" and not e.args:
                return False  # a dict's keys: never differentiated
            if obj is not None and self.is_nondiff(obj):
                # np.full(shape, v), np.linspace(a, b, n) build arrays from their values
                return any(self.expr_varied(a) for a in value_arguments(obj, e))
            return any(self.expr_varied(a) for a in e.args) or any(
                self.expr_varied(k.value) for k in e.keywords) or (
                isinstance(e.func, n.Attribute) and obj is None and self.expr_varied(e.func.value))
        if isinstance(e, n.Attribute):
            return e.attr not in opmap.NONDIFF_ATTRS and self.expr_varied(e.value)
        if isinstance(e, n.Subscript):
            return self.expr_varied(e.value)
        if isinstance(e, (n.Tuple, n.List)):
            return any(self.expr_varied(x) for x in e.elts)
        if isinstance(e, n.Starred):
            return self.expr_varied(e.value)
        return bool(syntax.load_names(e) & self.varied)

    def _varied_fixpoint(self):
        # a call that changes a local list in place (`push(acc, x)`, `acc.append(x)` not yet
        # rewritten) makes it varied when a value it passes is: read like `acc = push(acc, x)`
        mutating = [(node, names) for node in syntax.walk(self.info.node) if isinstance(node, n.Call)
                    for names in [changed_names(node, self.locals, self.resolve)] if names]
        changed = True
        while changed:
            changed = False
            for call, names in mutating:
                if (any(map(self.expr_varied, call.args)) or any(self.expr_varied(k.value) for k in call.keywords)) \
                        and not names <= self.varied:
                    self.varied |= names
                    changed = True
            for node in syntax.walk(self.info.node):
                pairs = []
                if isinstance(node, (n.Assign, n.AnnAssign)) and node.value is not None:
                    targets = node.targets if isinstance(node, n.Assign) else [node.target]
                    pairs = [(t, node.value) for t in targets]
                elif isinstance(node, n.AugAssign):
                    pairs = [(node.target, node.value), (node.target, node.target)]
                elif isinstance(node, n.For):
                    loop = dict_loop(node.target, node.iter)
                    if loop is None:
                        pairs = [(node.target, node.iter)]
                    elif loop[2] is not None:  # a dict's values vary with it; its keys never do
                        pairs = [(loop[2], loop[0])]
                for target, value in pairs:
                    if self.expr_varied(value) or (isinstance(target, n.Subscript) and False):
                        root = target
                        while isinstance(root, (n.Subscript, n.Attribute)):
                            root = root.value
                        for name in syntax.store_names(target) | ({root.id} if isinstance(root, n.Name) else set()):
                            if name not in self.varied:
                                self.varied.add(name)
                                changed = True

    # -- helpers ----------------------------------------------------------------------------------
    def fresh(self, hint=None):
        if hint and hint.isidentifier() and hint not in self.used and len(hint) <= 24:
            self.used.add(hint)
            self.temps.add(hint)
            return hint
        while True:
            self.counter += 1
            name = f"_t{self.counter}"
            if name not in self.used:
                self.used.add(name)
                self.temps.add(name)
                return name

    def check_no_mutation(self, call, obj, s):
        """Refuse a call of a user function that changes an argument in place while any
        argument is differentiated: the transformer differentiates what a function returns,
        never what it does to its arguments (`helper(xs, a * 2)` doing `xs.append(v)` would
        get a zero gradient)."""
        if not (any(self.expr_varied(a) for a in call.args) or any(self.expr_varied(k.value) for k in call.keywords)):
            return
        changed = mutated_parameters(obj)
        arguments = sorted(k for k in changed if not k.startswith("global:"))
        if changed and not arguments:
            name = sorted(changed)[0]
            raise self.fail(s, f"`{obj.__name__}` changes the module-level `{name[7:]}` in place "
                            f"(`{changed[name]}`), which the transformer cannot track", f"Make "
                            f"{obj.__name__} return the new value and assign it, or use GradientTape for this code.")
        if changed:
            param, line = arguments[0], changed[arguments[0]]
            raise self.fail(s, f"`{obj.__name__}` changes its argument `{param}` in place (`{line}`), which the "
                            "transformer cannot track", f"Make {obj.__name__} return the new value (e.g. "
                            f"`return {param} + [v]`) and assign it, or use GradientTape for this code.")

    def fail(self, node, what, fix):
        return error(self.api, self.info, node, what, fix)

    def loc(self, node):
        return self.info.abs_line(node), self.info.line_text(node)

    # -- statements -------------------------------------------------------------------------------
    def block(self, stmts):
        out = []
        for s in stmts:
            self.stmt(s, out)
        return out

    def _primal(self, node, out):
        line, text = self.loc(node)
        for loop in syntax.walk(node):
            # desugar_jumps took `break` out of the body for the loop IR to test its flag at the
            # end of each pass; a loop kept as written must test it itself (without it an early
            # return in an inactive loop runs on, and jvp / preserve_result give the value of a
            # later pass)
            flag = getattr(loop, "_dualtape_break", None)
            if flag and isinstance(loop, (n.For, n.While)):
                check = stmt_at("if FLAG:\n    break", loop.body[-1] if loop.body else loop, FLAG=flag)
                loop.body = list(loop.body) + [check]
                loop._dualtape_break = None
        out.append(Primal(node, line, text, changed_names(node, self.locals, self.resolve)))

    def stmt(self, s, out):
        line, text = self.loc(s)
        if isinstance(s, n.AnnAssign):
            if s.value is None:
                return
            s = n.Assign(targets=[s.target], value=s.value, type_comment=None)
            s.lineno = line - self.info.first_line + 1
        if isinstance(s, n.Assign):
            return self.assign(s, out)
        if isinstance(s, n.AugAssign):
            if not (self.expr_varied(s.value) or self.expr_varied(s.target)) and (
                    self.info.filename.startswith("<dualtape ") or not isinstance(s.target, (n.Name, n.Subscript))):
                return self._primal(s, out)  # generated code read back (hvp): integer loop counters
            # `c += v` is differentiated as `c = c + v`, also when inactive: on an array, `+=`
            # writes in place and the backward sweep would read the new value where it saved the
            # old one. aliasing.py has checked that no other variable shares `c`'s memory, so
            # the new array is indistinguishable from the in-place result.
            load = syntax.copy(s.target)
            for sub in syntax.walk(load):
                if hasattr(sub, "ctx"):
                    sub.ctx = n.Load()
            new = n.Assign(targets=[s.target], value=n.BinOp(left=load, op=s.op, right=s.value),
                           type_comment=None)
            new.lineno = s.lineno
            return self.assign(new, out)
        if isinstance(s, n.Expr):
            if syntax.is_constant(s.value):
                return None
            call = s.value
            if (isinstance(call, n.Call) and isinstance(call.func, n.Attribute)
                    and call.func.attr in MUTATORS and self.expr_varied(call.func.value) is not None
                    and (self.expr_varied(call.func.value) or any(self.expr_varied(a) for a in call.args))):
                raise self.fail(s, f"in-place mutation `.{call.func.attr}(...)` of a differentiated value "
                                "cannot be tracked", "Build a new list or array instead (e.g. "
                                "`xs = xs + [v]`, `np.concatenate`), or compute it outside the function.")
            if isinstance(call, n.Call):
                obj = self.resolve(call.func)
                if obj is not None and opmap.is_user_function(obj):
                    if list_arguments.returning_call(self, call, obj, out, s, value=False) is not None:
                        return None  # push(acc, v) changing the caller's own list: acc rebound to the result
                    self.check_no_mutation(call, obj, s)
                elif in_place_numpy(obj) and any(map(self.expr_varied, call.args + [k.value for k in call.keywords])):
                    raise self.fail(s, *in_place_numpy(obj))
            return self._primal(s, out)
        if isinstance(s, n.Pass):
            return None
        if isinstance(s, (n.Assert, n.Raise)):
            return self._primal(s, out)
        if isinstance(s, n.If):
            if not self._writes_varied(s):
                return self._primal(s, out)
            out.append(If(s.test, self.block(s.body), self.block(s.orelse), line, text))
            return None
        if isinstance(s, n.For):
            return self.for_loop(s, out)
        if isinstance(s, n.While):
            if not self._writes_varied(s):
                return self._primal(s, out)
            out.append(While(s.test, self.block(s.body), getattr(s, "_dualtape_break", None), line, text))
            return None
        if isinstance(s, n.Return):
            raise AssertionError("returns are desugared before normalization")
        if isinstance(s, (n.Break, n.Continue)):
            raise AssertionError("jumps are desugared before normalization")
        raise self.fail(s, f"`{type(s).__name__}` statements are not supported by the transformer",
                        "Rewrite it with assignments, if/else and loops, or use GradientTape for it.")

    def _writes_varied(self, s):
        for node in syntax.walk(s):
            if isinstance(node, (n.Assign, n.AugAssign, n.AnnAssign)):
                targets = node.targets if isinstance(node, n.Assign) else [node.target]
                for t in targets:
                    root = t
                    while isinstance(root, (n.Subscript, n.Attribute)):
                        root = root.value
                    names = syntax.store_names(t) | ({root.id} if isinstance(root, n.Name) else set())
                    if names & self.varied:
                        return True
            if isinstance(node, n.Expr) and isinstance(node.value, n.Call) and self.expr_varied(node.value):
                return True
        return False

    def assign(self, s, out):
        line, text = self.loc(s)
        targets, value = s.targets, s.value
        if len(targets) > 1:
            first = n.Assign(targets=[targets[0]], value=value, type_comment=None)
            first.lineno = s.lineno
            self.assign(first, out)
            for t in targets[1:]:
                nxt = n.Assign(targets=[t], value=syntax.copy(as_load(targets[0])), type_comment=None)
                nxt.lineno = s.lineno
                self.assign(nxt, out)
            return
        target = targets[0]
        if isinstance(target, n.Name):
            if not self.expr_varied(value):
                return self._primal(s, out)
            self.expr(value, out, s, target=target.id)
            return
        if isinstance(target, (n.Tuple, n.List)):
            names = target.elts
            if any(isinstance(t, n.Starred) for t in names):
                raise self.fail(s, "a starred target in tuple unpacking is not supported",
                                "Unpack each item by index (`a, rest = xs[0], xs[1:]`).")
            if not self.expr_varied(value):
                return self._primal(s, out)
            if not all(isinstance(t, n.Name) for t in names):
                # `(a, b), c = ...`, `x[0], y = ...`: Python evaluates the whole value first, then
                # binds the items left to right, each as an assignment of its own
                if isinstance(value, (n.Tuple, n.List)) and len(value.elts) == len(names):
                    items = [self.expr(v, out, s, target=self.fresh()) for v in value.elts]
                else:
                    whole = self.expr(value, out, s)
                    items = []
                    for i in range(len(names)):
                        item, index = self.fresh(), syntax.constant(i)
                        self._emit(Op(target=item, kind="getitem", expr=n.Subscript(value=syntax.copy(whole), slice=index,
                                                                                    ctx=n.Load()),
                                      args=[whole], line=line, text=text, index=index), out)
                        items.append(syntax.name(item))
                for t, item in zip(names, items):
                    part = n.Assign(targets=[t], value=syntax.copy(item), type_comment=None)
                    part.lineno = s.lineno
                    self.assign(part, out)
                return
            if isinstance(value, (n.Tuple, n.List)) and len(value.elts) == len(names):
                clash = {t.id for t in names} & set().union(*(syntax.load_names(v) for v in value.elts))
                atoms = []
                for t, v in zip(names, value.elts):
                    temp = self.fresh() if clash else t.id
                    atoms.append(self.expr(v, out, s, target=temp))
                if clash:
                    for t, a in zip(names, atoms):
                        self._copy(t.id, a, out, s)
                return
            whole = self.expr(value, out, s)
            for i, t in enumerate(names):
                index = syntax.constant(i)
                self._emit(Op(target=t.id, kind="getitem", expr=n.Subscript(value=syntax.copy(whole), slice=index, ctx=n.Load()),
                              args=[whole], line=line, text=text, index=index), out)
            return
        if isinstance(target, n.Subscript):
            root = target.value
            if not isinstance(root, n.Name):
                raise self.fail(s, "assignment into a nested subscript or attribute of a differentiated value",
                                "Assign into a plain array name (`x[i, j] = v`).")
            if not (self.expr_varied(value) or root.id in self.varied) and root.id not in self.locals:
                return self._primal(s, out)
            # an inactive local array is written as a SetItem too: the write must stay in the
            # forward sweep and be undone in the backward sweep, which may read the old value
            atom = self.expr(value, out, s)
            out.append(SetItem(root.id, target.slice, atom, line, text))
            return
        if isinstance(target, n.Attribute):
            raise self.fail(s, f"attribute assignment `{syntax.unparse(target)} = ...` cannot be tracked",
                            "Return the value instead, or keep the object outside the differentiated function.")
        raise self.fail(s, f"assignment target `{syntax.unparse(target)}` is not supported",
                        "Assign to a name, a tuple of names, or a subscript of a name.")

    def _copy(self, target, atom, out, s):
        line, text = self.loc(s)
        if is_name(atom):
            self._emit(Op(target=target, kind="copy", expr=syntax.copy(atom), args=[atom],
                          line=line, text=text), out)
        else:
            node = n.Assign(targets=[syntax.name(target, store=True)], value=syntax.copy(atom), type_comment=None)
            node.lineno = s.lineno
            out.append(Primal(node, line, text, changed_names(node, self.locals, self.resolve)))

    def _emit(self, op, out):
        self.varied.add(op.target)
        # an op never reads its own target: `x = x * 2` becomes `_t = x * 2; x = _t`
        if op.kind != "copy" and op.target in {a.id for a in op.args if is_name(a)} | op.reads:
            final = op.target
            op.target = self.fresh()
            op.writes = {op.target}
            out.append(op)
            copy = Op(target=final, kind="copy", expr=syntax.name(op.target), args=[syntax.name(op.target)],
                      line=op.line, text=op.text, split=True)
            out.append(copy)
            return
        out.append(op)

    def for_loop(self, s, out):
        line, text = self.loc(s)
        flag = getattr(s, "_dualtape_break", None)
        if not self._writes_varied(s):
            return self._primal(s, out)
        flat = builtin_calls.flat_loop(self, s, out)  # zip / enumerate / reversed nested, enumerate's start
        if flat is not None:
            s = flat
        over_dict = for_dict(self, s, out)  # `for k, v in d.items()`: over the list of d's keys
        if over_dict is not None:
            out.append(over_dict)
            return
        it = s.iter
        obj = self.resolve(it.func) if isinstance(it, n.Call) else None
        if obj is builtins.range and isinstance(s.target, n.Name):
            out.append(For(s.target.id, it, self.block(s.body), flag, line, text))
            return
        prefix = []
        if obj is builtins.enumerate and isinstance(s.target, n.Tuple) and len(s.target.elts) == 2:
            index_name, elem_targets, seqs = s.target.elts[0], [s.target.elts[1]], [it.args[0]]
        elif obj is builtins.zip and isinstance(s.target, n.Tuple) and len(s.target.elts) == len(it.args):
            index_name, elem_targets, seqs = None, s.target.elts, list(it.args)
        else:
            index_name, elem_targets, seqs = None, [s.target], [it]
        seq_atoms = []
        rebound = syntax.store_names(n.Module(body=s.body, type_ignores=[])) | syntax.store_names(s.target)
        for seq in seqs:
            if isinstance(seq, n.Name) and seq.id in rebound:
                # Python iterates over the object `x` names when the loop starts: the body may
                # rebind `x` (`for v in x: x = [v, v]`), so the loop reads a copy of the name
                seq_atoms.append(self.expr(seq, out, s, target=self.fresh("_items")))
            elif self.expr_varied(seq) or (isinstance(seq, n.Name) and seq.id not in self.params):
                seq_atoms.append(self.expr(seq, out, s) if self.expr_varied(seq) else seq)
            else:  # (also a parameter not differentiated: a dict argument iterates over its keys)
                tmp = self.fresh("_items")
                node = quote.stmt("ITEMS = list(SEQ)", ITEMS=tmp, SEQ=seq)
                node.lineno = s.lineno
                out.append(Primal(node, line, text))
                seq_atoms.append(syntax.name(tmp))
        if index_name is not None and isinstance(index_name, n.Name):
            var = index_name.id
        else:
            var = self.fresh("_i")
        lengths = [quote.expr("len(SEQ)", SEQ=a) for a in seq_atoms]
        length = lengths[0] if len(lengths) == 1 else n.Call(func=syntax.name("min"), args=lengths, keywords=[])
        iter_node = quote.expr("range(LENGTH)", LENGTH=length)
        for target, seq_atom in zip(elem_targets, seq_atoms):
            read = n.Subscript(value=syntax.copy(seq_atom), slice=syntax.name(var), ctx=n.Load())
            assign = n.Assign(targets=[target], value=read, type_comment=None)
            assign.lineno = s.lineno
            self.stmt(assign, prefix)
        out.append(For(var, iter_node, prefix + self.block(s.body), flag, line, text))
