def g_vjp(v, w, bout=1.0):
    # forward
    out = v * w
    # backward
    # return v * w
    bv = unbroadcast(bout * w, np.shape(v))
    bw = unbroadcast(bout * v, np.shape(w))
    return bv, bw


def closure_vjp(x, bout=1.0):
    # forward
    w = 2.0 * x
    _g_x = g(x, w)
    out = np.sum(_g_x)
    _shape_g_x = np.shape(_g_x)
    del _g_x
    # backward
    # return np.sum(g(x))
    b_g_x = unreduce(bout, _shape_g_x, None, False)
    _b1, _b2 = g_vjp(x, w, bout=b_g_x)
    del b_g_x
    bx = _b1
    bw = _b2
    # w = 2.0 * x
    bx = bx + bw * 2.0
    return bx
