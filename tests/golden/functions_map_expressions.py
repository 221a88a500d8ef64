def relu_vjp(v, bout=1.0):
    # forward
    out = np.maximum(v, 0.0)
    # backward
    # return np.maximum(v, 0.0)
    bv = bout * (v >= 0.0)
    return bv,


def lambda_fn_vjp(a, b, bout=1.0):
    # forward
    out = a * b
    # backward
    # pairs = sum(map(lambda a, b: a * b, x, x[::-1]))   # two iterables: over their zip
    ba = unbroadcast(bout * b, np.shape(a))
    bb = unbroadcast(bout * a, np.shape(b))
    return ba, bb


def mapped_in_expressions_vjp(x, bout=1.0):
    _stack = []
    # forward
    _sin_x = np.sin(x)
    _t1 = 2.0 * x
    _sin_t1 = np.sin(_t1)
    rows_1 = np.stack([_sin_x, _sin_t1])
    del _sin_x, _sin_t1
    _items = []
    _t2 = x[::-1]
    _range1 = range(min(len(x), len(_t2)))
    for _i in _range1:
        _stack.append(_items)
        _mapped = x[_i]
        _mapped_2 = _t2[_i]
        _lambda_fn_mapped = lambda_fn(_mapped, _mapped_2)
        _t3 = [_lambda_fn_mapped]
        _t4 = _items + _t3
        _items = _t4
    _sum = 0
    _range2 = range(len(_items))
    for _t5 in _range2:
        _stack.append(_sum)
        _item = _items[_t5]
        _sum = _sum + _item
    pairs = _sum
    _shape_sum = np.shape(_sum)
    del _sum
    _items_2 = []
    for _t7 in range(len(x)):
        _stack.append(_items_2)
        _mapped_3 = x[_t7]
        _relu_mapped_3 = relu(_mapped_3)
        _t8 = [_relu_mapped_3]
        _t9 = _items_2 + _t8
        _items_2 = _t9
    _t10 = rows_1[1]
    _t11 = rows_1[0]
    _mul_t10_t11 = _t10 * _t11
    _sum_mul_t10_t11 = np.sum(_mul_t10_t11)
    _shape_mul_t10_t11 = np.shape(_mul_t10_t11)
    del _mul_t10_t11
    _t12 = _sum_mul_t10_t11 + pairs
    _sum_2 = 0
    _range3 = range(len(_items_2))
    for _t13 in _range3:
        _stack.append(_sum_2)
        _item_2 = _items_2[_t13]
        _sum_2 = _sum_2 + _item_2
    out = _t12 + _sum_2
    _shape_t12 = np.shape(_t12)
    _shape_sum_2 = np.shape(_sum_2)
    del _t12, _sum_2
    # backward
    # return np.sum(rows[1] * rows[0]) + pairs + sum(map(relu, x))
    b_t12 = unbroadcast(bout, _shape_t12)
    b_sum_2 = unbroadcast(bout, _shape_sum_2)
    # return np.sum(rows[1] * rows[0]) + pairs + sum(map(relu, x))
    b_items_2 = zeros_like(_items_2)
    for _t13 in reversed(_range3):
        _sum_2 = _stack.pop()
        _item_2 = _items_2[_t13]
        # return np.sum(rows[1] * rows[0]) + pairs + sum(map(relu, x))
        b_item_2 = unbroadcast(b_sum_2, np.shape(_item_2))
        b_sum_2 = unbroadcast(b_sum_2, _shape_sum_2)
        b_items_2 = add_at(b_items_2, _t13, b_item_2)
    del b_sum_2
    # return np.sum(rows[1] * rows[0]) + pairs + sum(map(relu, x))
    b_sum_mul_t10_t11 = unbroadcast(b_t12, np.shape(_sum_mul_t10_t11))
    bpairs = b_t12
    del b_t12
    b_mul_t10_t11 = unreduce(b_sum_mul_t10_t11, _shape_mul_t10_t11, None, False)
    b_t10 = unbroadcast(b_mul_t10_t11 * _t11, np.shape(_t10))
    b_t11 = unbroadcast(b_mul_t10_t11 * _t10, np.shape(_t11))
    del _t10, b_mul_t10_t11
    brows_1 = zeros_like(rows_1)
    brows_1 = add_at(brows_1, 0, b_t11)
    del b_t11
    brows_1 = add_at(brows_1, 1, b_t10)
    del b_t10
    # return np.sum(rows[1] * rows[0]) + pairs + sum(map(relu, x))
    bx = zeros_like(x)
    for _t7 in reversed(range(len(x))):
        _items_2 = _stack.pop()
        _mapped_3 = x[_t7]
        _relu_mapped_3 = relu(_mapped_3)
        _t8 = [_relu_mapped_3]
        # return np.sum(rows[1] * rows[0]) + pairs + sum(map(relu, x))
        b_t9 = owned(b_items_2)
        b_items_2 = owned(list_add_adjoint(b_t9, _items_2, _t8, 0))
        b_t8 = owned(list_add_adjoint(b_t9, _items_2, _t8, 1))
        b_relu_mapped_3 = b_t8[0]
        _b1, = relu_vjp(_mapped_3, bout=b_relu_mapped_3)
        b_mapped_3 = _b1
        bx = add_at(bx, _t7, b_mapped_3)
    # pairs = sum(map(lambda a, b: a * b, x, x[::-1]))   # two iterables: over their zip
    b_sum = bpairs
    # pairs = sum(map(lambda a, b: a * b, x, x[::-1]))   # two iterables: over their zip
    b_items = zeros_like(_items)
    for _t5 in reversed(_range2):
        _sum = _stack.pop()
        _item = _items[_t5]
        # pairs = sum(map(lambda a, b: a * b, x, x[::-1]))   # two iterables: over their zip
        b_item = unbroadcast(b_sum, np.shape(_item))
        b_sum = unbroadcast(b_sum, _shape_sum)
        b_items = add_at(b_items, _t5, b_item)
    del b_sum
    # pairs = sum(map(lambda a, b: a * b, x, x[::-1]))   # two iterables: over their zip
    b_t2 = zeros_like(_t2)
    for _i in reversed(_range1):
        _items = _stack.pop()
        _mapped = x[_i]
        _mapped_2 = _t2[_i]
        _lambda_fn_mapped = lambda_fn(_mapped, _mapped_2)
        _t3 = [_lambda_fn_mapped]
        # pairs = sum(map(lambda a, b: a * b, x, x[::-1]))   # two iterables: over their zip
        b_t4 = owned(b_items)
        b_items = owned(list_add_adjoint(b_t4, _items, _t3, 0))
        b_t3 = owned(list_add_adjoint(b_t4, _items, _t3, 1))
        b_lambda_fn_mapped = b_t3[0]
        _b2, _b3 = lambda_fn_vjp(_mapped, _mapped_2, bout=b_lambda_fn_mapped)
        b_mapped = _b2
        b_mapped_2 = _b3
        b_t2 = add_at(b_t2, _i, b_mapped_2)
        bx = add_at(bx, _i, b_mapped)
    del _t2
    # pairs = sum(map(lambda a, b: a * b, x, x[::-1]))   # two iterables: over their zip
    bx = add_at(bx, slice(None, None, -1), b_t2)
    del b_t2
    # rows = np.stack(list(map(np.sin, [x, 2.0 * x])))  # map inside an expression: a comprehension
    b_sin_x = dnp.getitem(brows_1, axis_index(np.ndim(brows_1), negative_axis(0, np.ndim(rows_1)), 0))
    b_sin_t1 = dnp.getitem(brows_1, axis_index(np.ndim(brows_1), negative_axis(0, np.ndim(rows_1)), 1))
    b_t1 = b_sin_t1 * np.cos(_t1)
    del _t1, b_sin_t1
    bx = accumulate(bx, b_t1 * 2.0)
    del b_t1
    bx = accumulate(bx, b_sin_x * np.cos(x))
    return bx
