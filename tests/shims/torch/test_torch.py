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


# --- behaviour changes that now raise: torch.uint8_masks, torch.stft_real_view, and the opt-in
# torch.inplace_int_arithmetic. Expected values by hand (numpy, plain Python).

UINT8_MASKS = """
import numpy as np, torch
x = torch.arange(6.0).reshape(2, 3)
m = (x > 2).to(torch.uint8)
calls = {
    "masked_fill": lambda: x.masked_fill(m, -1.0),
    "masked_fill_": lambda: x.clone().masked_fill_(mask=m, value=-1.0),
    "torch.masked_fill": lambda: torch.masked_fill(x, m, -1.0),
    "masked_select": lambda: x.masked_select(m),
    "masked_scatter": lambda: x.masked_scatter(m, torch.full((6,), 7.0)),
}
for name, call in calls.items():
    try:
        print(name, call().tolist())
    except RuntimeError as error:
        print(name, "refused" if "mask" in str(error) else str(error))
"""


def test_uint8_masks_are_refused_without_compatfix():
    result = run_python(code=UINT8_MASKS, compatfix=False)
    assert [line.split()[-1] for line in result.stdout.splitlines()] == ["refused"] * 5, result.stderr


def test_uint8_masks_select_where_nonzero():
    import json

    result = run_python(code=UINT8_MASKS)
    got = {line.split(" ", 1)[0]: json.loads(line.split(" ", 1)[1]) for line in result.stdout.splitlines()}
    values = [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    selected = [[v > 2 for v in row] for row in values]  # the old rule: nonzero = selected
    filled = [[-1.0 if s else v for v, s in zip(row, srow)] for row, srow in zip(values, selected)]
    assert got["masked_fill"] == got["masked_fill_"] == got["torch.masked_fill"] == filled, result.stderr
    assert got["masked_select"] == [v for row in values for v in row if v > 2]
    assert got["masked_scatter"] == [[7.0 if s else v for v, s in zip(row, srow)] for row, srow in zip(values, selected)]


STFT = """
import numpy as np, torch
signal = torch.sin(torch.arange(400, dtype=torch.float64) * 0.3) + 0.1 * torch.arange(400, dtype=torch.float64) / 400
window = torch.hann_window(64, dtype=torch.float64)
for name, call in {"stft": lambda: torch.stft(signal, 64, 16, window=window),
                   "method": lambda: signal.stft(64, 16, 64, window)}.items():
    try:
        spectrum = call()
    except RuntimeError as error:
        print(name, "refused" if "return_complex" in str(error) else str(error))
        continue
    # By hand: centre-pad by n_fft // 2 (reflect), frames every hop, windowed, one-sided DFT.
    padded = np.pad(signal.numpy(), 32, mode="reflect")
    frames = np.stack([padded[i:i + 64] * window.numpy() for i in range(0, len(padded) - 64 + 1, 16)], 1)
    dft = np.fft.rfft(frames, axis=0)
    expected = np.stack([dft.real, dft.imag], -1)
    print(name, tuple(spectrum.shape) == expected.shape and spectrum.dtype == torch.float64
          and np.allclose(spectrum.numpy(), expected))
real_view = torch.view_as_real(torch.stft(signal, 64, 16, window=window, return_complex=True))
try:
    back = torch.istft(real_view, 64, 16, window=window, length=400)
    print("istft", bool(torch.allclose(back, signal)))
except (RuntimeError, TypeError) as error:
    print("istft", "refused" if "complex" in str(error) else str(error))
"""


def test_stft_without_return_complex_and_istft_of_the_real_view_are_refused_without_compatfix():
    result = run_python(code=STFT, compatfix=False)
    assert result.stdout.split() == ["stft", "refused", "method", "refused", "istft", "refused"], result.stderr


def test_stft_returns_the_old_real_layout_and_istft_inverts_it():
    result = run_python(code=STFT)
    assert result.stdout.split() == ["stft", "True", "method", "True", "istft", "True"], result.stderr


INPLACE = """
import torch
results = []
for name, step in (("+= 0.5", lambda a: a.__iadd__(0.5)), ("*= 1.5", lambda a: a.__imul__(1.5)),
                   ("/= 2", lambda a: a.__itruediv__(2)), ("div_(tensor)", lambda a: a.div_(torch.tensor([2, 2, 2]))),
                   ("sub_(2.7)", lambda a: a.sub_(2.7))):
    a = torch.tensor([1, 5, -5])
    try:
        out = step(a)
        results.append((name, a.tolist(), out is a))
    except RuntimeError as error:
        results.append((name, "refused" if "can't be cast" in str(error) else str(error), None))
print(repr(results))
"""


def test_inplace_int_arithmetic_is_refused_by_default():
    import ast

    for compatfix in (False, True):  # off, and on without the opt-in
        result = run_python(code=INPLACE, compatfix=compatfix)
        assert [r[1] for r in ast.literal_eval(result.stdout)] == ["refused"] * 5, result.stderr


def test_inplace_int_arithmetic_follows_torch_1_4_when_enabled():
    import ast

    from support import clean_env

    result = run_python(code=INPLACE, env=clean_env(True, COMPATFIX_ENABLE="torch.inplace_int_arithmetic"))
    values = [1, 5, -5]

    def truncating(v, d):  # C's integer division, torch <= 1.4's for integer tensors
        q = abs(v) // abs(d)
        return q if (v >= 0) == (d > 0) else -q

    expected = [
        ("+= 0.5", [v + int(0.5) for v in values], True),  # the operand becomes 0 first
        ("*= 1.5", [v * int(1.5) for v in values], True),
        ("/= 2", [truncating(v, 2) for v in values], True),
        ("div_(tensor)", [truncating(v, 2) for v in values], True),
        ("sub_(2.7)", [v - int(2.7) for v in values], True),
    ]
    assert ast.literal_eval(result.stdout) == expected, result.stderr


# --- torch.comparisons_contiguous: the top-k accuracy helper of 2019-22 training scripts
# (the ImageNet example's, copied into SwAV, MoCo, and many more), in our own words.

TOPK = """
import json, torch
scores = torch.tensor([[0.1, 0.5, 0.2, 0.9, 0.3, 0.0],
                       [0.8, 0.1, 0.7, 0.2, 0.6, 0.5],
                       [0.2, 0.3, 0.1, 0.4, 0.0, 0.9]])
labels = torch.tensor([1, 4, 2])

def topk_hits(output, target, ks):
    best = max(ks)
    _, guesses = output.topk(best, 1, True, True)
    guesses = guesses.t()                                        # (best, batch): transposed
    hit = guesses.eq(target.view(1, -1).expand_as(guesses))
    return [hit[:k].view(-1).float().sum(0).item() for k in ks]  # the view that 1.7 broke

results = {}
for name, compare in (("method", None), ("function", torch.ge)):
    try:
        if compare is None:
            results[name] = topk_hits(scores, labels, (1, 3))
        else:  # torch.ge(x, x) is all True: the layout question without the helper
            flat = compare(scores.t(), scores.t())[:2].view(-1)
            results[name] = [flat.sum().item()]
    except RuntimeError as error:
        results[name] = "refused" if "view size is not compatible" in str(error) else str(error)
print(json.dumps(results))
"""


def _ranked(row):
    return sorted(range(len(row)), key=lambda i: -row[i])


def test_topk_accuracy_view_is_refused_without_the_shim():
    import json

    from support import clean_env

    for env in (clean_env(False), clean_env(True, COMPATFIX_DISABLE="torch.comparisons_contiguous")):
        result = run_python(code=TOPK, env=env)
        assert json.loads(result.stdout) == {"method": "refused", "function": "refused"}, result.stderr


def test_topk_accuracy_counts_hits_with_contiguous_comparisons():
    import json

    result = run_python(code=TOPK)
    scores = [[0.1, 0.5, 0.2, 0.9, 0.3, 0.0], [0.8, 0.1, 0.7, 0.2, 0.6, 0.5], [0.2, 0.3, 0.1, 0.4, 0.0, 0.9]]
    labels = [1, 4, 2]
    hits = [sum(label in _ranked(row)[:k] for row, label in zip(scores, labels)) for k in (1, 3)]
    assert hits == [0, 2]  # by hand: top-1 misses all three; labels 1 and 4 are in their top 3
    assert json.loads(result.stdout) == {"method": [float(h) for h in hits], "function": [6.0]}, result.stderr


# --- the wrapped torch functions and TorchScript -------------------------------------------

SCRIPTED = '''
import warnings
import torch
warnings.simplefilter("ignore")
def old_code(x, mask):
    return torch.eq(x, 0).float().sum() + torch.ne(x.t(), 0).float().sum() + torch.masked_fill(x, mask, 1.0).sum()
x = torch.tensor([[0.0, 1.0, 2.0], [3.0, 0.0, 5.0]])
mask = x > 2
scripted = torch.jit.script(old_code)
print(float(scripted(x, mask)), float(old_code(x, mask)))
'''


@pytest.mark.parametrize("compatfix", [True, False])
def test_torch_jit_script_compiles_calls_of_the_wrapped_torch_functions(tmp_path, compatfix):
    # torch builds TorchScript's table of builtins during its import, before the shims wrap
    # torch.eq and torch.masked_fill: without registering the wrappers, scripting fails.
    script = tmp_path / "scripted.py"  # a file: torch.jit.script reads the source
    script.write_text(SCRIPTED)
    result = run_python(str(script), compatfix=compatfix)
    assert result.returncode == 0, result.stderr
    # By hand: eq finds two zeros (2), ne four nonzeros (4), and the masked fill turns 3 and 5
    # into ones (0 + 1 + 2 + 1 + 0 + 1 = 5): 11, scripted and not.
    assert result.stdout.split() == ["11.0", "11.0"]


SCRIPTED_STFT = '''
import warnings
import torch
warnings.simplefilter("ignore")
def spectrum(x):
    return torch.stft(x, 16, hop_length=16, window=torch.ones(16), center=False, return_complex=True)
def back(z):
    return torch.istft(z, 16, hop_length=16, window=torch.ones(16), center=False)
x = torch.arange(64, dtype=torch.float32).sin()
z = torch.jit.script(spectrum)(x)
# By hand: with a window of ones, no centring and hop = n_fft, each column is the rfft of one
# 16-sample chunk of the signal.
print(bool(torch.allclose(z, torch.fft.rfft(x.view(4, 16), dim=-1).T, atol=1e-5)),
      bool(torch.allclose(torch.jit.script(back)(z), x, atol=1e-5)))
'''


@pytest.mark.parametrize("compatfix", [True, False])
def test_torch_jit_script_compiles_calls_of_the_wrapped_stft_and_istft(tmp_path, compatfix):
    # torch.stft / istft are Python functions, not builtins: TorchScript compiles what it finds
    # under the name, and the shims' wrappers (*args, **kwargs) do not compile; compatfix marks
    # them so that torch.jit.script compiles the originals beneath.
    script = tmp_path / "scripted_stft.py"
    script.write_text(SCRIPTED_STFT)
    result = run_python(str(script), compatfix=compatfix)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True"]
