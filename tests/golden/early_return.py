def early_return_vjp(a, b_retval=1.0):
    _stack = []
    # forward
    _returned = False
    _retval = None
    _cond1 = a > 1.0
    if _cond1:
        _stack.append(_retval)
        _retval = a * a
        _returned = True
    _cond2 = not _returned
    if _cond2:
        _stack.append(_retval)
        _retval = math.exp(a)
        _stack.append(_returned)
    # backward
    # return math.exp(a)
    if _cond2:
        # return math.exp(a)
        _returned = _stack.pop()
        ba = b_retval * _retval
        _retval = _stack.pop()
        b_retval = zeros_like(_retval)
    else:
        ba = 0.0
    # if a > 1.0:
    if _cond1:
        # return a * a
        ba = ba + b_retval * a
        ba = ba + b_retval * a
        _retval = _stack.pop()
        b_retval = zeros_like(_retval)
    return ba
