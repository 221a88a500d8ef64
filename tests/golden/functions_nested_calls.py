def h_vjp(v, a, bout=1.0):
    # forward
    out = v * a
    # backward
    # return v * a
    bv = unbroadcast(bout * a, np.shape(v))
    ba = unbroadcast(bout * v, np.shape(a))
    return bv, ba


def g_vjp(v, a, bout=1.0):
    # forward
    _h_v = h(v, a)
    _t1 = h(v, a)
    _mul_h_v_t1 = _h_v * _t1
    out = _mul_h_v_t1 + v
    _shape_mul_h_v_t1 = np.shape(_mul_h_v_t1)
    del _mul_h_v_t1
    # backward
    # return h(v) * h(v) + v
    b_mul_h_v_t1 = unbroadcast(bout, _shape_mul_h_v_t1)
    bv = unbroadcast(bout, np.shape(v))
    b_h_v = unbroadcast(b_mul_h_v_t1 * _t1, np.shape(_h_v))
    b_t1 = unbroadcast(b_mul_h_v_t1 * _h_v, np.shape(_t1))
    del _h_v, b_mul_h_v_t1
    _b1, _b2 = h_vjp(v, a, bout=b_t1)
    del b_t1
    bv = bv + _b1
    ba = _b2
    _b3, _b4 = h_vjp(v, a, bout=b_h_v)
    del b_h_v
    bv = bv + _b3
    ba = ba + _b4
    return bv, ba


def nested_calls_vjp(x, bout=1.0):
    # forward
    a = np.cos(x)
    _g_x = g(x, a)
    out = np.sum(_g_x)
    _shape_g_x = np.shape(_g_x)
    del _g_x
    # backward
    # return np.sum(g(x))
    b_g_x = unreduce(bout, _shape_g_x, None, False)
    _b1, _b2 = g_vjp(x, a, bout=b_g_x)
    del b_g_x
    bx = _b1
    ba = _b2
    # a = np.cos(x)
    bx = bx + ba * -np.sin(x)
    return bx
