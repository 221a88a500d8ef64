def reductions_vjp(m, bout=1.0):
    # forward
    _mean_m = np.mean(m, axis=0)
    _pow_mean_m_2 = _mean_m ** 2
    out = np.sum(_pow_mean_m_2)
    _shape_pow_mean_m_2 = np.shape(_pow_mean_m_2)
    del _pow_mean_m_2
    # backward
    # return np.sum(np.mean(m, axis=0) ** 2)
    b_pow_mean_m_2 = unreduce(bout, _shape_pow_mean_m_2, None, False)
    b_mean_m = b_pow_mean_m_2 * (2 * _mean_m)
    del _mean_m, b_pow_mean_m_2
    bm = unreduce(b_mean_m, np.shape(m), 0, False) / reduced_size(np.shape(m), 0)
    return bm
