def mlp_vjp(w1, b1, w2, x, bout=1.0):
    # forward
    _matmul_x_w1 = x @ w1
    _add_matmul_x_w1_b1 = _matmul_x_w1 + b1
    _shape_matmul_x_w1 = np.shape(_matmul_x_w1)
    del _matmul_x_w1
    h = np.tanh(_add_matmul_x_w1_b1)
    del _add_matmul_x_w1_b1
    _matmul_h_w2 = h @ w2
    _pow_matmul_h_w2_2 = _matmul_h_w2 ** 2
    out = np.mean(_pow_matmul_h_w2_2)
    _shape_pow_matmul_h_w2_2 = np.shape(_pow_matmul_h_w2_2)
    del _pow_matmul_h_w2_2
    # backward
    # return np.mean((h @ w2) ** 2)
    b_pow_matmul_h_w2_2 = unreduce(bout, _shape_pow_matmul_h_w2_2, None, False) / reduced_size(_shape_pow_matmul_h_w2_2, None)
    b_matmul_h_w2 = b_pow_matmul_h_w2_2 * (2 * _matmul_h_w2)
    del _matmul_h_w2, b_pow_matmul_h_w2_2
    bh = matmul_cotangent_x(b_matmul_h_w2, h, w2)
    bw2 = matmul_cotangent_y(b_matmul_h_w2, h, w2)
    del b_matmul_h_w2
    # h = np.tanh(x @ w1 + b1)
    b_add_matmul_x_w1_b1 = bh * (1 - h * h)
    b_matmul_x_w1 = unbroadcast(b_add_matmul_x_w1_b1, _shape_matmul_x_w1)
    bb1 = unbroadcast(b_add_matmul_x_w1_b1, np.shape(b1))
    del b_add_matmul_x_w1_b1
    bw1 = matmul_cotangent_y(b_matmul_x_w1, x, w1)
    return bw1, bb1, bw2
