"""Shims for the top-level ``torch`` module; submodules' shims live beside this file
(``_six.py`` for ``torch._six``, ``cuda.py`` for ``torch.cuda``, ...)."""

from __future__ import annotations

from collections import namedtuple
from typing import Any, Callable

from compatfix.patching import replace_attribute, restore_names
from compatfix.registry import RISK_BEHAVIOUR, Shim

# torch's own named tuples of these results are gone with the functions.
SymeigResult = namedtuple("symeig", ["eigenvalues", "eigenvectors"])
EigResult = namedtuple("eig", ["eigenvalues", "eigenvectors"])
SolveResult = namedtuple("solve", ["solution", "LU"])
LstsqResult = namedtuple("lstsq", ["solution", "QR"])
QRResult = namedtuple("qr", ["Q", "R"])


def _linalg_functions(torch) -> dict[str, Callable[..., Any]]:
    linalg = torch.linalg

    def symeig(input, eigenvectors=False, upper=True, *, out=None):
        """torch < 1.13: ascending eigenvalues of the upper (or lower) triangle; without
        ``eigenvectors`` the second element is an empty tensor."""
        uplo = "U" if upper else "L"
        if not eigenvectors:
            return SymeigResult(linalg.eigvalsh(input, UPLO=uplo), input.new_empty(0))
        values, vectors = linalg.eigh(input, UPLO=uplo)
        return SymeigResult(values, vectors)

    def eig(input, eigenvectors=False, *, out=None):
        """torch < 1.13: eigenvalues of a real matrix as an (n, 2) real tensor of (real,
        imaginary) parts; eigenvectors as real columns in LAPACK's layout, a complex pair
        (imaginary part > 0 first) stored as its real and imaginary parts in two columns."""
        if not eigenvectors:
            return EigResult(torch.view_as_real(linalg.eigvals(input)).contiguous(), input.new_empty(0))
        values, vectors = linalg.eig(input)
        real_vectors = vectors.real.clone().to(input.dtype)
        column = 0
        n = values.shape[-1]
        while column < n:
            if values[column].imag != 0 and column + 1 < n:
                real_vectors[:, column + 1] = vectors[:, column].imag
                column += 2
            else:
                column += 1
        return EigResult(torch.view_as_real(values).contiguous().to(input.dtype), real_vectors)

    def solve(input, A, *, out=None):
        """torch < 1.13: ``solve(B, A)`` solves ``A X = B`` (arguments reversed from
        ``torch.linalg.solve``) and also returns the packed LU factorization of ``A``."""
        lu, pivots = linalg.lu_factor(A)
        return SolveResult(torch.linalg.lu_solve(lu, pivots, input), lu)

    def lstsq(input, A, *, out=None):
        """torch < 1.13: ``lstsq(B, A)`` for a 2-D ``A`` (m, n): the solution padded to
        max(m, n) rows; for m > n the rows below n hold the residual components (Q^T B), as
        LAPACK's gels returns them; the second element is the packed QR of ``A``."""
        m, n = A.shape[-2], A.shape[-1]
        vector = input.dim() == 1
        B = input.unsqueeze(-1) if vector else input
        solution = linalg.lstsq(A, B, driver="gelsd" if A.device.type == "cpu" else None).solution
        if m > n:
            q, _ = linalg.qr(A, mode="complete")
            solution = torch.cat([solution, (q.mT @ B)[n:]], dim=0)
        return LstsqResult(solution, torch.geqrf(A)[0])

    def qr(input, some=True, *, out=None):
        """torch < 2: ``qr(A, some=True)`` is ``linalg.qr`` with mode 'reduced' (or 'complete')."""
        q, r = linalg.qr(input, mode="reduced" if some else "complete")
        return QRResult(q, r)

    def cholesky(input, upper=False, *, out=None):
        """torch < 1.13: the lower factor L, or with ``upper=True`` the upper factor U = L^H."""
        lower = linalg.cholesky(input)
        return lower.mH if upper else lower

    def matrix_rank(input, tol=None, symmetric=False, *, out=None):
        """torch < 1.13: singular values above ``tol`` (default: largest * max(m, n) * eps);
        ``symmetric`` is ``hermitian``."""
        if tol is None:
            return linalg.matrix_rank(input, hermitian=symmetric)
        return linalg.matrix_rank(input, atol=tol, rtol=0.0, hermitian=symmetric)

    return {
        "symeig": symeig,
        "eig": eig,
        "solve": solve,
        "lstsq": lstsq,
        "qr": qr,
        "cholesky": cholesky,
        "matrix_rank": matrix_rank,
    }


def _raises_removed(function: Callable[..., Any], torch) -> bool:
    """Whether ``function`` is one of torch's removal stubs: called on a 1x1 identity it
    raises "... is now removed". Forks and working versions are left alone."""
    eye = torch.eye(1)
    try:
        try:
            # One argument first: a stub that formats its second argument into its message
            # (torch.qr's ``some``) would print a tensor, which imports torch's printing code.
            function(eye)
        except TypeError:
            function(eye, eye)
    except RuntimeError as error:
        return "now removed" in str(error)
    except Exception:
        return False
    return False


def restore_linalg_functions(torch) -> None:
    for name, replacement in _linalg_functions(torch).items():
        current = getattr(torch, name, None)
        if current is None or _raises_removed(current, torch):
            replace_attribute(torch, name, replacement, "torch.linalg_removals")


def _fft_functions(torch) -> dict[str, Callable[..., Any]]:
    fft = torch.fft

    def dims(signal_ndim: int) -> tuple[int, ...]:
        if signal_ndim not in (1, 2, 3):
            raise RuntimeError("signal_ndim must be 1, 2 or 3, got %d" % signal_ndim)
        return tuple(range(-signal_ndim, 0))

    def norm(normalized: bool) -> str:
        # torch < 1.8: normalized=True divides by sqrt(N) both ways; otherwise only the
        # inverse divides, by N.
        return "ortho" if normalized else "backward"

    def as_complex(input):
        if input.shape[-1] != 2:
            raise RuntimeError("expected a real view of a complex tensor, last dimension 2")
        return torch.view_as_complex(input.contiguous())

    def rfft(input, signal_ndim, normalized=False, onesided=True):
        """torch < 1.8: the FFT of a real tensor over its last ``signal_ndim`` dimensions,
        returned as a real tensor with a trailing (real, imaginary) dimension of size 2;
        ``onesided`` keeps only the last dimension's n // 2 + 1 non-redundant terms."""
        transform = fft.rfftn if onesided else fft.fftn
        return torch.view_as_real(transform(input, dim=dims(signal_ndim), norm=norm(normalized)))

    def irfft(input, signal_ndim, normalized=False, onesided=True, signal_sizes=None):
        """torch < 1.8: the inverse of ``rfft`` from its real-view layout; ``signal_sizes``
        gives the original sizes (the last one is otherwise 2 * (n - 1))."""
        spectrum = as_complex(input)
        if not onesided:
            return fft.ifftn(spectrum, s=signal_sizes, dim=dims(signal_ndim), norm=norm(normalized)).real
        return fft.irfftn(spectrum, s=signal_sizes, dim=dims(signal_ndim), norm=norm(normalized))

    def ifft(input, signal_ndim, normalized=False):
        """torch < 1.8: the complex-to-complex inverse FFT in the real-view layout."""
        spectrum = as_complex(input)
        return torch.view_as_real(fft.ifftn(spectrum, dim=dims(signal_ndim), norm=norm(normalized)))

    return {"rfft": rfft, "irfft": irfft, "ifft": ifft}


def restore_fft_functions(torch) -> None:
    restore_names(torch, _fft_functions(torch), "torch.fft_functions")


SHIMS = (
    Shim(
        "torch.fft_functions",
        targets=["torch"],
        requires={"torch": ">=1.8"},
        apply=restore_fft_functions,
        broke="torch 1.8 (2021-03) removed torch.rfft, torch.irfft and torch.ifft (torch.fft became a "
        "module), used by FFT losses and spectral layers",
        summary="restore rfft/irfft/ifft on torch.fft with signal_ndim, normalized, onesided, "
        "signal_sizes and the real-view (..., 2) layout",
    ),
    Shim(
        "torch.linalg_removals",
        targets=["torch"],
        requires={"torch": ">=1.13"},
        apply=restore_linalg_functions,
        risk=RISK_BEHAVIOUR,
        broke="torch 1.13-2.x turned torch.symeig, eig, solve, lstsq, qr, cholesky and matrix_rank "
        "(deprecated in 1.9) into stubs raising 'deprecated since version 1.9 and is now removed'",
        summary="restore them on torch.linalg with their old argument orders, tuples and layouts",
    ),
)
