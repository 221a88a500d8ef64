"""Whole complex functions through every mode, against differences along real and imaginary
directions (dualtape.testing.check_complex_modes; issue 22). The functions are module-level so
that the source transformer can read them; each names the ops it exercises."""

import numpy as np
import pytest

from dualtape.testing import check_complex_modes

RNG = np.random.default_rng(22)


def _c(*shape, positive=False):
    real = RNG.uniform(0.5, 2.0, shape) if positive else RNG.standard_normal(shape)
    return real + 1j * RNG.standard_normal(shape)


def _m(n=3):
    return _c(n, n) + 2 * np.eye(n)


def modulus_squared(z):
    return np.sum(np.real(z * np.conj(z)))


def abs_of_sin(z):
    return np.sum(np.abs(np.sin(z) * z))


def exp_parts(z):
    return np.sum(np.real(np.exp(z)) * np.imag(z))


def phase(z):
    return np.sum(np.angle(z) * np.abs(z))


def matvec_norm(z, w):
    return np.abs(np.sum(w @ z))


def logs_and_roots(z):
    return np.log(z) + np.sqrt(z) * z ** 1.5


def trig(z):
    return np.tanh(z) ** 3 + np.cos(z) / (1 + z * z)


def determinant(m):
    return np.linalg.det(m)


def log_abs_determinant(m):
    return np.linalg.slogdet(m)[1]


def solve_and_invert(m, z):
    return np.linalg.solve(m, z) + np.linalg.inv(m) @ z


def eigenvalues(m):
    return np.sum(np.abs(np.linalg.eigvals(m)) ** 2)


def non_holomorphic(z):
    return np.conj(z) * z ** 2 + (np.abs(z) + 0j) * z  # (+ 0j: TF's tape refuses real * complex)


def real_to_complex(x):
    return np.exp(1j * x) * x + x ** 2 * (1 + 2j)


def real_through_complex(x):
    return np.sum(np.abs(x * (1 + 2j)) + np.real(np.exp(1j * x)))


def reductions(z):
    return np.prod(z) + np.mean(z * z) + np.cumsum(z)[-1]


def einsum_and_kron(m, z):
    return np.einsum("ij,j->i", m, z) + np.kron(z, z)[:3]


CASES = [  # (f, args, holomorphic)
    (modulus_squared, [_c(3)], False), (abs_of_sin, [_c(3)], False), (exp_parts, [_c(3)], False),
    (phase, [_c(3, positive=True)], False), (matvec_norm, [_c(3), _m()], False),
    (logs_and_roots, [_c(3, positive=True)], True), (trig, [0.5 * _c(3)], True),
    (determinant, [_m()], True), (log_abs_determinant, [_m()], False), (solve_and_invert, [_m(), _c(3)], True),
    (eigenvalues, [_m()], False), (non_holomorphic, [_c(3)], False), (real_to_complex, [RNG.uniform(0.3, 1.5, 3)], False),
    (real_through_complex, [RNG.uniform(0.3, 1.5, 3)], False), (reductions, [_c(3)], True),
    (einsum_and_kron, [_m(), _c(3)], True),
]


@pytest.mark.parametrize("f, args, holomorphic", CASES, ids=[c[0].__name__ for c in CASES])
def test_every_mode_against_differences(f, args, holomorphic):
    refused = check_complex_modes(f, args, holomorphic=holomorphic)
    # only the transformer may refuse, and only slogdet (its sign is kept constant there)
    assert all(r.startswith("transforms.") for r in refused), refused
    assert not refused or f is log_abs_determinant, refused


def test_a_wrong_rule_is_caught(monkeypatch):
    """Conj's VJP written as the identity (its real rule, what dualtape had before issue 22)
    fails the imaginary-direction check of the reverse modes."""
    from dualtape.registry import REGISTRY

    def real_rule(g, ans, x):
        return g

    monkeypatch.setattr(REGISTRY["Conj"], "vjp", (real_rule,))
    with pytest.raises(AssertionError, match="imag directions"):
        check_complex_modes(lambda z: np.sum(np.real(np.conj(z) * (1 + 2j))), [_c(3)])
