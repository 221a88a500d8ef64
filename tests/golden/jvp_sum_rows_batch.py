def sum_rows_jvp(m, v, dm):
    # return np.sum(np.tanh(m @ v), axis=0)
    _matmul_m_v = m @ v
    d_matmul_m_v = matmul_batch(m, v, dm, None)
    _tanh_matmul_m_v = np.tanh(_matmul_m_v)
    d_tanh_matmul_m_v = d_matmul_m_v * (1 - _tanh_matmul_m_v * _tanh_matmul_m_v)
    out = np.sum(_tanh_matmul_m_v, axis=0)
    dout = np.sum(d_tanh_matmul_m_v, axis=batch_axis(0, _tanh_matmul_m_v))
    return out, dout
