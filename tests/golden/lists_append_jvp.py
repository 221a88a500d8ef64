def appended_jvp(h, w, dh, dw):
    out = []
    dout = zeros_like(out)
    for i in range(3):
        # out.append(h * w[i])
        _t1 = w[i]
        d_t1 = dw[i]
        _mul_h_t1 = h * _t1
        d_mul_h_t1 = dh * _t1 + h * d_t1
        _t2 = [_mul_h_t1]
        d_t2 = [d_mul_h_t1]
        _t3 = out + _t2
        d_t3 = list_op_tangent(dout, d_t2, out, _t2, _t3, '+', False)
        out = _t3
        dout = d_t3
    # return np.sum(np.stack(out) ** 2)
    stack_out = np.stack(out, axis=0)
    dstack_out = sequence_tangent(dout, out, 0, 'stack', False)
    _pow_stack_out_2 = stack_out ** 2
    d_pow_stack_out_2 = dstack_out * (2 * stack_out)
    _t4 = np.sum(_pow_stack_out_2)
    d_t4 = np.sum(d_pow_stack_out_2)
    return _t4, d_t4
