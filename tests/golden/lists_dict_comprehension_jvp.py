def dict_comprehension_range_jvp(x, w, dx, dw):
    # d = {k: x * w ** k for k in range(3) if k != 1}
    _items = []
    d_items = zeros_like(_items)
    for _k_2 in range(3):
        if _k_2 != 1:
            # d = {k: x * w ** k for k in range(3) if k != 1}
            _pow_w_k_2 = w ** _k_2
            d_pow_w_k_2 = dw * power_slope(w, _k_2)
            _mul_x_pow_w_k_2 = x * _pow_w_k_2
            d_mul_x_pow_w_k_2 = dx * _pow_w_k_2 + x * d_pow_w_k_2
            _t1 = [_mul_x_pow_w_k_2]
            d_t1 = [d_mul_x_pow_w_k_2]
            _t2 = _items + _t1
            d_t2 = list_op_tangent(d_items, d_t1, _items, _t1, _t2, '+', False)
            _items = _t2
            d_items = d_t2
    # d = {k: x * w ** k for k in range(3) if k != 1}
    _keys = key_list((k for k in range(3) if k != 1), len(_items))
    d = dict(zip(_keys, _items))
    dd = dict_tangent(d_items, _keys, _items, False)
    # return np.sum(d[0] * d[2])
    _t3 = d[0]
    d_t3 = dd[0]
    _t4 = d[2]
    d_t4 = dd[2]
    _mul_t3_t4 = _t3 * _t4
    d_mul_t3_t4 = d_t3 * _t4 + _t3 * d_t4
    out = np.sum(_mul_t3_t4)
    dout = np.sum(d_mul_t3_t4)
    return out, dout
