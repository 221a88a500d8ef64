def dict_display_vjp(x, w, bs=1.0):
    _stack = []
    # forward
    _mul_x_w = x * w
    d = {'a': x, 'b': _mul_x_w}
    del _mul_x_w
    _t1 = d['a']
    s = np.sum(_t1)
    _shape_t1 = np.shape(_t1)
    del _t1
    _items = list(('a', 'b'))
    _range1 = range(len(_items))
    for _i in _range1:
        _stack.append(s)
        k = _items[_i]
        v = d[k]
        _sin_v = np.sin(v)
        _sum_sin_v = np.sum(_sin_v)
        s = s + _sum_sin_v
    # backward
    # for k, v in d.items():
    bd = zeros_like(d)
    for _i in reversed(_range1):
        s = _stack.pop()
        k = _items[_i]
        v = d[k]
        _sin_v = np.sin(v)
        # s = s + np.sum(np.sin(v))
        b_sin_v = unreduce(bs, np.shape(_sin_v), None, False)
        bv = b_sin_v * np.cos(v)
        # for k, v in d.items():
        bd = add_at(bd, k, bv)
    # s = np.sum(d["a"])
    b_t1 = unreduce(bs, _shape_t1, None, False)
    bd = add_at(bd, 'a', b_t1)
    del b_t1
    # d = {"a": x, "b": x * w}
    bx = bd['a']
    b_mul_x_w = bd['b']
    bx = bx + unbroadcast(b_mul_x_w * w, np.shape(x))
    bw = unbroadcast(b_mul_x_w * x, np.shape(w))
    return bx, bw
