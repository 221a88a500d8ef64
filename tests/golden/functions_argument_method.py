def Model_act_vjp(self, v, bout=1.0):
    # forward
    _tanh_v = np.tanh(v)
    out = _tanh_v * self.scale
    # backward
    # return np.tanh(v) * self.scale
    b_tanh_v = unbroadcast(bout * self.scale, np.shape(_tanh_v))
    bv = b_tanh_v * (1 - _tanh_v * _tanh_v)
    return bv,


def predict_vjp(W, x, nonlinearity=np.tanh, bout=1.0):
    # forward
    _matmul_x_W = x @ W
    _t1 = Model_act(nonlinearity_self, _matmul_x_W)
    out = np.sum(_t1)
    _shape_t1 = np.shape(_t1)
    del _t1
    # backward
    # return np.sum(nonlinearity(x @ W))
    b_t1 = unreduce(bout, _shape_t1, None, False)
    _b1, = Model_act_vjp(nonlinearity_self, _matmul_x_W, bout=b_t1)
    del _matmul_x_W, b_t1
    bW = matmul_cotangent_y(_b1, x, W)
    return bW
