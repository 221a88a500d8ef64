def act_vjp(v, bout=1.0):
    # forward
    out = v * v
    # backward
    # for act in (np.tanh, relu, lambda v: v * v):
    bv = unbroadcast(bout * v, np.shape(v))
    bv = bv + unbroadcast(bout * v, np.shape(v))
    return bv,


def lambda_fn_vjp(v, bout=1.0):
    # forward
    out = v * v
    # backward
    # h = act(h) * 1.5
    bv = unbroadcast(bout * v, np.shape(v))
    bv = bv + unbroadcast(bout * v, np.shape(v))
    return bv,


def relu_vjp(v, bout=1.0):
    # forward
    out = np.maximum(v, 0.0)
    # backward
    # return np.maximum(v, 0.0)
    bv = bout * (v >= 0.0)
    return bv,


def layers_vjp(x, bout=1.0):
    _stack = []
    # forward
    h = x
    _tanh_h = np.tanh(h)
    _stack.append(h)
    h = _tanh_h * 1.5
    _relu_h = relu(h)
    _stack.append(h)
    h = _relu_h * 1.5
    del _relu_h
    _lambda_fn_h = lambda_fn(h)
    _stack.append(h)
    h = _lambda_fn_h * 1.5
    del _lambda_fn_h
    _act_h = act(h)
    _mul_h_act_h = h * _act_h
    out = np.sum(_mul_h_act_h)
    _shape_mul_h_act_h = np.shape(_mul_h_act_h)
    del _mul_h_act_h
    # backward
    # return np.sum(h * act(h))
    b_mul_h_act_h = unreduce(bout, _shape_mul_h_act_h, None, False)
    bh = unbroadcast(b_mul_h_act_h * _act_h, np.shape(h))
    b_act_h = unbroadcast(b_mul_h_act_h * h, np.shape(_act_h))
    del b_mul_h_act_h
    _b1, = act_vjp(h, bout=b_act_h)
    del b_act_h
    bh = bh + _b1
    # h = act(h) * 1.5
    b_lambda_fn_h = bh * 1.5
    h = _stack.pop()
    _b2, = lambda_fn_vjp(h, bout=b_lambda_fn_h)
    del b_lambda_fn_h
    bh = _b2
    b_relu_h = bh * 1.5
    h = _stack.pop()
    _b3, = relu_vjp(h, bout=b_relu_h)
    del b_relu_h
    bh = _b3
    b_tanh_h = bh * 1.5
    h = _stack.pop()
    bh = b_tanh_h * (1 - _tanh_h * _tanh_h)
    del _tanh_h, b_tanh_h
    # h = x
    bx = bh
    return bx
