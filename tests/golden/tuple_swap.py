def tuple_swap_vjp(a, b, bp=1.0):
    _stack = []
    # forward
    p = a
    q = b
    for _ in range(3):
        _stack.append((p, q))
        _t1 = q
        _t2 = p + q
        p = _t1
        q = _t2
    # backward
    # for _ in range(3):
    bq = 0.0
    for _ in reversed(range(3)):
        p, q = _stack.pop()
        # p, q = q, p + q
        bp, bq = (bq, bq + bp)
    # p, q = a, b
    bb = bq
    ba = bp
    return ba, bb
