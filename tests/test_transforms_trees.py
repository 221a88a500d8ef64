"""Generated code as trees (transforms/ir/code.py) and code from templates parsed once
(transforms/templates/quote.py): the pieces every stage after the front end builds with.

Emitters build `ast` statements from templates, passes rewrite them, and `render` writes the
text once: comments are statements (`Comment`), a template's text is parsed the first time
it is used and never again, and a placeholder is replaced by a node, never by text.
"""

import ast

import pytest

from dualtape.transforms.ir import code, syntax
from dualtape.transforms.ir.syntax import nodes as n
from dualtape.transforms.templates import quote


def test_render_writes_comments_where_they_stand():
    body = [code.Comment("forward"),
            quote.code_stmt("S = A * B", S="s", A="a", B="b"),
            ast.If(test=ast.Name(id="c", ctx=ast.Load()),
                   body=[code.Comment("b = a * a"), quote.code_stmt("ba = ba + bb * A", A=2.0)],
                   orelse=[code.Comment("else branch"), quote.code_stmt("ba = 1.0")]),
            code.Comment("backward")]
    assert code.render(body) == (
        "# forward\n"
        "s = a * b\n"
        "if c:\n"
        "    # b = a * a\n"
        "    ba = ba + bb * 2.0\n"
        "else:\n"
        "    # else branch\n"
        "    ba = 1.0\n"
        "# backward")


def test_a_trailing_comment_ends_the_line_before_it():
    loop = quote.code_stmt("if N > 0:\n    pass", N="n")
    loop.body = [code.Comment("(loop invariants)", trailing=True), quote.code_stmt("k = 2.0 * a")]
    assert code.render([loop]) == "if n > 0:  # (loop invariants)\n    k = 2.0 * a"


def test_render_does_not_change_the_tree():
    body = [code.Comment("note"), quote.code_stmt("x = y")]
    code.render(body)
    assert isinstance(body[0], code.Comment) and body[0].text == "note"


def test_rendered_code_compiles_to_the_tree_it_came_from():
    loop = quote.code_stmt("for i in range(N):\n    pass", N="n")
    loop.body = [quote.code_stmt("_stack.append(s)"), code.Comment("s = s + 1"), quote.code_stmt("s = s + 1")]
    body = [quote.code_stmt("_stack = []"), code.Comment("forward"), loop, quote.code_stmt("return s")]
    text = code.render(body)
    without_comments = [st for st in body if not code.is_comment(st)]
    loop.body = [st for st in loop.body if not code.is_comment(st)]
    assert ast.dump(ast.parse(text)) == ast.dump(ast.Module(body=without_comments, type_ignores=[]))


def test_a_template_is_parsed_once():
    quote.parsed_code.cache_clear()
    for k in range(5):
        st = quote.code_stmt("ADJ = accumulate(ADJ, G)", ADJ=f"b{k}", G=k)
        assert ast.unparse(st) == f"b{k} = accumulate(b{k}, {k})"
    info = quote.parsed_code.cache_info()
    assert (info.misses, info.hits) == (1, 4)


def test_the_cached_template_is_never_changed_by_a_use():
    first = quote.code_stmt("X = Y", X="a", Y="b")
    first.targets[0].id = "changed"
    assert ast.unparse(quote.code_stmt("X = Y", X="c", Y="d")) == "c = d"


def test_placeholders_take_names_nodes_and_constants():
    node = quote.code_expr("A + B", A="x", B=ast.Name(id="y", ctx=ast.Load()))
    assert ast.unparse(quote.code_stmt("Z = F(V, K, NONE, FLAG)", Z="z", F="f", V=node,
                                       K=3, NONE=None, FLAG=True)) == "z = f(x + y, 3, None, True)"
    # a gast node (the IR's) is converted into the standard ast of generated code
    gast_node = syntax.parse("u * v").body[0].value
    st = quote.code_stmt("W = E", W="w", E=gast_node)
    assert ast.unparse(st) == "w = u * v" and not quote.is_gast(st.value)


def test_a_placeholder_in_a_target_stores():
    st = quote.code_stmt("T = _stack.pop()", T=ast.Tuple(elts=[ast.Name(id="a", ctx=ast.Load()),
                                                                ast.Name(id="b", ctx=ast.Load())], ctx=ast.Load()))
    assert isinstance(st.targets[0].ctx, ast.Store)
    assert all(isinstance(e.ctx, ast.Store) for e in st.targets[0].elts)
    compile(ast.fix_missing_locations(ast.Module(body=[st], type_ignores=[])), "<test>", "exec")


def test_text_is_refused_as_a_placeholder():
    with pytest.raises(TypeError, match="identifier"):
        quote.code_stmt("X = Y", X="a", Y="b + c")
    with pytest.raises(TypeError, match="identifier"):
        quote.expr("f(X)", X="g(x)")


def test_gast_templates_for_the_front_end():
    expr = quote.expr("np.reshape(B, solve_rhs_shape(np.shape(B)))", B="rhs")
    assert isinstance(expr, n.Call)
    assert syntax.unparse(expr) == "np.reshape(rhs, solve_rhs_shape(np.shape(rhs)))"


@pytest.mark.parametrize("value", [None, True, False, 0, -1, 2.5, -0.5, "a", (1, 2), (-1,), ((0, 1), (1, 0))])
def test_literal_builds_what_repr_spells(value):
    assert syntax.unparse(syntax.literal(value)) == syntax.unparse(syntax.parse(repr(value)).body[0].value)


SAMPLE = '''
def f(x, *rest, k=2, **kw):
    """doc"""
    for i, (a, b) in enumerate(zip(x, rest)):
        if a > b and not k:
            x = x[1:, ..., None] + lambda_(lambda u, v=1: u * v)
        elif b:
            continue
        else:
            break
    try:
        y = {key: [v ** 2 for v in x if v] for key in kw}
    except (ValueError, KeyError) as exc:
        raise RuntimeError(f"{exc!r:>10}") from None
    return -x @ y, x if k else None
'''


def test_copy_is_deep_and_equal():
    for tree in (ast.parse(SAMPLE), syntax.parse(SAMPLE)):
        copied = syntax.copy(tree)
        assert ast.dump(copied, include_attributes=True) == ast.dump(tree, include_attributes=True)
        originals = {id(x) for x in ast.walk(tree) if not isinstance(x, ast.expr_context)}
        assert not originals & {id(x) for x in ast.walk(copied)}


def test_walk_visits_what_ast_walk_visits_in_the_same_order():
    for tree in (ast.parse(SAMPLE), syntax.parse(SAMPLE)):
        assert [id(x) for x in syntax.walk(tree)] == [id(x) for x in ast.walk(tree)]


def test_to_ast_gives_what_gast_gives():
    import gast
    tree = syntax.parse(SAMPLE)
    for node in [tree] + [x for x in syntax.walk(tree) if isinstance(x, (n.expr, n.stmt))]:
        assert ast.dump(syntax.to_ast(node), include_attributes=True) == \
            ast.dump(gast.gast_to_ast(node), include_attributes=True)


def test_numbered_gives_each_statement_its_line():
    loop = quote.code_stmt("for i in range(N):\n    pass", N="n")
    first, second = quote.code_stmt("s = s + i"), quote.code_stmt("t = (s, i)")
    swap = code.bare_tuple(quote.code_stmt("a, b = b, a"))
    loop.body = [code.Comment("note"), first, code.Comment("(inner)", trailing=True), second]
    ret = quote.code_stmt("return a, b")
    text, lines = code.numbered([loop, swap, ret])
    assert text == code.render([loop, swap, ret]) == (
        "for i in range(n):\n    # note\n    s = s + i  # (inner)\n    t = (s, i)\na, b = b, a\nreturn a, b")
    assert {k: ast.unparse(st) if not code.is_comment(st) else st.text for k, st in lines.items()} == {
        2: "note", 3: "s = s + i", 4: "t = (s, i)", 5: "a, b = (b, a)", 6: "return (a, b)"}


def test_replace_children_replaces_fields_and_list_items_only_where_asked():
    tree = syntax.parse("f(a, b, a)\nc = a")
    calls = [x for x in syntax.walk(tree) if isinstance(x, n.Call)]

    def new_of(child):
        return syntax.name("z") if isinstance(child, n.Name) and child.id == "a" else None

    assert syntax.replace_children(calls[0], new_of)
    assignment = tree.body[1]
    assert syntax.replace_children(assignment, new_of)
    assert syntax.unparse(tree).splitlines() == ["f(z, b, z)", "c = z"]
    assert not syntax.replace_children(calls[0], new_of)  # (nothing left to replace)
