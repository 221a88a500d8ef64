def helper_vjp(a, b, bout=1.0):
    # forward
    _cos_b = math.cos(b)
    out = a * _cos_b
    # backward
    # return a * math.cos(b)
    ba = bout * _cos_b
    b_cos_b = bout * a
    bb = b_cos_b * -math.sin(b)
    return ba, bb


def calls_helper_vjp(a, b, bout=1.0):
    # forward
    c = helper(a, b)
    out = c * c
    # backward
    # return c * c
    bc = unbroadcast(bout * c, np.shape(c))
    bc = bc + unbroadcast(bout * c, np.shape(c))
    # c = helper(a, b)
    _b1, _b2 = helper_vjp(a, b, bout=bc)
    ba = _b1
    bb = _b2
    return ba, bb
