def dict_comprehension_vjp(params, x, bout=1.0):
    _stack = []
    # forward
    _items = []
    _keys = dict_keys(params)
    _range1 = range(len(_keys))
    for _i in _range1:
        _stack.append(_items)
        _k_2 = _keys[_i]
        _v = params[_k_2]
        _t1 = _v - 0.1 * x
        _t2 = [_t1]
        _t3 = _items + _t2
        _items = _t3
    _t4 = key_list((k for k, v in params.items()), len(_items))
    new = dict(zip(_t4, _items))
    _t5 = new['w']
    _t6 = new['b']
    _mul_t5_t6 = _t5 * _t6
    out = np.sum(_mul_t5_t6)
    _shape_mul_t5_t6 = np.shape(_mul_t5_t6)
    del _mul_t5_t6
    # backward
    # return np.sum(new["w"] * new["b"])
    b_mul_t5_t6 = unreduce(bout, _shape_mul_t5_t6, None, False)
    b_t5 = unbroadcast(b_mul_t5_t6 * _t6, np.shape(_t5))
    b_t6 = unbroadcast(b_mul_t5_t6 * _t5, np.shape(_t6))
    del _t5, b_mul_t5_t6
    bnew = zeros_like(new)
    bnew = add_at(bnew, 'b', b_t6)
    del b_t6
    bnew = add_at(bnew, 'w', b_t5)
    del b_t5
    # new = {k: v - 0.1 * x for k, v in params.items()}
    b_items = owned(dict_adjoint(bnew, _t4, _items))
    # new = {k: v - 0.1 * x for k, v in params.items()}
    bparams = zeros_like(params)
    for _i in reversed(_range1):
        _items = _stack.pop()
        _k_2 = _keys[_i]
        _v = params[_k_2]
        _t1 = _v - 0.1 * x
        _t2 = [_t1]
        # new = {k: v - 0.1 * x for k, v in params.items()}
        b_t3 = owned(b_items)
        b_items = owned(list_add_adjoint(b_t3, _items, _t2, 0))
        b_t2 = owned(list_add_adjoint(b_t3, _items, _t2, 1))
        b_t1 = b_t2[0]
        b_v = unbroadcast(b_t1, np.shape(_v))
        bparams = add_at(bparams, _k_2, b_v)
    return bparams
