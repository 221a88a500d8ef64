def max_iterable_vjp(x, bout=1.0):
    _stack = []
    # forward
    _max = x[0]
    for _pos in range(1, len(x)):
        _cond1 = x[_pos] > _max
        if _cond1:
            _stack.append(_max)
            _max = x[_pos]
        _stack.append(_cond1)
    # backward
    # return max(x)
    b_max = bout
    # return max(x)
    bx = np.zeros_like(x)
    for _pos in reversed(range(1, len(x))):
        # return max(x)
        _cond1 = _stack.pop()
        if _cond1:
            _max = _stack.pop()
            # return max(x)
            bx = add_at(bx, _pos, b_max)
            b_max = zeros_like(_max)
    del _max
    # return max(x)
    bx = add_at(bx, 0, b_max)
    return bx
