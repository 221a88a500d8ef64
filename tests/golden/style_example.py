def style_example_vjp(x, y, bw=1.0):
    # forward
    z = x * y
    s = np.sin(z)
    w = s + x
    # backward
    # w = s + x
    bs = unbroadcast(bw, np.shape(s))
    bx = unbroadcast(bw, np.shape(x))
    # s = np.sin(z)
    bz = bs * np.cos(z)
    # z = x * y
    bx = bx + unbroadcast(bz * y, np.shape(x))
    by = unbroadcast(bz * x, np.shape(y))
    return bx, by
