def subscript_write_vjp(x, bout=1.0):
    _stack = []
    # forward
    y = x * 1.0
    _t1 = x[1]
    _t2 = x[2]
    _mul_t1_t2 = _t1 * _t2
    _stack.append(saved(y[0]))
    y[0] = _mul_t1_t2
    _shape_mul_t1_t2 = np.shape(_mul_t1_t2)
    del _mul_t1_t2
    _mul_y_y = y * y
    out = np.sum(_mul_y_y)
    _shape_mul_y_y = np.shape(_mul_y_y)
    del _mul_y_y
    # backward
    # return np.sum(y * y)
    b_mul_y_y = unreduce(bout, _shape_mul_y_y, None, False)
    by = owned(unbroadcast(b_mul_y_y * y, np.shape(y)))
    by = accumulate(by, unbroadcast(b_mul_y_y * y, np.shape(y)))
    del b_mul_y_y
    # y[0] = x[1] * x[2]
    b_mul_t1_t2 = unbroadcast(saved(by[0]), _shape_mul_t1_t2)
    y[0] = _stack.pop()
    by = zero_slot(by, 0, y)
    # y[0] = x[1] * x[2]
    b_t1 = unbroadcast(b_mul_t1_t2 * _t2, np.shape(_t1))
    b_t2 = unbroadcast(b_mul_t1_t2 * _t1, np.shape(_t2))
    del _t1, b_mul_t1_t2
    bx = zeros_like(x)
    bx = add_at(bx, 2, b_t2)
    del b_t2
    bx = add_at(bx, 1, b_t1)
    del b_t1
    # y = x * 1.0
    bx = accumulate(bx, by)
    return bx
