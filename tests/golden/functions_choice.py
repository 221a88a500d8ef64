def relu_vjp(v, bout=1.0):
    # forward
    out = np.maximum(v, 0.0)
    # backward
    # return np.maximum(v, 0.0)
    bv = bout * (v >= 0.0)
    return bv,


def choice_vjp(x, flag=True, bout=1.0):
    # forward
    act_flag = flag
    _cond1 = act_flag
    if _cond1:
        _t1 = relu(x)
    else:
        _t1 = np.tanh(x)
    out = np.sum(_t1)
    # backward
    # return np.sum(act(x))
    b_t1 = unreduce(bout, np.shape(_t1), None, False)
    # return np.sum(act(x))
    if _cond1:
        # return np.sum(act(x))
        _b1, = relu_vjp(x, bout=b_t1)
        bx = _b1
    else:
        # return np.sum(act(x))
        bx = b_t1 * (1 - _t1 * _t1)
    return bx
