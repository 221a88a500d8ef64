def style_example_vjp(x, y, bw=1.0):
    # forward
    z = x * y
    # backward
    # w = s + x
    bs = bw
    bx = bw
    # s = np.sin(z)
    bz = bs * math.cos(z)
    # z = x * y
    bx = bx + bz * y
    by = bz * x
    return bx, by
