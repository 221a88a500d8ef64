def lambda_fn_vjp(v, bout=1.0):
    # forward
    out = v * v
    # backward
    # return np.sum(g(x)) + np.sum((lambda v: v * v)(x))
    bv = unbroadcast(bout * v, np.shape(v))
    bv = bv + unbroadcast(bout * v, np.shape(v))
    return bv,


def g_vjp(v, bout=1.0):
    # forward
    _sin_v = np.sin(v)
    out = _sin_v * 2.0
    del _sin_v
    # backward
    # g = lambda v: np.sin(v) * 2.0
    b_sin_v = bout * 2.0
    bv = b_sin_v * np.cos(v)
    return bv,


def lambdas_vjp(x, bout=1.0):
    # forward
    _g_x = g(x)
    _sum_g_x = np.sum(_g_x)
    _shape_g_x = np.shape(_g_x)
    del _g_x
    _lambda_fn_x = lambda_fn(x)
    _sum_lambda_fn_x = np.sum(_lambda_fn_x)
    _shape_lambda_fn_x = np.shape(_lambda_fn_x)
    del _lambda_fn_x
    out = _sum_g_x + _sum_lambda_fn_x
    # backward
    # return np.sum(g(x)) + np.sum((lambda v: v * v)(x))
    b_lambda_fn_x = unreduce(bout, _shape_lambda_fn_x, None, False)
    _b1, = lambda_fn_vjp(x, bout=b_lambda_fn_x)
    del b_lambda_fn_x
    bx = _b1
    b_g_x = unreduce(bout, _shape_g_x, None, False)
    _b2, = g_vjp(x, bout=b_g_x)
    del b_g_x
    bx = bx + _b2
    return bx
