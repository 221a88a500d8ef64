def enumerate_zip_vjp(x, y, bs=1.0):
    _stack = []
    # forward
    s = 0.0
    _items = list(range(1, 1 + len(x)))
    _range1 = range(min(len(_items), len(x), len(y)))
    for _i in _range1:
        _stack.append(s)
        i = _items[_i]
        a = x[_i]
        b = y[_i]
        _mul_i_a = i * a
        _mul_mul_i_a_b = _mul_i_a * b
        s = s + _mul_mul_i_a_b
    # backward
    # for i, (a, b) in enumerate(zip(x, y), 1):
    bx = np.zeros_like(x)
    by = np.zeros_like(y)
    for _i in reversed(_range1):
        s = _stack.pop()
        i = _items[_i]
        a = x[_i]
        b = y[_i]
        _mul_i_a = i * a
        _mul_mul_i_a_b = _mul_i_a * b
        # s = s + i * a * b
        b_mul_mul_i_a_b = unbroadcast(bs, np.shape(_mul_mul_i_a_b))
        bs = unbroadcast(bs, np.shape(s))
        b_mul_i_a = unbroadcast(b_mul_mul_i_a_b * b, np.shape(_mul_i_a))
        bb = unbroadcast(b_mul_mul_i_a_b * _mul_i_a, np.shape(b))
        ba = unbroadcast(b_mul_i_a * i, np.shape(a))
        # for i, (a, b) in enumerate(zip(x, y), 1):
        by = add_at(by, _i, bb)
        bx = add_at(bx, _i, ba)
    return bx, by
