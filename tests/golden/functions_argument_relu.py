def relu_vjp(v, bout=1.0):
    # forward
    out = np.maximum(v, 0.0)
    # backward
    # return np.maximum(v, 0.0)
    bv = bout * (v >= 0.0)
    return bv,


def predict_vjp(W, x, nonlinearity=np.tanh, bout=1.0):
    # forward
    _matmul_x_W = x @ W
    _relu_matmul_x_W = relu(_matmul_x_W)
    out = np.sum(_relu_matmul_x_W)
    _shape_relu_matmul_x_W = np.shape(_relu_matmul_x_W)
    del _relu_matmul_x_W
    # backward
    # return np.sum(nonlinearity(x @ W))
    b_relu_matmul_x_W = unreduce(bout, _shape_relu_matmul_x_W, None, False)
    _b1, = relu_vjp(_matmul_x_W, bout=b_relu_matmul_x_W)
    del _matmul_x_W, b_relu_matmul_x_W
    bW = matmul_cotangent_y(_b1, x, W)
    return bW
