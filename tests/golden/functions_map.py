def relu_vjp(v, bout=1.0):
    # forward
    out = np.maximum(v, 0.0)
    # backward
    # return np.maximum(v, 0.0)
    bv = bout * (v >= 0.0)
    return bv,


def mapped_vjp(x, bout=1.0):
    _stack = []
    # forward
    total = 0.0
    _mul_x_x = x * x
    _t1 = [x, _mul_x_x]
    del _mul_x_x
    _range1 = range(len(_t1))
    for _i in _range1:
        _stack.append(total)
        v_arg = _t1[_i]
        v = relu(v_arg)
        _sum_v = np.sum(v)
        total = total + _sum_v
    _sin_x = np.sin(x)
    _t3 = 2.0 * x
    _sin_t3 = np.sin(_t3)
    ys = [_sin_x, _sin_t3]
    del _sin_x, _sin_t3
    _t4 = ys[0]
    _t5 = ys[1]
    _mul_t4_t5 = _t4 * _t5
    _sum_mul_t4_t5 = np.sum(_mul_t4_t5)
    _shape_mul_t4_t5 = np.shape(_mul_t4_t5)
    del _mul_t4_t5
    out = total + _sum_mul_t4_t5
    # backward
    # return total + np.sum(ys[0] * ys[1])
    btotal = bout
    b_mul_t4_t5 = unreduce(bout, _shape_mul_t4_t5, None, False)
    b_t4 = unbroadcast(b_mul_t4_t5 * _t5, np.shape(_t4))
    b_t5 = unbroadcast(b_mul_t4_t5 * _t4, np.shape(_t5))
    del _t4, b_mul_t4_t5
    bys = zeros_like(ys)
    bys = add_at(bys, 1, b_t5)
    del b_t5
    bys = add_at(bys, 0, b_t4)
    del b_t4
    # ys = list(map(np.sin, [x, 2.0 * x]))
    b_sin_x = bys[0]
    b_sin_t3 = bys[1]
    b_t3 = b_sin_t3 * np.cos(_t3)
    del _t3, b_sin_t3
    bx = b_t3 * 2.0
    del b_t3
    bx = bx + b_sin_x * np.cos(x)
    del b_sin_x
    # for v in map(relu, [x, x * x]):
    b_t1 = zeros_like(_t1)
    for _i in reversed(_range1):
        total = _stack.pop()
        v_arg = _t1[_i]
        v = relu(v_arg)
        # total = total + np.sum(v)
        bv = unreduce(btotal, np.shape(v), None, False)
        # for v in map(relu, [x, x * x]):
        _b1, = relu_vjp(v_arg, bout=bv)
        bv_arg = _b1
        b_t1 = add_at(b_t1, _i, bv_arg)
    del _t1
    # for v in map(relu, [x, x * x]):
    bx = bx + b_t1[0]
    b_mul_x_x = b_t1[1]
    del b_t1
    bx = bx + unbroadcast(b_mul_x_x * x, np.shape(x))
    bx = bx + unbroadcast(b_mul_x_x * x, np.shape(x))
    return bx
