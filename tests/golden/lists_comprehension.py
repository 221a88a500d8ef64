def comprehension_vjp(x, w, bout=1.0):
    _stack = []
    # forward
    ys = []
    for i in range(3):
        _cond1 = i != 1
        if _cond1:
            _stack.append(ys)
            _t1 = w[i]
            _mul_x_t1 = x * _t1
            _t2 = [_mul_x_t1]
            _t3 = ys + _t2
            ys = _t3
        _stack.append(_cond1)
    concatenate_ys = np.concatenate(ys, axis=0)
    out = np.sum(concatenate_ys)
    _shape_concatenate_ys = np.shape(concatenate_ys)
    del concatenate_ys
    # backward
    # return np.sum(np.concatenate(ys))
    bconcatenate_ys = unreduce(bout, _shape_concatenate_ys, None, False)
    bys = owned(sequence_adjoint(bconcatenate_ys, ys, 0, 'concatenate'))
    del bconcatenate_ys
    # ys = [x * w[i] for i in range(3) if i != 1]
    bw = zeros_like(w)
    bx = zeros_like(x)
    for i in reversed(range(3)):
        # ys = [x * w[i] for i in range(3) if i != 1]
        _cond1 = _stack.pop()
        if _cond1:
            ys = _stack.pop()
            _t1 = w[i]
            _mul_x_t1 = x * _t1
            _t2 = [_mul_x_t1]
            # ys = [x * w[i] for i in range(3) if i != 1]
            b_t3 = owned(bys)
            bys = owned(list_add_adjoint(b_t3, ys, _t2, 0))
            b_t2 = owned(list_add_adjoint(b_t3, ys, _t2, 1))
            b_mul_x_t1 = b_t2[0]
            bx = bx + unbroadcast(b_mul_x_t1 * _t1, np.shape(x))
            b_t1 = unbroadcast(b_mul_x_t1 * x, np.shape(_t1))
            bw = add_at(bw, i, b_t1)
    return bx, bw
