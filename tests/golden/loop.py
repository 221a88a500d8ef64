def loop_vjp(a, n, bs=1.0):
    _stack = []
    # forward
    s = 0.0
    for i in range(n):
        _stack.append(s)
        _mul_a_i = a * i
        _sin_mul_a_i = math.sin(_mul_a_i)
        s = s + _sin_mul_a_i
    # backward
    # for i in range(n):
    ba = 0.0
    for i in reversed(range(n)):
        s = _stack.pop()
        _mul_a_i = a * i
        # s = s + math.sin(a * i)
        b_mul_a_i = bs * math.cos(_mul_a_i)
        ba = ba + b_mul_a_i * i
    return ba
