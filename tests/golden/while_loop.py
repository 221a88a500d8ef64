def while_loop_vjp(a, bs=1.0):
    _stack = []
    # forward
    s = a
    _count1 = 0
    while s < 10.0:
        _count1 += 1
        _stack.append(s)
        s = s * 1.5
    # backward
    # while s < 10.0:
    for _ in range(_count1):
        s = _stack.pop()
        # s = s * 1.5
        bs = bs * 1.5
    # s = a
    ba = bs
    return ba
