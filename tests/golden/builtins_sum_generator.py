def sum_generator_vjp(x, bout=1.0):
    _stack = []
    # forward
    _sum = 0
    for _i in range(len(x)):
        _stack.append(_sum)
        _v = x[_i]
        _mul_v_v = _v * _v
        _sum = _sum + _mul_v_v
    _shape_sum = np.shape(_sum)
    del _sum
    # backward
    # return sum(v * v for v in x)
    b_sum = bout
    # return sum(v * v for v in x)
    bx = np.zeros_like(x)
    for _i in reversed(range(len(x))):
        _sum = _stack.pop()
        _v = x[_i]
        _mul_v_v = _v * _v
        # return sum(v * v for v in x)
        b_mul_v_v = unbroadcast(b_sum, np.shape(_mul_v_v))
        b_sum = unbroadcast(b_sum, _shape_sum)
        b_v = unbroadcast(b_mul_v_v * _v, np.shape(_v))
        b_v = b_v + unbroadcast(b_mul_v_v * _v, np.shape(_v))
        bx = add_at(bx, _i, b_v)
    return bx
