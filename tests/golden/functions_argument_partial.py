def scaled_vjp(v, a, k=1.0, bout=1.0):
    # forward
    _mul_v_a = v * a
    _sin_mul_v_a = np.sin(_mul_v_a)
    out = _sin_mul_v_a * k
    del _sin_mul_v_a
    # backward
    # return np.sin(v * a) * k
    b_sin_mul_v_a = bout * k
    b_mul_v_a = b_sin_mul_v_a * np.cos(_mul_v_a)
    del _mul_v_a, b_sin_mul_v_a
    bv = b_mul_v_a * a
    return bv,


def predict_vjp(W, x, nonlinearity=np.tanh, bout=1.0):
    # forward
    _matmul_x_W = x @ W
    _scaled_matmul_x_W = scaled(_matmul_x_W, a=nonlinearity_a, k=nonlinearity_k)
    out = np.sum(_scaled_matmul_x_W)
    _shape_scaled_matmul_x_W = np.shape(_scaled_matmul_x_W)
    del _scaled_matmul_x_W
    # backward
    # return np.sum(nonlinearity(x @ W))
    b_scaled_matmul_x_W = unreduce(bout, _shape_scaled_matmul_x_W, None, False)
    _b1, = scaled_vjp(_matmul_x_W, a=nonlinearity_a, k=nonlinearity_k, bout=b_scaled_matmul_x_W)
    del _matmul_x_W, b_scaled_matmul_x_W
    bW = matmul_cotangent_y(_b1, x, W)
    return bW
