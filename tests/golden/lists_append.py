def appended_vjp(h, w, b_t4=1.0):
    _stack = []
    # forward
    out = []
    for i in range(3):
        _stack.append(out)
        _t1 = w[i]
        _mul_h_t1 = h * _t1
        _t2 = [_mul_h_t1]
        _t3 = out + _t2
        out = _t3
    stack_out = np.stack(out, axis=0)
    _pow_stack_out_2 = stack_out ** 2
    _t4 = np.sum(_pow_stack_out_2)
    _shape_pow_stack_out_2 = np.shape(_pow_stack_out_2)
    del _pow_stack_out_2
    # backward
    # return np.sum(np.stack(out) ** 2)
    b_pow_stack_out_2 = unreduce(b_t4, _shape_pow_stack_out_2, None, False)
    bstack_out = b_pow_stack_out_2 * (2 * stack_out)
    del stack_out, b_pow_stack_out_2
    bout = owned(sequence_adjoint(bstack_out, out, 0, 'stack'))
    del bstack_out
    # for i in range(3):
    bh = zeros_like(h)
    bw = zeros_like(w)
    for i in reversed(range(3)):
        out = _stack.pop()
        _t1 = w[i]
        _mul_h_t1 = h * _t1
        _t2 = [_mul_h_t1]
        # out.append(h * w[i])
        b_t3 = owned(bout)
        bout = owned(list_add_adjoint(b_t3, out, _t2, 0))
        b_t2 = owned(list_add_adjoint(b_t3, out, _t2, 1))
        b_mul_h_t1 = b_t2[0]
        bh = bh + unbroadcast(b_mul_h_t1 * _t1, np.shape(h))
        b_t1 = unbroadcast(b_mul_h_t1 * h, np.shape(_t1))
        bw = add_at(bw, i, b_t1)
    return bh, bw
