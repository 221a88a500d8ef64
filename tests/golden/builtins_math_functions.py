def math_functions_vjp(a, b, bout=1.0):
    # forward
    _hypot_a = math.hypot(a, b)
    _log2_a = math.log2(a)
    _add_hypot_a_log2_a = _hypot_a + _log2_a
    _mul_1_a = 1 * a
    _mul_mul_1_a_b = _mul_1_a * b
    out = _add_hypot_a_log2_a + _mul_mul_1_a_b
    # backward
    # return math.hypot(a, b) + math.log2(a) + math.prod([a, b])
    b_mul_1_a = bout * b
    bb = bout * _mul_1_a
    ba = b_mul_1_a
    ba = ba + bout / (a * 0.6931471805599453)
    ba = ba + bout * (a / _hypot_a)
    bb = bb + bout * (b / _hypot_a)
    return ba, bb
