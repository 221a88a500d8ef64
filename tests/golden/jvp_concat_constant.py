def concat_constant_jvp(x, dx):
    # return np.sum(np.sin(np.concatenate([x, [1.0]])))
    _t1 = [1.0]
    _concatenate_x = np.concatenate([x, _t1])
    d_concatenate_x = np.concatenate([dx, zeros_like(_t1)])
    _sin_concatenate_x = np.sin(_concatenate_x)
    d_sin_concatenate_x = d_concatenate_x * np.cos(_concatenate_x)
    out = np.sum(_sin_concatenate_x)
    dout = np.sum(d_sin_concatenate_x)
    return out, dout
