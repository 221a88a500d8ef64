def scaled_vjp(v, a, k=1.0, bout=1.0):
    # forward
    _mul_v_a = v * a
    _sin_mul_v_a = np.sin(_mul_v_a)
    out = _sin_mul_v_a * k
    del _sin_mul_v_a
    # backward
    # return np.sin(v * a) * k
    b_sin_mul_v_a = bout * k
    b_mul_v_a = b_sin_mul_v_a * np.cos(_mul_v_a)
    del _mul_v_a, b_sin_mul_v_a
    bv = unbroadcast(b_mul_v_a * a, np.shape(v))
    ba = unbroadcast(b_mul_v_a * v, np.shape(a))
    return bv, ba


def partials_vjp(x, bout=1.0):
    _stack = []
    # forward
    a = np.cos(x)
    p_arg = a
    p_k = 2.0
    q_arg = x
    _t1 = a * 3.0
    _stack.append(a)
    a = _t1
    del _t1
    _scaled_p_arg = scaled(p_arg, x, k=p_k)
    _sum_scaled_p_arg = np.sum(_scaled_p_arg)
    _shape_scaled_p_arg = np.shape(_scaled_p_arg)
    del _scaled_p_arg
    _power_q_arg = np.power(q_arg, 2.0)
    _sum_power_q_arg = np.sum(_power_q_arg)
    _shape_power_q_arg = np.shape(_power_q_arg)
    del _power_q_arg
    out = _sum_scaled_p_arg + _sum_power_q_arg
    # backward
    # return np.sum(p(x)) + np.sum(q(2.0))
    b_power_q_arg = unreduce(bout, _shape_power_q_arg, None, False)
    bq_arg = b_power_q_arg * (2.0 * q_arg)
    del b_power_q_arg
    b_scaled_p_arg = unreduce(bout, _shape_scaled_p_arg, None, False)
    _b1, _b2 = scaled_vjp(p_arg, x, k=p_k, bout=b_scaled_p_arg)
    del b_scaled_p_arg
    bp_arg = _b1
    bx = _b2
    # a = a * 3.0  # (the partial holds the value it was given)
    a = _stack.pop()
    # q = functools.partial(np.power, x)
    bx = bx + bq_arg
    # p = functools.partial(scaled, a, k=2.0)
    ba = bp_arg
    # a = np.cos(x)
    bx = bx + ba * -np.sin(x)
    return bx
