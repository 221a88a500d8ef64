def loop_break_vjp(a, n, bs=1.0):
    _stack = []
    # forward
    s = a
    _break1 = False
    _count1 = 0
    for i in range(n):
        _count1 += 1
        _stack.append(s)
        s = s * 1.3
        if s > 2.5:
            _break1 = True
        if _break1:
            break
    # backward
    # for i in range(n):
    for i in reversed(range(n)[:_count1]):
        s = _stack.pop()
        # s = s * 1.3
        bs = bs * 1.3
    # s = a
    ba = bs
    return ba
