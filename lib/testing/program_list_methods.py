"""List methods and comprehensions in `programs()`: lists the program creates and changes with
`append`, `extend`, `insert` and `pop` (in a loop or not), and lists built by comprehensions
(with an `if` filter, over a range or inside a larger expression); then read as in
program_lists.py (items, `np.stack`). The transformer writes them as list operations
(frontend/list_methods.py, comprehensions.py). Also `augassign_alias`: `s = a; s += v` where `a`
is a number (`+=` rebinds it) or `s` a copy the function made (`s = u * 1.0`), which the
version for those argument types accepts; and `dict_literal`: a dict display with constant
keys read by key, by `.get` and in a loop over its items, or dict comprehensions (over a range
with a filter, over the display's items, over names from `enumerate`) read by key and in a loop
over their keys (frontend/dicts.py)."""

from .program_exprs import Expr

LIST_METHOD_FEATURES = ("list_append", "list_pop", "listcomp", "augassign_alias", "dict_literal")


class ListMethodStatements:
    """Mixed into `ListStatements`: `list_method_statement(env, kind)` for LIST_METHOD_FEATURES."""

    def list_method_statement(self, env, kind):
        if kind == "augassign_alias":
            return self.augassign_alias(env)
        if kind == "dict_literal":
            return self.dict_literal(env)
        n = self.n
        shape = self.shape_choice()
        ys = self.new_name("ys")
        k = self.new_name("k")
        inner = env.child()
        count = self.draw(self.st.sampled_from([2, n]))
        inner.ints[k] = count
        if kind == "listcomp":
            item = self.expr(inner, shape, 1).text
            form = self.draw(self.st.integers(0, 2))
            if form == 0:
                lines = [f"{ys} = [{item} * ({k} + 1.0) for {k} in range({count})]"]
            elif form == 1:
                lines = [f"{ys} = [{item} * ({k} + 1.0) for {k} in range({count}) if {k} != 1]"]
                count -= 1
            else:  # inside a larger expression: a list of its own
                lines = [f"{ys} = [{self.expr(env, shape, 1).text}] + [{item} * ({k} + 1.0) for {k} in range({count})]"]
                count += 1
            return lines + [self.list_read(env, ys, count, shape)]
        start = self.draw(self.st.sampled_from(["[]", "first"]))
        lines = [f"{ys} = []" if start == "[]" else f"{ys} = [{self.expr(env, shape, 1).text}]"]
        count += start != "[]"
        item = self.expr(inner, shape, 1).text
        lines += [f"for {k} in range({count - (start != '[]')}):", f"    {ys}.append({item} * ({k} + 1.0))"]
        if self.draw(self.st.booleans()):
            a, b = self.expr(env, shape, 1).text, self.expr(env, shape, 1).text
            lines.append(self.draw(self.st.sampled_from([f"{ys}.extend([{a}, {b}])", f"{ys}.insert(1, {a})"])))
            count += 2 if lines[-1].startswith(f"{ys}.extend") else 1
        if kind == "list_pop":
            v = self.new_name("v")
            index = self.draw(self.st.sampled_from(["", "0", "-1", "1"]))
            lines.append(f"{v} = {ys}.pop({index})")
            shared = frozenset(name for name in env.vars if name in " ".join(lines).replace("(", " ").split())
            self.bind(env, v, shape, Expr(v, view=True, names=shared))  # an item: may be a variable's array
            count -= 1
        return lines + [self.list_read(env, ys, count, shape)]

    def augassign_alias(self, env):
        """`s = a; s += v` on a number `a`, or on a copy `s = u * 1.0` of an array."""
        names = sorted(env.vars)
        if not names:
            return []
        a = self.draw(self.st.sampled_from(names))
        shape = env.vars[a]
        s = self.new_name("s")
        first = f"{s} = {a}" if shape == () else f"{s} = {a} * 1.0"
        op = self.draw(self.st.sampled_from(["+=", "-=", "*="]))
        e = self.expr(env, self.draw(self.st.sampled_from([shape, ()])), 1)
        self.bind(env, s, shape, Expr("fresh"))
        return [first, f"{s} {op} {e.text}"]

    def dict_literal(self, env):
        """`d = {"a": e1, "b": e2}` or a dict comprehension, then a new variable read out of it."""
        shape = self.shape_choice()
        d, r = self.new_name("d"), self.new_name("r")
        a, b = self.expr(env, shape, 1).text, self.expr(env, shape, 1).text
        lines = [f"{d} = {{'a': {a}, 'b': {b}}}"]
        form = self.draw(self.st.sampled_from([0, 1, 2, 3, 3, 4, 4, 5, 5]))  # (comprehensions: twice as often)
        k, v = self.new_name("k"), self.new_name("v")
        if form >= 3:  # a comprehension's values read a variable too (most often an argument's value)
            names = sorted(name for name, have in env.vars.items() if have in (shape, ()))
            if names:
                u = self.draw(self.st.sampled_from(names))
                a, b = f"({a} + {u})", f"({b} * {u})"
        if form == 0:
            lines.append(f"{r} = {d}['a'] * np.sin({d}['b'])")
        elif form == 1:
            lines.append(f"{r} = {d}.get('b') + {d}.get('c', {d}['a'])")
        elif form == 2:
            lines += [f"{r} = {d}['a'] * 0.5", f"for {k}, {v} in {d}.items():", f"    {r} = {r} * np.cos({v})"]
        elif form == 3:  # keys from a range, filtered
            lines = [f"{d} = {{{k}: {a} * ({k} + 1.0) for {k} in range(3) if {k} != 1}}",
                     f"{r} = {d}[0] * np.sin({d}[2])"]
        elif form == 4:  # over the items of another dict, then a loop over the keys
            e = self.new_name("e")
            lines += [f"{e} = {{{k}: np.sin({v}) * {b} for {k}, {v} in {d}.items()}}", f"{r} = {e}['a'] * 0.5",
                      f"for {k} in {e}:", f"    {r} = {r} + np.cos({e}[{k}])"]
        else:  # names from enumerate
            lines = [f"{d} = {{{k}: {a} * ({v} + 1.0) for {v}, {k} in enumerate(('a', 'b'))}}",
                     f"{r} = {d}['b'] - np.sin({d}['a'])"]
        self.bind(env, r, shape, Expr("fresh"))
        return lines
