"""Shims for the top-level ``torch`` module; submodules' shims live beside this file
(``_six.py`` for ``torch._six``, ``cuda.py`` for ``torch.cuda``, ...)."""

from __future__ import annotations

from collections import namedtuple
from typing import Any, Callable

import inspect
import sys

from compatfix.patching import get_original, record_redirect, replace_attribute, restore_names, wrap
from compatfix.registry import RISK_BEHAVIOUR, Shim

# torch's own named tuples of these results are gone with the functions. Each is made at
# the first call that returns one: namedtuple() compiles code, and `import torch` would
# pay for five of them that most programs never use.
_RESULT_FIELDS = {
    "symeig": ("eigenvalues", "eigenvectors"),
    "eig": ("eigenvalues", "eigenvectors"),
    "solve": ("solution", "LU"),
    "lstsq": ("solution", "QR"),
    "qr": ("Q", "R"),
}
_result_types: dict[str, Any] = {}


def _result(name: str, *values: Any) -> Any:
    """The old named tuple ``name`` (``torch.return_types.<name>`` before it was removed)."""
    kind = _result_types.get(name)
    if kind is None:
        kind = _result_types.setdefault(name, namedtuple(name, _RESULT_FIELDS[name]))
    return kind(*values)


def _linalg_functions(torch) -> dict[str, Callable[..., Any]]:
    linalg = torch.linalg

    def symeig(input, eigenvectors=False, upper=True, *, out=None):
        """torch < 1.13: ascending eigenvalues of the upper (or lower) triangle; without
        ``eigenvectors`` the second element is an empty tensor."""
        uplo = "U" if upper else "L"
        if not eigenvectors:
            return _result("symeig", linalg.eigvalsh(input, UPLO=uplo), input.new_empty(0))
        values, vectors = linalg.eigh(input, UPLO=uplo)
        return _result("symeig", values, vectors)

    def eig(input, eigenvectors=False, *, out=None):
        """torch < 1.13: eigenvalues of a real matrix as an (n, 2) real tensor of (real,
        imaginary) parts; eigenvectors as real columns in LAPACK's layout, a complex pair
        (imaginary part > 0 first) stored as its real and imaginary parts in two columns."""
        if not eigenvectors:
            return _result("eig", torch.view_as_real(linalg.eigvals(input)).contiguous(), input.new_empty(0))
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
        return _result("eig", torch.view_as_real(values).contiguous().to(input.dtype), real_vectors)

    def solve(input, A, *, out=None):
        """torch < 1.13: ``solve(B, A)`` solves ``A X = B`` (arguments reversed from
        ``torch.linalg.solve``) and also returns the packed LU factorization of ``A``."""
        lu, pivots = linalg.lu_factor(A)
        return _result("solve", torch.linalg.lu_solve(lu, pivots, input), lu)

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
        return _result("lstsq", solution, torch.geqrf(A)[0])

    def qr(input, some=True, *, out=None):
        """torch < 2: ``qr(A, some=True)`` is ``linalg.qr`` with mode 'reduced' (or 'complete')."""
        q, r = linalg.qr(input, mode="reduced" if some else "complete")
        return _result("qr", q, r)

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


def _raises_removed(function: Callable[..., Any], eye) -> bool:
    """Whether ``function`` is one of torch's removal stubs: called on ``eye`` (a 1x1
    identity) it raises "... is now removed". Forks and working versions are left alone."""
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
    eye = torch.eye(1)  # one probe input for all seven (none of them changes it)
    for name, replacement in _linalg_functions(torch).items():
        current = getattr(torch, name, None)
        if current is None or _raises_removed(current, eye):
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



# --- behaviour changes that now raise where 2020-22 code ran -------------------------------

_MASKED = {  # Tensor method / torch function -> position of the mask among the arguments after self
    "masked_fill": 0, "masked_fill_": 0, "masked_select": 0, "masked_scatter": 0, "masked_scatter_": 0,
}


def _script_as_original(torch, name: str) -> None:
    """Let ``torch.jit.script`` compile a call of the wrapped ``torch.<name>`` as the op it
    compiled the original to (the old behaviour does not apply inside TorchScript, which
    compiles as it did before). torch builds that table of builtins during its own import,
    before any shim runs, so a wrapper is not in it and scripting a function that calls
    it would fail; a table built later reads ``torch.<name>``, the wrapper, itself."""
    original, wrapper = get_original(torch, name), getattr(torch, name)
    builtins = sys.modules.get("torch.jit._builtins")
    table = getattr(builtins, "_builtin_table", None)
    op = table.get(id(original)) if isinstance(table, dict) else None
    if op is not None:
        table[id(wrapper)] = op
    elif inspect.isfunction(original):
        # An original written in Python (torch.stft, torch.functional's): TorchScript
        # compiles the function it finds, and the wrapper's *args/**kwargs do not compile.
        # These are the marks torch.jit._script_if_tracing leaves on its own wrappers, which
        # make torch.jit.script compile the function beneath instead.
        wrapper.__original_fn = original
        wrapper.__script_if_tracing_wrapper = True


def _uint8_mask_retry(position: int, torch):
    def make(function):
        def with_uint8_mask(*args, **kwargs):
            try:
                return function(*args, **kwargs)
            except RuntimeError:
                # torch <= 1.13 took a uint8 mask as "nonzero = selected" (with a deprecation
                # warning); only a call that failed on such a mask is retried, with .bool().
                if "mask" in kwargs and getattr(kwargs["mask"], "dtype", None) == torch.uint8:
                    kwargs["mask"] = kwargs["mask"].bool()
                elif len(args) > position and getattr(args[position], "dtype", None) == torch.uint8:
                    args = args[:position] + (args[position].bool(),) + args[position + 1:]
                else:
                    raise
                return function(*args, **kwargs)

        return with_uint8_mask

    return make


def accept_uint8_masks(torch) -> str | None:
    try:
        torch.zeros(1).masked_fill(torch.ones(1, dtype=torch.uint8), 0.0)
        return "this torch still takes uint8 masks"
    except RuntimeError:
        pass
    for name, position in _MASKED.items():
        # Tensor methods: self is args[0], so the mask is one further on.
        wrap(torch.Tensor, name, _uint8_mask_retry(position + 1, torch), "torch.uint8_masks")
        if hasattr(torch, name) and wrap(torch, name, _uint8_mask_retry(position + 1, torch), "torch.uint8_masks"):
            _script_as_original(torch, name)
    return None


_CLAMPS_IN_PLACE = ("clamp_", "clamp_min_", "clamp_max_", "clip_")


def _bound_of_dtype(tensor, bound, torch):
    """A float bound as torch <= 1.11 used it on an integer tensor: cast to the tensor's
    dtype (C++'s conversion: truncated toward zero)."""
    if isinstance(bound, float):
        return int(bound)
    if isinstance(bound, torch.Tensor) and bound.is_floating_point():
        return bound.to(tensor.dtype)
    return bound


def _integer_clamp_retry(torch):
    def make(function):
        def with_integer_bounds(tensor, *args, **kwargs):
            try:
                return function(tensor, *args, **kwargs)
            except RuntimeError as exc:
                # torch 1.12 made clamp's bounds take part in type promotion: an in-place
                # clamp of an integer tensor with a float bound (YOLOv3's gj.clamp_(0, gain[3]
                # - 1)) now fails. Only such a failed call is retried, with the bounds cast
                # to the tensor's dtype as torch <= 1.11 cast them.
                if ("can't be cast to the desired output type" not in str(exc) or tensor.is_floating_point()
                        or tensor.is_complex() or tensor.dtype == torch.bool):
                    raise
                try:
                    args = tuple(_bound_of_dtype(tensor, bound, torch) for bound in args)
                    kwargs = {key: _bound_of_dtype(tensor, bound, torch) for key, bound in kwargs.items()}
                except (OverflowError, ValueError):  # inf or nan: torch <= 1.11 refused those too
                    raise exc from None
                return function(tensor, *args, **kwargs)

        return with_integer_bounds

    return make


def accept_float_bounds_in_integer_clamps(torch) -> None:
    for name in _CLAMPS_IN_PLACE:
        wrap(torch.Tensor, name, _integer_clamp_retry(torch), "torch.clamp_float_bounds")
        if hasattr(torch, name) and wrap(torch, name, _integer_clamp_retry(torch), "torch.clamp_float_bounds"):
            _script_as_original(torch, name)


def _stft_real_view(torch):
    def make(stft):
        def stft_with_old_default(input, *args, **kwargs):
            # Old positional order: n_fft, hop_length, win_length, window, center, pad_mode,
            # normalized, onesided, return_complex (the 9th, added in 1.7).
            if len(args) < 9 and kwargs.get("return_complex") is None and not input.is_complex():
                kwargs["return_complex"] = True
                return torch.view_as_real(stft(input, *args, **kwargs))
            return stft(input, *args, **kwargs)

        return stft_with_old_default

    return make


def _istft_real_view(torch):
    def make(istft):
        def istft_of_real_view(input, *args, **kwargs):
            if not input.is_complex() and input.dim() >= 3 and input.shape[-1] == 2:
                input = torch.view_as_complex(input.contiguous())
            return istft(input, *args, **kwargs)

        return istft_of_real_view

    return make


def restore_stft_real_view(torch) -> None:
    for name, make in (("stft", _stft_real_view(torch)), ("istft", _istft_real_view(torch))):
        if wrap(torch, name, make, "torch.stft_real_view"):
            _script_as_original(torch, name)


_COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")


def _contiguous_result(torch):
    def make(comparison):
        def comparison_with_contiguous_result(*args, **kwargs):
            result = comparison(*args, **kwargs)
            # torch <= 1.6 allocated a comparison's result contiguous; 1.7+ give it the
            # input's strides (a transposed input, a transposed result). A contiguous result
            # is returned as it is; only the others are copied.
            if isinstance(result, torch.Tensor) and "out" not in kwargs and not result.is_contiguous():
                record_redirect("torch.comparisons_contiguous", comparison.__name__)
                return result.contiguous()
            return result

        return comparison_with_contiguous_result

    return make


def contiguous_comparisons(torch) -> str | None:
    if torch.zeros(2, 3).t().eq(0).is_contiguous():
        return "this torch's comparison results are contiguous already"
    for name in _COMPARISONS:
        wrap(torch.Tensor, name, _contiguous_result(torch), "torch.comparisons_contiguous")
        if wrap(torch, name, _contiguous_result(torch), "torch.comparisons_contiguous"):
            _script_as_original(torch, name)
    return None


_INPLACE = {"add_": "add", "sub_": "sub", "mul_": "mul", "div_": "div",
            "__iadd__": "add", "__isub__": "sub", "__imul__": "mul", "__itruediv__": "div"}


def _old_inplace(op: str, torch):
    def make(method):
        def inplace_with_old_casting(self, other, *args, **kwargs):
            try:
                return method(self, other, *args, **kwargs)
            except RuntimeError as error:
                if "can't be cast to the desired output type" not in str(error) or self.is_floating_point() \
                        or self.is_complex() or self.dtype == torch.bool:
                    raise
                # torch <= 1.4 on an integer tensor: a Python number operand was converted to
                # the tensor's dtype first (truncated), and division of integers truncated.
                if isinstance(other, (int, float)) and not isinstance(other, bool):
                    other = int(other)
                elif not (isinstance(other, torch.Tensor) and not other.is_floating_point()
                          and not other.is_complex()):
                    raise
                if op == "div":
                    if args or kwargs:
                        raise
                    result = torch.div(self, other, rounding_mode="trunc")
                else:
                    result = getattr(torch, op)(self, other, *args, **kwargs)
                return self.copy_(result)

        return inplace_with_old_casting

    return make


def restore_inplace_casting(torch) -> None:
    for name, op in _INPLACE.items():
        wrap(torch.Tensor, name, _old_inplace(op, torch), "torch.inplace_int_arithmetic")


def _renamed_functions(torch) -> dict[str, Callable[..., Any]]:
    def set_deterministic(d: bool) -> None:
        """torch 1.7: ``set_deterministic(d)``, renamed ``use_deterministic_algorithms`` in 1.8."""
        torch.use_deterministic_algorithms(d)

    def is_deterministic() -> bool:
        """torch 1.7: ``is_deterministic()``, renamed ``are_deterministic_algorithms_enabled`` in 1.8."""
        return torch.are_deterministic_algorithms_enabled()

    return {
        # torch 1.7's Assert(condition, message), the symbolically traceable assert, is
        # torch 1.8's _assert(condition, message): the same function under a private name.
        "Assert": torch._assert,
        "set_deterministic": set_deterministic,
        "is_deterministic": is_deterministic,
    }


def restore_renamed_functions(torch) -> None:
    restore_names(torch, _renamed_functions(torch), "torch.renamed_functions")


SHIMS = (
    Shim(
        "torch.renamed_functions",
        targets=["torch"],
        requires={"torch": ">=1.8"},
        apply=restore_renamed_functions,
        restores=["Assert", "set_deterministic", "is_deterministic"],
        broke="torch 1.8 (2021-03) renamed torch.Assert to torch._assert (StyleGAN2-ADA's misc.assert_shape calls "
        "it), and deprecated set_deterministic and is_deterministic for use_deterministic_algorithms and "
        "are_deterministic_algorithms_enabled (pytorch/pytorch#49904), which torch 1.10 (2021-10, "
        "pytorch/pytorch#62158) then removed",
        summary="restore torch.Assert as torch._assert, and set_deterministic(d) / is_deterministic() on the "
        "functions that replaced them",
        replacement="torch._assert, torch.use_deterministic_algorithms, torch.are_deterministic_algorithms_enabled",
        renames={"torch.Assert": "torch._assert", "torch.set_deterministic": "torch.use_deterministic_algorithms",
                 "torch.is_deterministic": "torch.are_deterministic_algorithms_enabled"},
    ),
    Shim(
        "torch.fft_functions",
        targets=["torch"],
        requires={"torch": ">=1.8"},
        apply=restore_fft_functions,
        restores=["rfft", "irfft", "ifft"],
        broke="torch 1.8 (2021-03) removed torch.rfft, torch.irfft and torch.ifft (torch.fft became a "
        "module), used by FFT losses and spectral layers",
        summary="restore rfft/irfft/ifft on torch.fft with signal_ndim, normalized, onesided, "
        "signal_sizes and the real-view (..., 2) layout",
        replacement="torch.fft.rfftn / irfftn / ifftn with torch.view_as_real / view_as_complex for the (..., 2) layout",
        rewrites={
            "torch.rfft": "torch.view_as_real(torch.fft.rfftn(x, dim=...)) (onesided; normalized=True is norm='ortho')",
            "torch.irfft": "torch.fft.irfftn(torch.view_as_complex(x), s=signal_sizes, dim=...)",
            "torch.ifft": "torch.view_as_real(torch.fft.ifftn(torch.view_as_complex(x), dim=...))",
        },
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
        replacement="torch.linalg.eigh, eig, solve, lstsq, qr, cholesky and matrix_rank (argument orders and "
        "returns differ)",
        rewrites={
            "torch.symeig": "torch.linalg.eigh(A, UPLO='U' for upper=True) (eigenvectors always returned)",
            "torch.eig": "torch.linalg.eig(A) (complex eigenvalues and eigenvectors)",
            "torch.solve": "torch.linalg.solve(A, B) for torch.solve(B, A); no LU is returned",
            "torch.lstsq": "torch.linalg.lstsq(A, B).solution for torch.lstsq(B, A) (not padded)",
            "torch.qr": "torch.linalg.qr(A, mode='reduced' for some=True, 'complete' for some=False)",
            "torch.cholesky": "torch.linalg.cholesky(A, upper=...)",
            "torch.matrix_rank": "torch.linalg.matrix_rank(A, hermitian=symmetric, atol=tol)",
        },
    ),
    Shim(
        "torch.uint8_masks",
        targets=["torch"],
        requires={"torch": ">=2.0"},
        apply=accept_uint8_masks,
        broke="torch 2.x made masked_fill(_), masked_select and masked_scatter(_) refuse uint8 masks "
        "('only supports boolean masks'), which torch 1.2-1.13 took with a deprecation warning",
        summary="retry a call that failed on a uint8 mask with mask.bool() (nonzero = selected, as before); "
        "working calls are not touched",
        replacement="boolean masks: mask.bool(), or build the mask with a comparison",
    ),
    Shim(
        "torch.clamp_float_bounds",
        targets=["torch"],
        requires={"torch": ">=1.12"},
        apply=accept_float_bounds_in_integer_clamps,
        broke="torch 1.12 (2022-06, pytorch#77035) made clamp's min/max take part in type promotion, so an "
        "in-place clamp_ of an integer tensor with a float bound raises 'result type Float can't be cast to "
        "the desired output type Long'; torch <= 1.11 cast the bounds to the tensor's dtype",
        summary="retry an in-place clamp_/clamp_min_/clamp_max_/clip_ of an integer tensor that failed on a float "
        "bound with the bounds cast to its dtype (truncated, as before); working calls and the out-of-place "
        "clamp (which now returns a float tensor) are not touched",
        replacement="integer bounds: t.clamp_(0, int(bound)), or bound.long()",
        risk=RISK_BEHAVIOUR,
    ),
    Shim(
        "torch.stft_real_view",
        targets=["torch"],
        requires={"torch": ">=2.0"},
        apply=restore_stft_real_view,
        broke="torch 2.0 (2023-03) made stft require return_complex for real input and istft require "
        "complex input, where 2020-22 audio code used the real (..., 2) layout (the default before 1.8)",
        summary="stft without return_complex returns the old real view (view_as_real of the complex "
        "result); istft takes that real view again",
        replacement="torch.view_as_real(torch.stft(..., return_complex=True)); torch.istft(torch.view_as_complex(x), ...)",
        rewrites={"torch.stft(-return_complex:9)": "torch.view_as_real(torch.stft(..., return_complex=True))"},
    ),
    Shim(
        "torch.comparisons_contiguous",
        targets=["torch"],
        requires={"torch": ">=1.7"},
        apply=contiguous_comparisons,
        risk=RISK_BEHAVIOUR,
        broke="torch 1.7 (2020-10) gave the results of eq, ne, lt, le, gt and ge their input's strides, "
        "where 1.6 made them contiguous: the ImageNet example's top-k accuracy that 2019-22 repositories "
        "copied, `correct = pred.t().eq(...)` then `correct[:k].view(-1)`, raises 'view size is not "
        "compatible with input tensor's size and stride' (pytorch/examples#836)",
        summary="Tensor.eq/ne/lt/le/gt/ge and torch.eq/... return a contiguous result again (a copy only "
        "where the result is not contiguous; out= calls untouched); the operators ==, <, ... are left "
        "alone, as wrapping them would slow every comparison in every library",
        replacement=".reshape(-1) (or .contiguous().view(-1)) on a comparison's result",
    ),
    Shim(
        "torch.inplace_int_arithmetic",
        targets=["torch"],
        requires={"torch": ">=1.5"},
        apply=restore_inplace_casting,
        risk=RISK_BEHAVIOUR,
        default=False,
        broke="torch 1.5-1.7 (2020) refused in-place arithmetic on integer tensors whose result type is "
        "float ('result type Float can't be cast to the desired output type Long'): a += 0.5, a /= 2",
        summary="opt-in: torch 1.4's rule again for those calls only, a number operand truncated to the "
        "tensor's dtype and integer division truncating; silently truncating can hide bugs, hence opt-in",
        replacement="out-of-place arithmetic with an explicit cast (a = (a * 0.5).long()) or a float tensor",
    ),
)
