def spread_vjp(values_0, values_1, *, decay, btotal=1.0):
    _stack = []
    # forward
    values = (values_0, values_1)
    total = values[0]
    _range1 = range(len(values))
    for _i in _range1:
        _stack.append(total)
        v = values[_i]
        _mul_total_decay = total * decay
        total = _mul_total_decay + v
    # backward
    # for v in values:
    bdecay = 0.0
    bvalues = zeros_like(values)
    for _i in reversed(_range1):
        total = _stack.pop()
        v = values[_i]
        _mul_total_decay = total * decay
        # total = total * options["decay"] + v
        b_mul_total_decay = unbroadcast(btotal, np.shape(_mul_total_decay))
        bv = unbroadcast(btotal, np.shape(v))
        btotal = b_mul_total_decay * decay
        bdecay = bdecay + unbroadcast(b_mul_total_decay * total, np.shape(decay))
        # for v in values:
        bvalues = add_at(bvalues, _i, bv)
    # total = values[0]
    bvalues = add_at(bvalues, 0, btotal)
    bvalues_0 = bvalues[0]
    bvalues_1 = bvalues[1]
    return bvalues_0, bvalues_1, bdecay


def spread_vjp_2(values_0, values_1, *, decay, btotal=1.0):
    _stack = []
    # forward
    values = (values_0, values_1)
    total = values[0]
    _range1 = range(len(values))
    for _i in _range1:
        _stack.append(total)
        v = values[_i]
        _mul_total_decay = total * decay
        total = _mul_total_decay + v
    # backward
    # for v in values:
    bvalues = zeros_like(values)
    for _i in reversed(_range1):
        total = _stack.pop()
        v = values[_i]
        _mul_total_decay = total * decay
        # total = total * options["decay"] + v
        b_mul_total_decay = unbroadcast(btotal, np.shape(_mul_total_decay))
        bv = unbroadcast(btotal, np.shape(v))
        btotal = b_mul_total_decay * decay
        # for v in values:
        bvalues = add_at(bvalues, _i, bv)
    # total = values[0]
    bvalues = add_at(bvalues, 0, btotal)
    bvalues_0 = bvalues[0]
    bvalues_1 = bvalues[1]
    return bvalues_0, bvalues_1


def star_args_vjp(a, b, bout=1.0):
    # forward
    _spread_a = spread(a, b, decay=0.5)
    _spread_b = spread(b, a, decay=a)
    out = _spread_a + _spread_b
    _shape_spread_a = np.shape(_spread_a)
    _shape_spread_b = np.shape(_spread_b)
    del _spread_a, _spread_b
    # backward
    # return spread(a, b, decay=0.5) + spread(*[b, a], **{"decay": a})
    b_spread_a = unbroadcast(bout, _shape_spread_a)
    b_spread_b = unbroadcast(bout, _shape_spread_b)
    _b1, _b2, _b3 = spread_vjp(b, a, decay=a, btotal=b_spread_b)
    del b_spread_b
    bb = _b1
    ba = _b2
    ba = ba + _b3
    _b4, _b5 = spread_vjp_2(a, b, decay=0.5, btotal=b_spread_a)
    del b_spread_a
    ba = ba + _b4
    bb = bb + _b5
    return ba, bb
