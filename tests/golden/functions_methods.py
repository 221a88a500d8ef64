def Model_act_vjp(self, v, bout=1.0):
    # forward
    _tanh_v = np.tanh(v)
    out = _tanh_v * self.scale
    # backward
    # return np.tanh(v) * self.scale
    b_tanh_v = unbroadcast(bout * self.scale, np.shape(_tanh_v))
    bv = b_tanh_v * (1 - _tanh_v * _tanh_v)
    return bv,


def Model_apply_vjp(self, W, x, bout=1.0):
    # forward
    _matmul_x_W = x @ W
    _Model_act_self = Model_act(self, _matmul_x_W)
    out = np.sum(_Model_act_self)
    _shape_Model_act_self = np.shape(_Model_act_self)
    del _Model_act_self
    # backward
    # return np.sum(self.act(x @ W))
    b_Model_act_self = unreduce(bout, _shape_Model_act_self, None, False)
    _b1, = Model_act_vjp(self, _matmul_x_W, bout=b_Model_act_self)
    del _matmul_x_W, b_Model_act_self
    bW = matmul_cotangent_y(_b1, x, W)
    return bW,


def Model_call_vjp(self, W, x, bout=1.0):
    # forward
    _Model_apply_self = Model_apply(self, W, x)
    out = _Model_apply_self * 2.0
    del _Model_apply_self
    # backward
    # return self.apply(W, x) * 2.0
    b_Model_apply_self = bout * 2.0
    _b1, = Model_apply_vjp(self, W, x, bout=b_Model_apply_self)
    del b_Model_apply_self
    bW = _b1
    return bW,


def method_of_argument_vjp(W, x, model, bout=1.0):
    # forward
    _Model_apply_model = Model_apply(model, W, x)
    _Model_call_model = Model_call(model, W, x)
    out = _Model_apply_model + _Model_call_model
    _shape_Model_apply_model = np.shape(_Model_apply_model)
    _shape_Model_call_model = np.shape(_Model_call_model)
    del _Model_apply_model, _Model_call_model
    # backward
    # return model.apply(W, x) + model(W, x)
    b_Model_apply_model = unbroadcast(bout, _shape_Model_apply_model)
    b_Model_call_model = unbroadcast(bout, _shape_Model_call_model)
    _b1, = Model_call_vjp(model, W, x, bout=b_Model_call_model)
    del b_Model_call_model
    bW = _b1
    _b2, = Model_apply_vjp(model, W, x, bout=b_Model_apply_model)
    del b_Model_apply_model
    bW = bW + _b2
    return bW
