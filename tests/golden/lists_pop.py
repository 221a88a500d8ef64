def popped_vjp(x, bout=1.0):
    _stack = []
    # forward
    _sin_x = np.sin(x)
    _t1 = x * 2.0
    ys = [x, _sin_x, _t1]
    del _sin_x, _t1
    last = ys[-1]
    _t2 = ys[:-1]
    _stack.append(ys)
    ys = _t2
    del _t2
    _t3 = ys[0]
    _t4 = ys[1]
    _mul_t3_t4 = _t3 * _t4
    _mul_mul_t3_t4_last = _mul_t3_t4 * last
    out = np.sum(_mul_mul_t3_t4_last)
    _shape_mul_mul_t3_t4_last = np.shape(_mul_mul_t3_t4_last)
    del _mul_mul_t3_t4_last
    # backward
    # return np.sum(ys[0] * ys[1] * last)
    b_mul_mul_t3_t4_last = unreduce(bout, _shape_mul_mul_t3_t4_last, None, False)
    b_mul_t3_t4 = unbroadcast(b_mul_mul_t3_t4_last * last, np.shape(_mul_t3_t4))
    blast = unbroadcast(b_mul_mul_t3_t4_last * _mul_t3_t4, np.shape(last))
    del _mul_t3_t4, b_mul_mul_t3_t4_last
    b_t3 = unbroadcast(b_mul_t3_t4 * _t4, np.shape(_t3))
    b_t4 = unbroadcast(b_mul_t3_t4 * _t3, np.shape(_t4))
    del _t3, b_mul_t3_t4
    bys = zeros_like(ys)
    bys = add_at(bys, 1, b_t4)
    del b_t4
    bys = add_at(bys, 0, b_t3)
    del b_t3
    # last = ys.pop()
    b_t2 = bys
    ys = _stack.pop()
    bys = zeros_like(ys)
    bys = add_at(bys, slice(None, -1), b_t2)
    del b_t2
    bys = add_at(bys, -1, blast)
    # ys = [x, np.sin(x), x * 2.0]
    bx = bys[0]
    b_sin_x = bys[1]
    b_t1 = bys[2]
    bx = bx + b_t1 * 2.0
    del b_t1
    bx = bx + b_sin_x * np.cos(x)
    return bx
