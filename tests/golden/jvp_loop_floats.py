def loop_jvp(a, n, da):
    s = 0.0
    ds = 0.0
    for i in range(n):
        # s = s + math.sin(a * i)
        _mul_a_i = a * i
        d_mul_a_i = da * i
        _sin_mul_a_i = math.sin(_mul_a_i)
        d_sin_mul_a_i = d_mul_a_i * math.cos(_mul_a_i)
        ds = ds + d_sin_mul_a_i
        s = s + _sin_mul_a_i
    return s, ds
