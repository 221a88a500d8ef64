def helper_jvp(a, b, da, db):
    # return a * math.cos(b)
    _cos_b = math.cos(b)
    d_cos_b = db * -math.sin(b)
    out = a * _cos_b
    dout = da * _cos_b + a * d_cos_b
    return out, dout


def helper_vjp_jvp(a, b, bout=1.0, *, da, db, dbout):
    _cos_b = math.cos(b)
    d_cos_b = db * -math.sin(b)
    ba = bout * _cos_b
    dba = dbout * _cos_b + bout * d_cos_b
    b_cos_b = bout * a
    db_cos_b = dbout * a + bout * da
    # bb = b_cos_b * -math.sin(b)
    _sin_b = math.sin(b)
    d_sin_b = db * math.cos(b)
    _neg_sin_b = -_sin_b
    d_neg_sin_b = -d_sin_b
    bb = b_cos_b * _neg_sin_b
    dbb = db_cos_b * _neg_sin_b + b_cos_b * d_neg_sin_b
    return (ba, bb), (dba, dbb)


def calls_helper_hvp(a, b, bout=1.0, *, da, db):
    # c = helper(a, b)
    c, dc = helper_jvp(a, b, da=da, db=db)
    out = c * c
    _result = out
    # bc = unbroadcast(bout * c, np.shape(c))
    _mul_bout_c = bout * c
    d_mul_bout_c = bout * dc
    _t1 = np.shape(c)
    bc = unbroadcast(_mul_bout_c, _t1)
    dbc = unbroadcast(d_mul_bout_c, _t1)
    # bc = bc + unbroadcast(bout * c, np.shape(c))
    _t2 = bout * c
    d_t2 = bout * dc
    _t3 = np.shape(c)
    _unbroadcast_t2 = unbroadcast(_t2, _t3)
    d_unbroadcast_t2 = unbroadcast(d_t2, _t3)
    dbc = dbc + d_unbroadcast_t2
    bc = bc + _unbroadcast_t2
    # _b1, _b2 = helper_vjp(a, b, bout=bc)
    _helper_vjp_a, d_helper_vjp_a = helper_vjp_jvp(a, b, bout=bc, da=da, db=db, dbout=dbc)
    _b1 = _helper_vjp_a[0]
    d_b1 = d_helper_vjp_a[0]
    _b2 = _helper_vjp_a[1]
    d_b2 = d_helper_vjp_a[1]
    dba = d_b1
    dbb = d_b2
    check_scalar_output(_result, 'calls_helper')
    return None, (dba, dbb)
