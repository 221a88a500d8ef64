def style_example_hvp(x, y, bw=1.0, *, dx, dy):
    z = x * y
    dz = dx * y + x * dy
    s = np.sin(z)
    w = s + x
    _result = w
    bs = bw
    bx = bw
    dbx = 0.0
    # bz = bs * math.cos(z)
    _cos_z = math.cos(z)
    d_cos_z = dz * -math.sin(z)
    bz = bs * _cos_z
    dbz = bs * d_cos_z
    # bx = bx + bz * y
    _mul_bz_y = bz * y
    d_mul_bz_y = dbz * y + bz * dy
    dbx = dbx + d_mul_bz_y
    bx = bx + _mul_bz_y
    by = bz * x
    dby = dbz * x + bz * dx
    check_scalar_output(_result, 'style_example')
    return (bx, by), (dbx, dby)
