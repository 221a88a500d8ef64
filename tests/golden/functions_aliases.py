def softplus_vjp(v, bout=1.0):
    # forward
    _exp_v = np.exp(v)
    out = np.log1p(_exp_v)
    # backward
    # return np.log1p(np.exp(v))
    b_exp_v = bout / (1 + _exp_v)
    bv = b_exp_v * _exp_v
    return bv,


def aliases_vjp(x, bout=1.0):
    # forward
    _softplus_x = softplus(x)
    _tanh_x = np.tanh(x)
    _t1 = softplus(x)
    _mul_tanh_x_t1 = _tanh_x * _t1
    _t2 = _softplus_x + _mul_tanh_x_t1
    _shape_softplus_x = np.shape(_softplus_x)
    _shape_mul_tanh_x_t1 = np.shape(_mul_tanh_x_t1)
    del _softplus_x, _mul_tanh_x_t1
    out = np.sum(_t2)
    _shape_t2 = np.shape(_t2)
    del _t2
    # backward
    # return np.sum(f(x) + g(x) * h(x))
    b_t2 = unreduce(bout, _shape_t2, None, False)
    b_softplus_x = unbroadcast(b_t2, _shape_softplus_x)
    b_mul_tanh_x_t1 = unbroadcast(b_t2, _shape_mul_tanh_x_t1)
    del b_t2
    b_tanh_x = unbroadcast(b_mul_tanh_x_t1 * _t1, np.shape(_tanh_x))
    b_t1 = unbroadcast(b_mul_tanh_x_t1 * _tanh_x, np.shape(_t1))
    del b_mul_tanh_x_t1
    _b1, = softplus_vjp(x, bout=b_t1)
    del b_t1
    bx = _b1
    bx = bx + b_tanh_x * (1 - _tanh_x * _tanh_x)
    del _tanh_x, b_tanh_x
    _b2, = softplus_vjp(x, bout=b_softplus_x)
    del b_softplus_x
    bx = bx + _b2
    return bx
