def g_jvp(v, w, dv, dw):
    # return v * w
    out = v * w
    dout = dv * w + v * dw
    return out, dout


def closure_jvp(x, dx):
    w = 2.0 * x
    dw = 2.0 * dx
    # return np.sum(g(x))
    _g_x, d_g_x = g_jvp(x, w, dv=dx, dw=dw)
    out = np.sum(_g_x)
    dout = np.sum(d_g_x)
    return out, dout
