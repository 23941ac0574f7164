"""torch.linalg_removals against the real torch 2.x: torch.symeig, eig, solve, lstsq, qr,
cholesky and matrix_rank raise "is now removed" with compatfix off and return their old
(torch 1.8) tuples, argument orders and layouts with it on. Expected values come from the
torch 1.8 documentation's definitions, checked with plain matrix algebra in the test."""

from __future__ import annotations

import pytest

from support import run_python

pytestmark = pytest.mark.stack("modern")

NAMES = ["symeig", "eig", "solve", "lstsq", "qr", "cholesky", "matrix_rank"]


def test_the_functions_raise_without_compatfix():
    result = run_python(
        code="""
        import torch
        eye = torch.eye(2)
        calls = {"symeig": lambda: torch.symeig(eye), "eig": lambda: torch.eig(eye),
                 "solve": lambda: torch.solve(eye, eye), "lstsq": lambda: torch.lstsq(eye, eye),
                 "qr": lambda: torch.qr(eye), "cholesky": lambda: torch.cholesky(eye),
                 "matrix_rank": lambda: torch.matrix_rank(eye)}
        for name, call in calls.items():
            try:
                call()
            except RuntimeError as error:
                print(name, "removed" in str(error))
        """,
        compatfix=False,
    )
    assert result.stdout.split() == [word for name in NAMES for word in (name, "True")], result.stderr


def test_old_semantics_are_restored():
    result = run_python(
        code="""
        import torch
        d = torch.float64
        # symeig reads the upper triangle by default: the lower one holds garbage here.
        A = torch.tensor([[2.0, 1.0], [100.0, 2.0]], dtype=d)
        e, v = torch.symeig(A)
        assert torch.allclose(e, torch.tensor([1.0, 3.0], dtype=d)) and v.numel() == 0
        e, v = torch.symeig(A, eigenvectors=True)
        S = torch.tensor([[2.0, 1.0], [1.0, 2.0]], dtype=d)
        assert torch.allclose(S @ v, v * e)
        el, _ = torch.symeig(torch.tensor([[2.0, 0.0], [1.0, 2.0]], dtype=d), upper=False)
        assert torch.allclose(el, torch.tensor([1.0, 3.0], dtype=d))

        # eig: (n, 2) real tensor of (real, imag); complex pairs as two real columns.
        R = torch.tensor([[0.0, -1.0], [1.0, 0.0]], dtype=d)
        e, v = torch.eig(R, eigenvectors=True)
        assert e.shape == (2, 2) and e.dtype == d
        assert sorted(e[:, 1].tolist()) == [-1.0, 1.0] and e[:, 0].abs().max() < 1e-12
        j = int((e[:, 1] > 0).nonzero()[0])
        vec = torch.complex(v[:, j], v[:, j + 1])
        assert torch.allclose(R.to(torch.complex128) @ vec, torch.complex(e[j, 0], e[j, 1]) * vec)
        e, v = torch.eig(torch.diag(torch.tensor([3.0, 5.0], dtype=d)))
        assert torch.allclose(e, torch.tensor([[3.0, 0.0], [5.0, 0.0]], dtype=d)) and v.numel() == 0

        # solve(B, A) solves A X = B and returns A's packed LU (L unit lower, U upper).
        A = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=d)
        B = torch.tensor([[5.0], [6.0]], dtype=d)
        X, LU = torch.solve(B, A)
        assert torch.allclose(A @ X, B)
        L = torch.tril(LU, -1) + torch.eye(2, dtype=d)
        U = torch.triu(LU)
        assert sorted(map(tuple, (L @ U).tolist())) == sorted(map(tuple, A.tolist()))

        # lstsq(B, A): max(m, n) rows; rows n.. carry the residual: their sum of squares is
        # the residual sum of squares of the least-squares solution (normal equations).
        A = torch.tensor([[1.0, 1.0], [1.0, 2.0], [1.0, 3.0]], dtype=d)
        b = torch.tensor([[1.0], [2.0], [2.0]], dtype=d)
        X, QR = torch.lstsq(b, A)
        x = torch.inverse(A.T @ A) @ A.T @ b
        assert X.shape == (3, 1) and torch.allclose(X[:2], x)
        assert torch.allclose((X[2:] ** 2).sum(), ((A @ x - b) ** 2).sum())
        assert QR.shape == A.shape

        Q, R2 = torch.qr(A)
        assert Q.shape == (3, 2) and torch.allclose(Q @ R2, A)
        Q, R2 = torch.qr(A, some=False)
        assert Q.shape == (3, 3) and R2.shape == (3, 2) and torch.allclose(Q @ R2, A)

        P = torch.tensor([[4.0, 2.0], [2.0, 3.0]], dtype=d)
        L = torch.cholesky(P)
        U = torch.cholesky(P, upper=True)
        assert torch.allclose(L @ L.T, P) and torch.allclose(U.T @ U, P) and U[1, 0] == 0

        assert int(torch.matrix_rank(torch.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=d))) == 1
        assert int(torch.matrix_rank(torch.diag(torch.tensor([1.0, 1e-3], dtype=d)), tol=1e-2)) == 1
        assert int(torch.matrix_rank(P, symmetric=True)) == 2
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr


def test_fft_functions_are_missing_without_compatfix():
    result = run_python(
        code="import torch; print([n for n in ('rfft', 'irfft', 'ifft') if hasattr(torch, n)])",
        compatfix=False,
    )
    assert result.stdout.split() == ["[]"], result.stderr


def test_rfft_irfft_ifft_keep_the_torch_1_7_layout_and_normalisation():
    # Expected values: the DFT definition X[k] = sum_n x[n] exp(-2 pi i k n / N), evaluated
    # by numpy; normalized=True divides by sqrt(N), the unnormalised inverse by N.
    result = run_python(
        code="""
        import numpy as np, torch
        x = torch.arange(24, dtype=torch.float64).reshape(2, 3, 4).sin()
        xn = x.numpy()

        def real_view(c):
            return torch.from_numpy(np.stack([c.real, c.imag], axis=-1))

        y = torch.rfft(x, 1)
        assert y.shape == (2, 3, 3, 2) and torch.allclose(y, real_view(np.fft.rfft(xn, axis=-1)))
        y = torch.rfft(x, 2, normalized=True, onesided=False)
        assert y.shape == (2, 3, 4, 2)
        assert torch.allclose(y, real_view(np.fft.fft2(xn) / np.sqrt(12)))
        back = torch.irfft(torch.rfft(x, 2), 2, signal_sizes=(3, 4))
        assert back.shape == x.shape and torch.allclose(back, x)
        odd = torch.arange(5, dtype=torch.float64)
        assert torch.irfft(torch.rfft(odd, 1), 1).shape == (4,)
        assert torch.allclose(torch.irfft(torch.rfft(odd, 1), 1, signal_sizes=odd.shape), odd)
        c = real_view(np.fft.fft(xn, axis=-1))
        assert torch.allclose(torch.ifft(c, 1), real_view(xn.astype(complex)))
        assert torch.allclose(torch.ifft(c, 1, normalized=True), real_view(xn * np.sqrt(4)))
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr
