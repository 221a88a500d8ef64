def branch_vjp(a, bout=1.0):
    # forward
    _cond1 = a > 1.0
    if _cond1:
        b = a * a
    else:
        b = math.sin(a)
    # backward
    # return b + a
    bb = bout
    ba = bout
    # if a > 1.0:
    if _cond1:
        # b = a * a
        ba = ba + bb * (2.0 * a)
    else:
        # b = math.sin(a)
        ba = ba + bb * math.cos(a)
    return ba
