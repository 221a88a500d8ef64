def predict_vjp(W, x, nonlinearity=np.tanh, bout=1.0):
    # forward
    _matmul_x_W = x @ W
    _tanh_matmul_x_W = np.tanh(_matmul_x_W)
    del _matmul_x_W
    out = np.sum(_tanh_matmul_x_W)
    # backward
    # return np.sum(nonlinearity(x @ W))
    b_tanh_matmul_x_W = unreduce(bout, np.shape(_tanh_matmul_x_W), None, False)
    b_matmul_x_W = b_tanh_matmul_x_W * (1 - _tanh_matmul_x_W * _tanh_matmul_x_W)
    del _tanh_matmul_x_W, b_tanh_matmul_x_W
    bW = matmul_cotangent_y(b_matmul_x_W, x, W)
    return bW
