def sum_display_vjp(a, b, bout=1.0):
    # forward
    # backward
    # return sum([a, b * b], 1.0)
    bb, ba = (bout * (2.0 * b), bout)
    return ba, bb
