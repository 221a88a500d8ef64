"""Stacks in native code (lowering.py's part for them): C buffers of 8-byte slots, made by
malloc, grown by realloc (twice as long), freed on every exit; a NumPy array's length is its
capacity, a list keeps its own. Every index is checked at once: out of bounds (negative too:
Python's wrap-around is not here), the call fails before memory is touched."""

import ast

from .kind_rules import Buffer

LIST_START = 8  # a list's first capacity


class StackCode:
    """Mixed into Lowering: the code of `S = np.empty(n)`, `S = []`, `S = grow(S)`, `S[i]`,
    `S[i, k]`, `L.append(x)` and `L.pop()`."""

    def width(self, name):
        """The 8-byte slots of one element of stack `name`."""
        return sum(len(kinds) for _, kinds in self.offsets[name])

    def write_item(self, name, row, k, kind, value):
        """Item k of row `row` of stack `name` (of `kind`) set to `value`."""
        first, kinds = self.offsets[name][k]
        for j, (leaf_kind, leaf) in enumerate(zip(kinds, self.coerce(value, kind))):
            self.write(self.address(name, row, first + j), leaf_kind, leaf)

    def read_item(self, name, row, k, kind):
        first, kinds = self.offsets[name][k]
        leaves = [self.read(self.address(name, row, first + j), leaf_kind) for j, leaf_kind in enumerate(kinds)]
        if kind == "o":
            return ("o", (leaves[0][1], leaves[1][1]))
        return ("n", None) if kind == "n" else leaves[0]

    def make_buffer(self, name, value):
        """`S = np.empty(n)`, `S = []` or `S = grow(S)`."""
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):  # grow: twice as long
            self.check_defined(name)
            fresh, capacity = self.doubled(name, self.op(f'load i64, ptr %"c.{name}"'))
        else:
            old = self.op(f'load ptr, ptr %"p.{name}"')
            self.emit(f"call void @free(ptr {old})")
            if isinstance(value, ast.List):
                capacity = str(LIST_START)
            else:
                shape = value.args[0]
                capacity = self.to_i(self.expr(shape.elts[0] if isinstance(shape, ast.Tuple) else shape))
                self.fail_now(self.op(f"icmp slt i64 {capacity}, 0"))
            self.emit(f'store ptr null, ptr %"p.{name}"')
            fresh = self.allocate(capacity, self.width(name), "null")
        self.emit(f'store ptr {fresh}, ptr %"p.{name}"')
        self.emit(f'store i64 {capacity}, ptr %"c.{name}"')
        if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
            self.emit(f'store i64 0, ptr %"n.{name}"')
        self.emit(f'store i1 true, ptr %"d.{name}"')
        self.defined.add(name)

    def doubled(self, name, capacity):
        """(the pointer, the capacity) of stack `name`'s buffer reallocated twice as long."""
        self.fail_now(self.op(f"icmp ugt i64 {capacity}, {2 ** 40}"))
        bigger = self.op(f"shl i64 {capacity}, 1")
        return self.allocate(bigger, self.width(name), self.op(f'load ptr, ptr %"p.{name}"')), bigger

    def allocate(self, capacity, width, old):
        """realloc(old, capacity slots of `width` 8-byte items, at least one), failing on null."""
        count = self.op(f"select i1 {self.op(f'icmp eq i64 {capacity}, 0')}, i64 1, i64 {capacity}")
        size = self.op(f"mul i64 {count}, {8 * width}")
        fresh = self.op(f"call ptr @realloc(ptr {old}, i64 {size})")
        self.fail_now(self.op(f"icmp eq ptr {fresh}, null"))
        return fresh

    def check_defined(self, name):
        """Fail where `name` is read before it is assigned (UnboundLocalError); at once for a
        stack (its pointer is null). No check where every path here assigns it (`defined`)."""
        if name in self.defined:
            return
        flag = self.op(f'load i1, ptr %"d.{name}"')
        unset = self.op(f"xor i1 {flag}, true")
        (self.fail_now if isinstance(self.kinds.names[name], Buffer) else self.fail_if)(unset)

    def address(self, name, row, k):
        """A pointer to slot k of row `row` (an i64) of buffer `name`, failing out of bounds."""
        self.check_defined(name)
        which = "n" if self.kinds.names[name].is_list else "c"
        limit = self.op(f'load i64, ptr %"{which}.{name}"')
        self.fail_now(self.op(f"icmp uge i64 {row}, {limit}"))  # (negative rows too: Python's wrap-around is not here)
        index = self.op(f"add i64 {self.op(f'mul i64 {row}, {self.width(name)}')}, {k}")
        base = self.op(f'load ptr, ptr %"p.{name}"')
        return self.op(f"getelementptr i64, ptr {base}, i64 {index}")

    def read(self, pointer, kind):
        if kind == "f":
            return ("f", self.op(f"load double, ptr {pointer}"))
        word = self.op(f"load i64, ptr {pointer}")
        return ("i", word) if kind == "i" else ("b", self.op(f"icmp ne i64 {word}, 0"))

    def write(self, pointer, kind, value):
        if kind == "f":
            self.emit(f"store double {self.to_f(value)}, ptr {pointer}")
        else:
            self.emit(f"store i64 {self.to_i(value)}, ptr {pointer}")

    def index(self, buffer, node):
        """(row, slot) of a subscript node of a 1-D or 2-D array."""
        index = node.slice
        if buffer.rows:
            return self.to_i(self.expr(index.elts[0])), index.elts[1].value
        return self.to_i(self.expr(index)), 0

    def store_item(self, target, value):
        name = target.value.id
        buffer = self.kinds.names[name]
        row, k = self.index(buffer, target)
        self.write_item(name, row, k, buffer.items[k], value)

    def append(self, name, value):
        buffer = self.kinds.names[name]
        self.check_defined(name)
        length = self.op(f'load i64, ptr %"n.{name}"')
        capacity = self.op(f'load i64, ptr %"c.{name}"')
        grow, put = self.label("grow"), self.label("put")
        self.branch(self.op(f"icmp eq i64 {length}, {capacity}"), grow, put)
        self.lines.append(f"{grow}:")
        self.open = True
        fresh, bigger = self.doubled(name, capacity)
        self.emit(f'store ptr {fresh}, ptr %"p.{name}"')
        self.emit(f'store i64 {bigger}, ptr %"c.{name}"')
        self.start(put)
        self.emit(f'store i64 {self.op(f"add i64 {length}, 1")}, ptr %"n.{name}"')
        values = value[1] if buffer.rows else [value]
        for k, (kind, item) in enumerate(zip(buffer.items, values)):
            self.write_item(name, length, k, kind, item)

    def pop(self, name):
        buffer = self.kinds.names[name]
        self.check_defined(name)
        length = self.op(f'load i64, ptr %"n.{name}"')
        self.fail_now(self.op(f"icmp eq i64 {length}, 0"))  # (pop from an empty list: IndexError)
        last = self.op(f"sub i64 {length}, 1")
        values = [self.read_item(name, last, k, kind) for k, kind in enumerate(buffer.items)]
        self.emit(f'store i64 {last}, ptr %"n.{name}"')
        return ("tuple", values) if buffer.rows else values[0]
