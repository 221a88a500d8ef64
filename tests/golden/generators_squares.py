def squares_list_vjp(xs, b_yielded=1.0):
    _stack = []
    # forward
    _yielded = []
    for _i in range(len(xs)):
        _stack.append(_yielded)
        v = xs[_i]
        _mul_v_v = v * v
        _t1 = [_mul_v_v]
        _t2 = _yielded + _t1
        _yielded = _t2
    _t3 = xs[0]
    _t4 = [_t3]
    del _t3
    _t5 = _yielded + _t4
    _stack.append(_yielded)
    _yielded = _t5
    del _t5
    # backward
    b_yielded = owned(b_yielded)
    # yield xs[0]
    b_t5 = owned(b_yielded)
    _yielded = _stack.pop()
    b_yielded = owned(list_add_adjoint(b_t5, _yielded, _t4, 0))
    b_t4 = owned(list_add_adjoint(b_t5, _yielded, _t4, 1))
    del _t4, b_t5
    b_t3 = b_t4[0]
    del b_t4
    bxs = zeros_like(xs)
    bxs = add_at(bxs, 0, b_t3)
    del b_t3
    # for v in xs:
    for _i in reversed(range(len(xs))):
        _yielded = _stack.pop()
        v = xs[_i]
        _mul_v_v = v * v
        _t1 = [_mul_v_v]
        # yield v * v
        b_t2 = owned(b_yielded)
        b_yielded = owned(list_add_adjoint(b_t2, _yielded, _t1, 0))
        b_t1 = owned(list_add_adjoint(b_t2, _yielded, _t1, 1))
        b_mul_v_v = b_t1[0]
        bv = unbroadcast(b_mul_v_v * v, np.shape(v))
        bv = bv + unbroadcast(b_mul_v_v * v, np.shape(v))
        # for v in xs:
        bxs = add_at(bxs, _i, bv)
    return bxs,


def summed_vjp(x, bout=1.0):
    _stack = []
    # forward
    _sum = 0
    _squares_list_x = squares_list(x)
    _range1 = range(len(_squares_list_x))
    for _i in _range1:
        _stack.append(_sum)
        _item = _squares_list_x[_i]
        _sum = _sum + _item
    _t2 = x * 0.5
    _squares_list_t2 = squares_list(_t2)
    stack__squares_list_t2 = np.stack(_squares_list_t2, axis=0)
    _t3 = np.sum(stack__squares_list_t2)
    _shape_stack__squares_list_t2 = np.shape(stack__squares_list_t2)
    del stack__squares_list_t2
    out = _sum + _t3
    _shape_sum = np.shape(_sum)
    del _sum
    # backward
    # return sum(squares(x)) + np.sum(np.stack(list(squares(x * 0.5))))
    b_sum = bout
    b_t3 = unbroadcast(bout, np.shape(_t3))
    bstack__squares_list_t2 = unreduce(b_t3, _shape_stack__squares_list_t2, None, False)
    b_squares_list_t2 = owned(sequence_adjoint(bstack__squares_list_t2, _squares_list_t2, 0, 'stack'))
    del _squares_list_t2, bstack__squares_list_t2
    _b1, = squares_list_vjp(_t2, b_yielded=b_squares_list_t2)
    del _t2, b_squares_list_t2
    b_t2 = owned(_b1)
    bx = b_t2 * 0.5
    del b_t2
    # return sum(squares(x)) + np.sum(np.stack(list(squares(x * 0.5))))
    b_squares_list_x = zeros_like(_squares_list_x)
    for _i in reversed(_range1):
        _sum = _stack.pop()
        _item = _squares_list_x[_i]
        # return sum(squares(x)) + np.sum(np.stack(list(squares(x * 0.5))))
        b_item = unbroadcast(b_sum, np.shape(_item))
        b_sum = unbroadcast(b_sum, _shape_sum)
        b_squares_list_x = add_at(b_squares_list_x, _i, b_item)
    del _squares_list_x, b_sum
    # return sum(squares(x)) + np.sum(np.stack(list(squares(x * 0.5))))
    _b2, = squares_list_vjp(x, b_yielded=b_squares_list_x)
    del b_squares_list_x
    bx = accumulate(bx, _b2)
    return bx
