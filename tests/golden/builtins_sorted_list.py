def sorted_list_vjp(a, b, c, bout=1.0):
    _stack = []
    # forward
    _items = [a, b, c]
    _order = sorted_order(_items, False)
    _sorted = []
    _range1 = range(len(_order))
    for _i in _range1:
        _stack.append(_sorted)
        _pos = _order[_i]
        _t1 = _items[_pos]
        _t2 = [_t1]
        _t3 = _sorted + _t2
        _sorted = _t3
    ys = _sorted
    _t4 = ys[0]
    _t5 = ys[2]
    out = _t4 * _t5
    # backward
    # return ys[0] * ys[2]
    b_t4 = unbroadcast(bout * _t5, np.shape(_t4))
    b_t5 = unbroadcast(bout * _t4, np.shape(_t5))
    del _t4
    bys = zeros_like(ys)
    bys = add_at(bys, 2, b_t5)
    del b_t5
    bys = add_at(bys, 0, b_t4)
    del b_t4
    # ys = sorted([a, b, c])
    b_sorted = owned(bys)
    # ys = sorted([a, b, c])
    b_items = zeros_like(_items)
    for _i in reversed(_range1):
        _sorted = _stack.pop()
        _pos = _order[_i]
        _t1 = _items[_pos]
        _t2 = [_t1]
        # ys = sorted([a, b, c])
        b_t3 = owned(b_sorted)
        b_sorted = owned(list_add_adjoint(b_t3, _sorted, _t2, 0))
        b_t2 = owned(list_add_adjoint(b_t3, _sorted, _t2, 1))
        b_t1 = b_t2[0]
        b_items = add_at(b_items, _pos, b_t1)
    del _items
    # ys = sorted([a, b, c])
    ba = b_items[0]
    bb = b_items[1]
    bc = b_items[2]
    return ba, bb, bc
