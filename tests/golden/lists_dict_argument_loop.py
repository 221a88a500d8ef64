def dict_argument_loop_vjp(p, x, bs=1.0):
    _stack = []
    # forward
    s = 0.0
    _keys = dict_keys(p)
    _range1 = range(len(_keys))
    for _i in _range1:
        _stack.append(s)
        k = _keys[_i]
        v = p[k]
        _sin_v = np.sin(v)
        _mul_sin_v_x = _sin_v * x
        _sum_mul_sin_v_x = np.sum(_mul_sin_v_x)
        s = s + _sum_mul_sin_v_x
    # backward
    # for k, v in p.items():
    bp = zeros_like(p)
    for _i in reversed(_range1):
        s = _stack.pop()
        k = _keys[_i]
        v = p[k]
        _sin_v = np.sin(v)
        _mul_sin_v_x = _sin_v * x
        # s = s + np.sum(np.sin(v) * x)
        b_mul_sin_v_x = unreduce(bs, np.shape(_mul_sin_v_x), None, False)
        b_sin_v = unbroadcast(b_mul_sin_v_x * x, np.shape(_sin_v))
        bv = b_sin_v * np.cos(v)
        # for k, v in p.items():
        bp = add_at(bp, k, bv)
    return bp
