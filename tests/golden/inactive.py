def inactive_vjp(a, n, bout=1.0):
    # forward
    k = n * 2
    out = a * k
    # backward
    # return a * k
    ba = bout * k
    return ba
