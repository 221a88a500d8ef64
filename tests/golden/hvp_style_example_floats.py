def style_example_hvp(x, y, bw=1.0, *, dx, dy):
    z = x * y
    dz = dx * y + x * dy
    bs = bw
    dbx = 0.0
    # bz = bs * math.cos(z)
    _cos_z = math.cos(z)
    d_cos_z = dz * -math.sin(z)
    bz = bs * _cos_z
    dbz = bs * d_cos_z
    # bx = bx + bz * y
    d_mul_bz_y = dbz * y + bz * dy
    dbx = d_mul_bz_y
    dby = dbz * x + bz * dx
    return None, (dbx, dby)
