"""Python lists in `programs()`: lists grown by concatenation (`ys = ys + [v]`, `[v] + ys`,
in a loop or not), writes into list items (`ys[1] = v`), and tuple packing and unpacking of
lists (`p, q = ys`, `pair = (ys, v)`, `[p, q] = a, b`). The transformer reads them
(normalize.py tells users to write `ys = ys + [v]` instead of `.append`).

A list lives within the statements that build and read it (it is not a typed variable of
`Env`); what is read out of it is bound to a new float, vector or matrix variable.
"""

from .program_exprs import Expr
from .program_list_methods import LIST_METHOD_FEATURES, ListMethodStatements

LIST_FEATURES = ("list_concat", "list_concat_chain", "list_write", "list_unpack") + LIST_METHOD_FEATURES


class ListStatements(ListMethodStatements):
    """Mixed into `ProgramGen`: `list_statement(env, kind)` for the kinds of `LIST_FEATURES`."""

    def list_read(self, env, ys, count, shape, stack=True):
        """Bind a new variable to something read out of the list `ys` of `count` items (the
        transformer refuses np.stack of a list grown by `+`: stack=False there)."""
        n = self.n
        i, j = self.draw(self.st.integers(0, count - 1)), self.draw(self.st.integers(-count, count - 1))
        options = [(f"{ys}[{i}] * {ys}[{j}]", shape), (f"{ys}[{i}] + np.sin({ys}[{j}])", shape)]
        if stack and count == n and len(shape) < 2:
            options.append((f"np.stack({ys})", (n,) + shape))
        if stack:
            options.append((f"np.sum(np.stack({ys}) ** 2)", ()))
        text, out = self.draw(self.st.sampled_from(options))
        name = self.new_name("r")
        self.bind(env, name, out, Expr("fresh"))
        return f"{name} = {text}"

    def list_statement(self, env, kind):
        if kind in LIST_METHOD_FEATURES:
            return self.list_method_statement(env, kind)
        n = self.n
        shape = self.shape_choice()
        ys = self.new_name("ys")
        if kind == "list_concat":
            inner = env.child()
            if self.draw(self.st.booleans()):  # grown in a loop
                k = self.new_name("k")
                count = self.draw(self.st.sampled_from([2, n]))
                inner.ints[k] = count
                start = self.draw(self.st.sampled_from(["[]", "first"]))
                lines = [f"{ys} = []" if start == "[]" else f"{ys} = [{self.expr(env, shape, 1).text}]"]
                item = self.expr(inner, shape, 1).text
                grow = self.draw(self.st.sampled_from([f"{ys} + [{item} * ({k} + 1.0)]",
                                                       f"[{item} * ({k} + 1.0)] + {ys}"]))
                lines += [f"for {k} in range({count}):", f"    {ys} = {grow}"]
                count += start != "[]"
            else:
                items = [self.expr(env, shape, 1).text for _ in range(3)]
                grow = f"{ys} + [{items[1]}, {items[2]}]"
                if self.chance("list_concat_chain"):  # three operands: `[b] + ys + [c]`
                    grow = f"[{items[1]}] + {ys} + [{items[2]}]"
                lines = [f"{ys} = [{items[0]}]", f"{ys} = {grow}"]
                count = 3
            return lines + [self.list_read(env, ys, count, shape, stack=False)]
        if kind == "list_write":
            count = self.draw(self.st.integers(2, 3))
            items = [self.expr(env, shape, 1).text for _ in range(count)]
            lines = [f"{ys} = [{', '.join(items)}]"]
            for _ in range(self.draw(self.st.integers(1, 2))):
                i = self.draw(self.st.integers(0, count - 1))
                value = self.expr(env, shape, 1).text
                lines.append(self.draw(self.st.sampled_from([f"{ys}[{i}] = {value}",
                                                              f"{ys}[{i}] = {ys}[{i}] * {value}"])))
            return lines + [self.list_read(env, ys, count, shape)]
        # list_unpack
        a, b = self.expr(env, shape, 1), self.expr(env, shape, 1)
        p, q = self.new_name("p"), self.new_name("q")
        form = self.draw(self.st.integers(0, 3))
        if form == 0:
            lines = [f"{p}, {q} = [{a.text}, {b.text}]"]
        elif form == 1:
            lines = [f"{ys} = [{a.text}, {b.text}]", f"{p}, {q} = {ys}"]
        elif form == 2:
            pair = self.new_name("pair")
            lines = [f"{ys} = [{a.text}]", f"{pair} = ({ys}, {b.text})", f"{ys}, {q} = {pair}",
                     f"{p} = {ys}[0]"]
        else:
            lines = [f"[{p}, {q}] = {a.text}, {b.text}"]
        self.bind(env, p, shape, a)  # `p, q = [x, y]`: p is x, not a fresh array
        self.bind(env, q, shape, b)
        return lines
