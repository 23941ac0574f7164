"""The inventory of removed APIs: every name 2020-22 research code calls that today's
libraries and Python removed, with the shim that restores it or the reason there is none.

Sources are each library's own records, read from the installed packages where possible:
numpy 2.4's ``numpy._expired_attrs_2_0.__expired_attributes__`` and ``__former_attrs__``
(NEP 52), torch 2.14's removal stubs in ``torch/_linalg_utils.py`` ("deprecated since version
1.9 and is now removed"), the release notes of torchvision, SciPy, scikit-learn,
scikit-image and setuptools, and "What's New" for Python 3.9-3.13 (PEP 594). Each entry is
data; ``python -m compatfix.inventory --markdown`` generates docs/removed-apis.md from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Mapping


@dataclass(frozen=True)
class Removal:
    """One removed (or now-raising) API.

    Exactly one of: ``shim`` names the compatfix shim that restores it; ``dependency``
    names the maintained redistribution compatfix depends on (pyproject.toml, with an
    environment marker) that brings it back; ``reason`` says why there is neither and
    what to do instead. ``evidence`` says where the removal is recorded. ``opt_in``: the shim
    is off by default (it restores a behaviour that is not safe to restore silently; the
    registry's ``default=False``), ``note`` adds to the status.

    ``replacement`` says what code written for today's libraries does instead. ``renames``
    and ``rewrites`` map the names this entry covers that no shim's record covers (an entry
    without a shim; a name its shim does not restore) to what replaces them, in
    ``compatfix scan``'s terms (``compatfix.registry.Shim``): a rename has the same meaning
    and is safe to rewrite, a rewrite is shown and never applied.

    ``returned_in`` / ``returned``: the release that brought names back with another meaning,
    and what each now means (``numpy.bool`` is numpy's boolean type again since numpy 2.0). On
    such a release a use of the name runs, but not as it did when the code was written:
    ``compatfix scan`` reports it as ``changed``, not as fixed.
    """

    library: str
    names: str
    removed_in: str
    date: str
    old_use: str
    evidence: str
    shim: str | None = None
    reason: str | None = None
    dependency: str | None = None
    opt_in: bool = False
    note: str | None = None
    replacement: str | None = None
    renames: Mapping[str, str] = field(default_factory=dict)
    rewrites: Mapping[str, str] = field(default_factory=dict)
    returned_in: str | None = None
    returned: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if [self.shim, self.dependency, self.reason].count(None) != 2:
            raise ValueError("%s %s: give exactly one of shim, dependency or reason" % (self.library, self.names))

    @property
    def status(self) -> str:
        if self.shim:
            status = "shim `%s`" % self.shim
            if self.opt_in:
                status += ", opt-in (`--enable %s`)" % self.shim
        elif self.dependency:
            status = "dependency " + self.dependency
        else:
            status = "no shim: %s" % self.reason
        if self.returned_in:
            status += "; back in %s with another meaning (%s)" % (self.returned_in, "; ".join(
                "%s: %s" % (name, meaning) for name, meaning in self.returned.items()))
        return status + ("; " + self.note if self.note else "")


NUMPY_TABLE = "numpy/_expired_attrs_2_0.py __expired_attributes__ (numpy 2.4.6)"

REMOVALS: tuple[Removal, ...] = (
    # numpy ---------------------------------------------------------------------------
    Removal("numpy", "np.float, np.int, np.object, np.str, np.complex, np.unicode",
            "1.24", "2022-12", "dtype arguments: astype(np.float), dtype=np.int",
            "numpy/__init__.py __former_attrs__", shim="numpy.builtin_aliases",
            replacement="float, int, object, str, complex (the builtins), or np.float64 / np.int64 where a numpy type is meant"),
    Removal("numpy", "np.bool, np.long", "1.24", "2022-12",
            "np.bool for the builtin bool (masks, dtype=np.bool), np.long for int",
            "numpy 1.24.0 release notes; numpy 2.0.0 release notes (np.bool and np.long added back)",
            shim="numpy.builtin_aliases", note="restored as the builtins on numpy 1.24-1.26 only",
            replacement="bool and int (the builtins), or np.bool_ / np.int64 where a numpy type is meant",
            returned_in="2.0",
            returned={"numpy.bool": "numpy's boolean scalar type (np.bool_): dtype=np.bool means what dtype=bool "
                      "did, but isinstance(True, np.bool) is False and np.bool(x) is a numpy scalar",
                      "numpy.long": "a C long (np.int64 on Linux and macOS, np.int32 on Windows): dtype=np.long "
                      "means dtype=int except on Windows, and np.long(x) is a numpy scalar"}),
    Removal("numpy", "np.asscalar", "1.23", "2022-06",
            "a.item() spelled asscalar(a) in metric and logging code",
            "numpy 1.23.0 release notes (expired deprecation of 1.16)", shim="numpy.asscalar",
            replacement="a.item()"),
    Removal("numpy", "float_, complex_, cfloat, singlecomplex, longfloat, longcomplex, clongfloat, string_, "
            "unicode_, NaN, Inf, Infinity, infty, PINF, NINF, PZERO, NZERO, alltrue, sometrue, round_, "
            "mat, issubclass_, asfarray, sctypes, find_common_type",
            "2.0", "2024-06", "aliases of the recommended names", NUMPY_TABLE + "; NEP 52",
            shim="numpy.numpy2_aliases",
            replacement="the names numpy 2 recommends: float64, complex128, bytes_, str_, nan, inf, all, any, asmatrix, ..."),
    Removal("numpy", "product, cumproduct, bool8, int0, uint0, object0, str0, bytes0, void0, row_stack",
            "2.0 (row_stack: after 2.4)", "2024-06", "aliases of prod, cumprod and the scalar types",
            "numpy 2.0.0 release notes (NEP 52)", shim="numpy.numpy2_aliases",
            replacement="prod, cumprod, bool_, intp, uintp, object_, str_, bytes_, void, vstack"),
    Removal("numpy", "np.msort", "2.0", "2024-06", "np.sort(a, axis=0) of medians and rank statistics",
            "numpy 2.0.0 release notes (NEP 52: 'use np.sort(a, axis=0)')", shim="numpy.numpy2_functions",
            replacement="np.sort(a, axis=0)"),
    Removal("numpy", "cast, fastCopyAndTranspose, safe_eval, obj2sctype, sctype2char, issctype, issubsctype, "
            "byte_bounds, compare_chararrays, format_parser, DataSource, add_newdoc, add_docstring",
            "2.0", "2024-06", "utility functions with a direct replacement named in the table",
            NUMPY_TABLE, shim="numpy.numpy2_functions",
            replacement="the replacement numpy 2's table names for each (astype, a.T.copy(), ast.literal_eval, np.dtype(...).type, ...)"),
    Removal("numpy", "maximum_sctype, recfromcsv, recfromtxt, deprecate, deprecate_with_doc",
            "2.0", "2024-06", "widest-type checks, reading record arrays from text, deprecating helpers",
            NUMPY_TABLE, shim="numpy.numpy2_functions",
            replacement="explicit widest types, np.genfromtxt(...).view(np.recarray), warnings.warn"),
    Removal("numpy", "geterrobj, seterrobj, set_numeric_ops, set_string_function, lookfor, who, source, "
            "add_newdoc_ufunc, tracemalloc_domain, nbytes, get_array_wrap",
            "2.0", "2024-06", "interactive helpers and internals",
            NUMPY_TABLE,
            reason="no faithful rebuild from public API (error objects and numeric-op tables are gone); "
            "use np.errstate, np.set_printoptions, inspect.getsource as the table says",
            replacement="np.errstate / np.seterr, np.set_printoptions, inspect.getsource, np.info",
            rewrites={"numpy.geterrobj": "np.geterr()",
                      "numpy.seterrobj": "np.seterr(...) or the np.errstate context manager",
                      "numpy.set_numeric_ops": "no replacement: numpy no longer lets operators be swapped",
                      "numpy.set_string_function": "np.set_printoptions(formatter=...)",
                      "numpy.lookfor": "the documentation's search, or help()",
                      "numpy.who": "no replacement (list arrays in globals() yourself)",
                      "numpy.source": "inspect.getsource",
                      "numpy.add_newdoc_ufunc": "ufunc.__doc__ = ...",
                      "numpy.tracemalloc_domain": "numpy.lib.tracemalloc_domain",
                      "numpy.nbytes": "np.dtype(t).itemsize",
                      "numpy.get_array_wrap": "no replacement (an internal helper)"}),
    Removal("numpy", "in1d, trapz", "2.4", "2025-12", "set membership, integration",
            "numpy 2.4.0 release notes", shim="numpy.numpy24_removals",
            replacement="np.isin(a, b).ravel() and np.trapezoid"),
    # torch ---------------------------------------------------------------------------
    Removal("numpy", "np.warnings", "1.24", "2022-12", "np.warnings.filterwarnings / catch_warnings",
            "numpy 1.24.0 release notes (expired deprecations; numpy#21403)", shim="numpy.warnings",
            replacement="import warnings"),
    Removal("torch", "torch.symeig", "1.13 (deprecated 1.9)", "2022-10",
            "eigenvalues (ascending) and, with eigenvectors=True, eigenvectors of the upper triangle; "
            "eigenvectors=False returned an empty tensor as V",
            "torch/_linalg_utils.py _symeig stub (torch 2.14.1)", shim="torch.linalg_removals",
            replacement="torch.linalg.eigh"),
    Removal("torch", "torch.eig", "1.13 (deprecated 1.9)", "2022-10",
            "eigenvalues as a real (n, 2) tensor of (real, imaginary) and eigenvectors as real columns",
            "torch/_linalg_utils.py eig stub", shim="torch.linalg_removals",
            replacement="torch.linalg.eig"),
    Removal("torch", "torch.solve", "1.13 (deprecated 1.9)", "2022-10",
            "solve(B, A) -> (solution, LU): arguments in the reverse order of linalg.solve",
            "torch/_linalg_utils.py solve stub", shim="torch.linalg_removals",
            replacement="torch.linalg.solve(A, B) (arguments swapped)"),
    Removal("torch", "torch.lstsq", "1.13 (deprecated 1.9)", "2022-10",
            "lstsq(B, A) -> (solution, QR) with the solution padded to max(m, n) rows",
            "torch/_linalg_utils.py lstsq stub", shim="torch.linalg_removals",
            replacement="torch.linalg.lstsq(A, B) (arguments swapped)"),
    Removal("torch", "torch.qr", "2.x (deprecated 1.9)", "2022-10",
            "qr(A, some=True) -> (Q, R)", "torch/_linalg_utils.py qr stub", shim="torch.linalg_removals",
            replacement="torch.linalg.qr"),
    Removal("torch", "torch.cholesky", "1.13 (deprecated 1.9)", "2022-10",
            "cholesky(A, upper=False) -> L (or U with upper=True)",
            "torch/_linalg_utils.py cholesky stub", shim="torch.linalg_removals",
            replacement="torch.linalg.cholesky"),
    Removal("torch", "torch.matrix_rank", "1.13 (deprecated 1.9)", "2022-10",
            "matrix_rank(A, tol=None, symmetric=False)",
            "torch/_linalg_utils.py matrix_rank stub", shim="torch.linalg_removals",
            replacement="torch.linalg.matrix_rank"),
    Removal("torch", "torch.rfft, torch.irfft, torch.ifft", "1.8", "2021-03",
            "FFT-based losses and spectral layers: rfft(x, signal_ndim, normalized, onesided) in the "
            "real-view (..., 2) layout; irfft(..., signal_sizes)",
            "torch 1.8.0 release notes (torch.fft became a module)", shim="torch.fft_functions",
            replacement="torch.fft.rfftn / irfftn / ifftn with view_as_real / view_as_complex"),
    Removal("torch", "torch.fft(x, signal_ndim, normalized)", "1.8", "2021-03",
            "complex FFT in the real-view layout", "torch 1.8.0 release notes",
            reason="the name is now the torch.fft module; making a module callable would change it "
            "for every user: use torch.view_as_real(torch.fft.fftn(torch.view_as_complex(x), dim=...))",
            replacement="torch.view_as_real(torch.fft.fftn(torch.view_as_complex(x), dim=...))",
            rewrites={"torch.fft()": "torch.view_as_real(torch.fft.fftn(torch.view_as_complex(x), dim=...)) (torch.fft is a module now)"}),
    Removal("torch", "torch._six", "2.0", "2023-03", "string_classes, int_classes, container_abcs, inf",
            "torch 2.0.0 release notes", shim="torch._six",
            replacement="the standard library: str, int, collections.abc, math.inf, math.nan"),
    Removal("torch", "integer tensor / with floor semantics", "1.5 (error), 1.6+ true division", "2020-04",
            "integer_tensor / n meaning floor division",
            "torch 1.5.0 release notes",
            reason="now returns a float tensor instead of raising; restoring floor division silently "
            "would change results of code written for the new rule, so no shim; use // or torch.div(..., "
            "rounding_mode='floor')",
            replacement="// or torch.div(a, b, rounding_mode='floor') where floor division is meant"),
    Removal("torch", "uint8 masks in masked_fill, masked_fill_, masked_select, masked_scatter(_)",
            "2.x (deprecated 1.2)", "2023",
            "attention and padding masks built with .byte() or torch.ByteTensor",
            "torch 1.2.0 release notes (bool masks); today's 'only supports boolean masks' errors",
            shim="torch.uint8_masks", note="restored: a refused call is retried with mask.bool()",
            replacement="mask.bool()"),
    Removal("torch", "x[uint8_mask] = value (index assignment with a uint8 mask)", "2.x (deprecated 1.2)", "2023",
            "in-place masking of losses and targets",
            "today's 'masked_fill_ only supports boolean masks' error from index_put_",
            reason="the assignment goes through Tensor.__setitem__, on every indexing assignment of every "
            "program; wrapping it costs too much: use x[mask.bool()] = value",
            replacement="x[mask.bool()] = value"),
    Removal("torch", "stft without return_complex (real (..., 2) result); istft of that real view",
            "2.0 (deprecated 1.8)", "2023-03", "spectrogram losses and vocoders in 2020-22 audio code",
            "torch 2.0.0 release notes; 'stft requires the return_complex parameter' errors",
            shim="torch.stft_real_view", note="restored: only calls that now raise change",
            replacement="torch.view_as_real(torch.stft(..., return_complex=True))"),
    Removal("torch", "in-place arithmetic on integer tensors with a float result (a += 0.5, a /= 2)",
            "1.5 / 1.7 (type promotion; true division)", "2020-04",
            "counters and index arithmetic written for torch <= 1.4",
            "torch 1.5.0 and 1.7.0 release notes (type promotion, BC-breaking)",
            shim="torch.inplace_int_arithmetic", opt_in=True,
            note="opt-in: torch 1.4's truncation silently hides what torch now reports",
            replacement="out-of-place arithmetic with an explicit cast, or a float tensor"),
    Removal("torch", "in-place clamp_ / clamp_min_ / clamp_max_ / clip_ of an integer tensor with a float bound",
            "1.12", "2022-06", "YOLOv3-family target assignment: gj.clamp_(0, gain[3] - 1)",
            "pytorch#77035 (clamp's bounds take part in type promotion; BC-breaking note)",
            shim="torch.clamp_float_bounds", note="restored for in-place calls, which now raise; the out-of-place "
            "clamp returns a float tensor since 1.12 and is left as it is",
            replacement="integer bounds: t.clamp_(0, int(bound))"),
    Removal("torch", "1 - bool_tensor, -bool_tensor", "1.2", "2019-08",
            "mask inversion when comparisons returned uint8",
            "torch 1.2.0 release notes (comparison ops return bool)",
            reason="before 2020; an operator on every tensor: use ~mask or mask.logical_not()",
            replacement="~mask or mask.logical_not()"),
    Removal("torch", "torch._utils._accumulate", "2.3", "2024-04",
            "torch.utils.data.random_split's helper, imported by dataset splitters",
            "pytorch#116192 (private helper replaced by itertools.accumulate)", shim="torch._utils.accumulate",
            replacement="itertools.accumulate"),
    Removal("torch", "torch.utils.data.Sampler.__init__(self, data_source)", "2.10 (ignored and warned in 2.9)",
            "2026-01", "custom samplers calling super().__init__(dataset)",
            "pytorch#163134; 'object.__init__() takes exactly one argument'",
            shim="torch.utils.data.Sampler.data_source",
            replacement="super().__init__() without the dataset (Sampler never used it)"),
    Removal("torch", "DistributedDataParallel._sync_params", "1.11", "2022-03",
            "pytorch-lightning 1.0-1.1's LightningDistributedDataParallel.forward",
            "pytorch#64514 (buffer sync moved into _pre_forward)",
            shim="torch.nn.parallel.DistributedDataParallel._sync_params",
            replacement="pytorch-lightning >= 1.2 (no forward override), or DistributedDataParallel.forward"),
    # torchvision ---------------------------------------------------------------------
    Removal("torchvision", "torchvision.transforms.functional_tensor, functional_pil", "0.17", "2024-01",
            "basicsr's rgb_to_grayscale import", "torchvision 0.17 release notes",
            shim="torchvision.functional_tensor",
            replacement="torchvision.transforms.functional"),
    Removal("torchvision", "torchvision.ops._new_empty_tensor", "0.9", "2021-03",
            "DETR and Deformable DETR's util/misc.py (their version check reads 0.29 as 0.2)",
            "pytorch/vision#3156", shim="torchvision.ops.new_empty_tensor",
            replacement="torch.nn.functional.interpolate and the layers themselves (empty batches work natively)"),
    Removal("torchvision", "torchvision.ops.misc._NewEmptyTensorOp, _new_empty_tensor, _output_size, "
            "_check_size_scale_factor", "0.5 / 0.7", "2020-06",
            "DETR-era interpolate wrappers for empty batches", "pytorch/vision#2252",
            shim="torchvision.ops.misc.empty_tensor_helpers",
            replacement="torch.nn.functional.interpolate (empty batches work natively)"),
    Removal("torchvision", "torchvision.transforms.Scale, RandomSizedCrop; transforms.functional.scale",
            "0.12 (deprecated 0.2)", "2022-03", "ImageNet training transforms of 2017-20 code",
            "torchvision 0.12 release notes", shim="torchvision.transforms.scale",
            replacement="torchvision.transforms.Resize and RandomResizedCrop; transforms.functional.resize"),
    Removal("torchvision", "torchvision.models.utils", "0.11", "2021-10",
            "load_state_dict_from_url in backbones", "torchvision 0.11 release notes",
            shim="torchvision.models_utils",
            replacement="torch.hub.load_state_dict_from_url"),
    Removal("torchvision", "torchvision.io.read_video, read_video_timestamps, write_video, VideoReader, "
            "torchvision.io.video", "0.26 (deprecated 0.22)", "2026-03",
            "clip loading in action recognition and the Kinetics/UCF101/HMDB51 datasets",
            "torchvision 0.22 and 0.26 release notes (video moved to TorchCodec)",
            reason="not yet shimmed: needs a video decoder (torchvision 0.25 read it through PyAV); use "
            "torchcodec.decoders.VideoDecoder, or pin torchvision<0.26",
            replacement="torchcodec.decoders.VideoDecoder, or torchvision < 0.26",
            rewrites={"torchvision.io.read_video": "torchcodec.decoders.VideoDecoder(path) and its frames",
                      "torchvision.io.read_video_timestamps": "torchcodec.decoders.VideoDecoder(path).metadata",
                      "torchvision.io.write_video": "torchcodec.encoders.VideoEncoder, or PyAV / imageio",
                      "torchvision.io.VideoReader": "torchcodec.decoders.VideoDecoder",
                      "torchvision.io.video": "torchcodec.decoders"}),
    # SciPy ---------------------------------------------------------------------------
    Removal("scipy", "scipy.misc.imresize, imread, imsave, imrotate, bytescale, toimage, fromimage",
            "1.2 (deprecated 1.0)", "2018-12",
            "image I/O and resizing with uint8 bytescaling in 2017-20 super-resolution and GAN code",
            "SciPy 1.2.0 release notes",
            shim="scipy.misc.imresize",
            replacement="PIL.Image and imageio; scipy.ndimage.rotate for imrotate",
            rewrites={"scipy.misc.imrotate": "scipy.ndimage.rotate(arr, angle, reshape=False) or Image.fromarray(arr).rotate(angle)"}),
    Removal("scipy", "scipy.misc.logsumexp, comb, factorial, factorial2, factorialk, pade", "1.3", "2019-05",
            "log-likelihood and combinatorics helpers", "SciPy 1.3.0 release notes (moved to scipy.special, "
            "pade to scipy.interpolate)", shim="scipy.misc.logsumexp",
            replacement="scipy.special.logsumexp, comb, factorial, factorial2, factorialk; scipy.interpolate.pade"),
    Removal("scipy", "scipy.integrate.simps, trapz, cumtrapz", "1.14 (renamed 1.6)", "2024-06",
            "Simpson/trapezoid integration of curves", "SciPy 1.14.0 release notes",
            shim="scipy.integrate.renamed",
            replacement="scipy.integrate.simpson, trapezoid, cumulative_trapezoid"),
    # scikit-learn --------------------------------------------------------------------
    Removal("scikit-learn", "sklearn.utils.linear_assignment_.linear_assignment", "0.23 (deprecated 0.21)",
            "2020-05", "Hungarian matching in tracking and clustering accuracy; returned an (n, 2) array",
            "scikit-learn 0.21 / 0.23 release notes", shim="sklearn.utils.linear_assignment_",
            replacement="scipy.optimize.linear_sum_assignment"),
    Removal("scikit-learn", "sklearn.externals.joblib", "0.23 (deprecated 0.21)",
            "2020-05", "from sklearn.externals import joblib; joblib.dump(model, path)",
            "scikit-learn 0.23 release notes",
            shim="sklearn.externals.joblib",
            note="`sklearn.externals.joblib.module` provides the module for `import sklearn.externals.joblib`",
            replacement="import joblib"),
    Removal("scikit-learn", "sklearn.externals.six", "0.23 (deprecated 0.21)",
            "2020-05", "Python 2 compatibility", "scikit-learn 0.23 release notes",
            reason="six is not a dependency of scikit-learn any more: use the standard library (or pip install six)",
            replacement="the standard library, or pip install six and import six",
            rewrites={"sklearn.externals.six": "six (pip install six), or the standard library"}),
    # scikit-image --------------------------------------------------------------------
    Removal("scikit-image", "skimage.measure.compare_ssim, compare_psnr, compare_mse, compare_nrmse",
            "0.18 (deprecated 0.16)", "2020-12", "image-quality metrics in restoration code",
            "scikit-image 0.18.0 release notes", shim="skimage.measure.compare_metrics",
            replacement="skimage.metrics.structural_similarity, peak_signal_noise_ratio, mean_squared_error, normalized_root_mse"),
    Removal("scikit-image", "multichannel= of gaussian, rescale, pyramid_*, hog, slic, felzenszwalb, "
            "structural_similarity, denoise_*, match_histograms, montage and others",
            "0.21 (deprecated 0.19 for channel_axis)", "2023-06",
            "rescale(img, 0.5, multichannel=True) on HxWxC images",
            "scikit-image 0.19.0 / 0.21.0 release notes", shim="skimage.multichannel",
            replacement="channel_axis=-1 / channel_axis=None"),
    Removal("scikit-image", "selem= of the morphology operators, filters.median and filters.rank",
            "0.21 (renamed footprint in 0.19)", "2023-06", "binary_erosion(mask, selem=disk(3))",
            "scikit-image 0.19.0 / 0.21.0 release notes", shim="skimage.selem",
            replacement="footprint="),
    Removal("scikit-image", "skimage.feature.greycomatrix, greycoprops", "0.21 (renamed 0.19)", "2023-06",
            "GLCM texture features", "scikit-image 0.19.0 / 0.21.0 release notes",
            shim="skimage.feature.grey_names",
            replacement="skimage.feature.graycomatrix, graycoprops"),
    Removal("scikit-image", "skimage.color.rgb2grey, grey2rgb", "0.21 (deprecated 0.19)", "2023-06",
            "grey conversion in data loaders", "scikit-image 0.19.0 / 0.21.0 release notes",
            shim="skimage.color.grey_names",
            replacement="skimage.color.rgb2gray, gray2rgb"),
    Removal("scikit-image", "skimage.feature.register_translation", "0.19 (moved 0.17)", "2021-12",
            "sub-pixel image registration", "scikit-image 0.17.0 / 0.19.0 release notes",
            shim="skimage.feature.register_translation",
            replacement="skimage.registration.phase_cross_correlation"),
    Removal("scikit-image", "skimage.morphology.watershed", "0.19 (moved 0.17)", "2021-12",
            "instance separation in segmentation post-processing", "scikit-image 0.17.0 / 0.19.0 release notes",
            shim="skimage.morphology.watershed",
            replacement="skimage.segmentation.watershed"),
    Removal("scikit-image", "skimage.measure.marching_cubes_lewiner, marching_cubes_classic",
            "0.19 (merged 0.17)", "2021-12", "meshing SDF and occupancy volumes",
            "scikit-image 0.17.0 / 0.19.0 release notes", shim="skimage.measure.marching_cubes",
            replacement="skimage.measure.marching_cubes(method=...)"),
    Removal("scikit-image", "structural_similarity on float images without data_range (raises now)",
            "0.20", "2023-02", "ssim(a, b) on float images: data_range 2, the width of [-1, 1]",
            "scikit-image 0.20.0 release notes (PR 6612)",
            shim="skimage.metrics.ssim_data_range", opt_in=True,
            note="the old value is the old papers', twice the range of images in [0, 1]",
            replacement="structural_similarity(..., data_range=...)"),
    # setuptools ----------------------------------------------------------------------
    Removal("setuptools", "pkg_resources (get_distribution, require, parse_version, iter_entry_points, "
            "resource_filename, working_set, DistributionNotFound, VersionConflict, parse_requirements, "
            "declare_namespace, load_entry_point, resource_stream, packaging)",
            "82", "2025-12", "version checks and entry points at import time",
            "setuptools 81 deprecation warning ('slated for removal as early as 2025-11-30')",
            shim="pkg_resources",
            replacement="importlib.metadata, importlib.resources and packaging.version"),
    # matplotlib and pandas -----------------------------------------------------------
    Removal("matplotlib", "matplotlib.blocking_input", "3.7", "2023-02",
            "mmcls 0.x's visualisation module imports BlockingInput when the package loads",
            "matplotlib 3.7 API changes (removals)", shim="matplotlib.blocking_input",
            replacement="fig.canvas.mpl_connect plus fig.canvas.start_event_loop / stop_event_loop"),
    Removal("pandas", "DataFrame.append, Series.append", "2.0", "2023-04", "building result tables row by row",
            "pandas 2.0.0 release notes (removal of prior version deprecations)", shim="pandas.append",
            replacement="pandas.concat([df, other]) (a row: pd.concat([df, pd.DataFrame([row])], ignore_index=True))"),
    Removal("pandas", "DataFrame.iteritems, Series.iteritems", "2.0", "2023-04", "column loops in data preparation",
            "pandas 2.0.0 release notes", shim="pandas.iteritems", replacement="DataFrame.items / Series.items"),
    Removal("rich", "Console.clear_live() without a live display", "14.1", "2025-07",
            "pytorch-lightning 1.5's RichProgressBar at the first trainer.fit",
            "rich 14.1.0 (a stack of live displays; clear_live pops it)", shim="rich.console.clear_live_without_live",
            replacement="call clear_live() only inside a Live (pytorch-lightning >= 1.6)"),
    # Python --------------------------------------------------------------------------
    Removal("python", "collections.Iterable, Mapping, MutableMapping, Sequence, ... (ABC aliases)", "3.10",
            "2021-10", "isinstance checks", "What's New in Python 3.10",
            shim="collections.abc_aliases",
            replacement="collections.abc.<ABC>"),
    Removal("python", "format() / f-strings of a str-mixin Enum member giving its value", "3.11", "2022-10",
            "pytorch-lightning 1.x's LightningEnum in f-strings (attribute names, paths)",
            "What's New in Python 3.11 (enum: Enum.__format__ now matches __str__)",
            shim="pytorch_lightning.utilities.enum_format", note="restored for pytorch-lightning's enums only",
            replacement="f\"{member.value}\""),
    Removal("python", "inspect.getargspec", "3.11", "2022-10", "argument introspection in registries",
            "What's New in Python 3.11", shim="inspect.getargspec",
            replacement="inspect.getfullargspec or inspect.signature"),
    Removal("python", "fractions.gcd", "3.9", "2020-10", "gcd of integers", "What's New in Python 3.9",
            shim="fractions.gcd",
            replacement="math.gcd"),
    Removal("python", "asyncio.coroutine", "3.11", "2022-10", "generator-based coroutines",
            "What's New in Python 3.11",
            reason="generator-based coroutines no longer run on the event loop; no faithful shim",
            replacement="async def coroutines",
            rewrites={"asyncio.coroutine": "async def (and await for yield from)"}),
    Removal("python", "distutils", "3.12", "2023-10", "distutils.version.LooseVersion checks",
            "PEP 632; What's New in Python 3.12",
            dependency="`standard-distutils` (Python >= 3.12; setuptools' own copy wins where installed)",
            replacement="packaging.version.Version for LooseVersion; setuptools for building",
            rewrites={"distutils": "packaging.version (LooseVersion), shutil / sysconfig / setuptools for the rest",
                      "distutils.version.LooseVersion": "packaging.version.Version (stricter parsing)"}),
    Removal("python", "asynchat, asyncore, smtpd", "3.12", "2023-10",
            "socket servers and test SMTP servers built on asyncore's event loop", "PEP 594; What's New in Python 3.12",
            reason="not declared, to keep the dependencies small: port to asyncio (aiosmtpd for smtpd), or "
            "install the standard-asyncore, standard-asynchat, standard-smtpd redistributions",
            replacement="asyncio (aiosmtpd for smtpd), or the standard-<name> redistribution of each module",
            rewrites={"asyncore": "asyncio, or the standard-asyncore redistribution (pip install standard-asyncore)",
                      "asynchat": "asyncio streams, or the standard-asynchat redistribution (pip install standard-asynchat)",
                      "smtpd": "aiosmtpd, or the standard-smtpd redistribution (pip install standard-smtpd)"}),
    Removal("python", "configparser.SafeConfigParser", "3.12", "2023-10", "reading .ini experiment configs",
            "What's New in Python 3.12 (an alias of ConfigParser since 3.2)",
            reason="a rename: write configparser.ConfigParser",
            replacement="configparser.ConfigParser",
            renames={"configparser.SafeConfigParser": "configparser.ConfigParser"}),
    Removal("python", "unittest.TestCase aliases: assertEquals, assertNotEquals, assertAlmostEquals, "
            "assertNotAlmostEquals, assertRegexpMatches, assertNotRegexpMatches, assertRaisesRegexp, failUnless, "
            "failIf, failUnlessEqual, failIfEqual, failUnlessRaises, assertDictContainsSubset",
            "3.12", "2023-10", "the tests of 2020-22 repositories", "What's New in Python 3.12",
            reason="methods of every test case, called on self: rename the calls",
            replacement="assertEqual, assertNotEqual, assertAlmostEqual, assertNotAlmostEqual, assertRegex, "
            "assertNotRegex, assertRaisesRegex, assertTrue, assertFalse, assertEqual, assertNotEqual, assertRaises",
            rewrites={"*.assertEquals()": "self.assertEqual", "*.assertNotEquals()": "self.assertNotEqual",
                      "*.assertAlmostEquals()": "self.assertAlmostEqual",
                      "*.assertNotAlmostEquals()": "self.assertNotAlmostEqual",
                      "*.assertRegexpMatches()": "self.assertRegex", "*.assertNotRegexpMatches()": "self.assertNotRegex",
                      "*.assertRaisesRegexp()": "self.assertRaisesRegex", "*.failUnless()": "self.assertTrue",
                      "*.failIf()": "self.assertFalse", "*.failUnlessEqual()": "self.assertEqual",
                      "*.failIfEqual()": "self.assertNotEqual", "*.failUnlessRaises()": "self.assertRaises",
                      "*.assertDictContainsSubset()": "self.assertLessEqual(subset.items(), dictionary.items())"}),
    Removal("python", "imp", "3.12", "2023-10", "imp.load_source for config files",
            "What's New in Python 3.12", dependency="`zombie-imp` (Python >= 3.12)",
            replacement="importlib: importlib.util.spec_from_file_location and module_from_spec for imp.load_source",
            rewrites={"imp": "importlib (importlib.util.spec_from_file_location + module_from_spec for load_source, importlib.reload for reload)"}),
    Removal("python", "imghdr, pipes, cgi", "3.13", "2024-10",
            "imghdr.what in dataset loaders, pipes.quote in scripts, cgi.parse_header", "PEP 594",
            dependency="`standard-imghdr`, `standard-pipes`, `legacy-cgi` (Python >= 3.13)",
            replacement="the standard-imghdr, standard-pipes, legacy-cgi redistributions, or filetype / shlex.quote / email.message",
            rewrites={"imghdr": "PIL.Image.open(path).format, or the standard-imghdr redistribution",
                      "pipes": "shlex.quote for pipes.quote",
                      "cgi": "email.message.Message for parse_header, or the legacy-cgi redistribution"}),
    Removal("python", "cgitb, crypt, sndhdr, aifc, audioop, chunk, mailcap, msilib, nis, nntplib, "
            "ossaudiodev, spwd, sunau, telnetlib, uu, xdrlib",
            "3.13", "2024-10", "rare in research code", "PEP 594",
            reason="not declared, to keep the dependencies small: install the matching "
            "standard-<name> redistribution (standard-telnetlib, standard-uu, ...)",
            replacement="the standard-<name> redistribution of each module",
            rewrites={"cgitb": "the standard-cgitb redistribution (pip install standard-cgitb)",
                      "crypt": "the standard-crypt redistribution (pip install standard-crypt)",
                      "sndhdr": "the standard-sndhdr redistribution (pip install standard-sndhdr)",
                      "aifc": "the standard-aifc redistribution (pip install standard-aifc)",
                      "audioop": "the standard-audioop redistribution (pip install standard-audioop)",
                      "chunk": "the standard-chunk redistribution (pip install standard-chunk)",
                      "mailcap": "the standard-mailcap redistribution (pip install standard-mailcap)",
                      "msilib": "the standard-msilib redistribution (pip install standard-msilib)",
                      "nis": "the standard-nis redistribution (pip install standard-nis)",
                      "nntplib": "the standard-nntplib redistribution (pip install standard-nntplib)",
                      "ossaudiodev": "the standard-ossaudiodev redistribution (pip install standard-ossaudiodev)",
                      "spwd": "the standard-spwd redistribution (pip install standard-spwd)",
                      "sunau": "the standard-sunau redistribution (pip install standard-sunau)",
                      "telnetlib": "the standard-telnetlib redistribution (pip install standard-telnetlib)",
                      "uu": "the standard-uu redistribution (pip install standard-uu)",
                      "xdrlib": "the standard-xdrlib redistribution (pip install standard-xdrlib)"}),
    Removal("python", "lib2to3", "3.13 (deprecated 3.11)", "2024-10",
            "parsing and refactoring Python source (custom fixers, yapf and black before their own parsers)",
            "PEP 617; What's New in Python 3.13",
            reason="its grammar cannot follow the language past 3.9 (PEP 617) and no redistribution is kept: use ast or "
            "libcst, or fissix, a maintained fork with the same API",
            replacement="ast or libcst; fissix for lib2to3's API",
            rewrites={"lib2to3": "ast or libcst, or fissix (pip install fissix; the same API under another name)"}),
)



STACK = "torch 2.14.1, numpy 2.4.6, Python 3.11"


@dataclass(frozen=True)
class Sweep:
    """One run of ``scripts/import_sweep.py``: every submodule of ``packages`` imported with
    compatfix off and on."""

    packages: str
    modules: int
    failing_off: int
    failing_on: int
    fixed_by: str  # the shims that fixed the difference, with what they fixed
    stack: str = STACK  # the versions the counts hold for


@dataclass(frozen=True)
class Leftover:
    """Import failures the sweep still finds with compatfix on, and why none is a removed API
    that a shim should restore (or what to do)."""

    packages: str  # the Sweep it belongs to
    modules: int
    cause: str
    reason: str


OLD_PACKAGES = ("nine 2020-22 packages: timm 0.4.12, kornia 0.5.11, pretrainedmodels 0.7.4, "
                "efficientnet_pytorch 0.7.1, imgaug 0.4.0, albumentations 0.5.2, segmentation_models_pytorch 0.2.1, "
                "pycocotools 2.0.11, lvis 0.5.3 (with tqdm, munch; `--path`)")

SWEEPS: tuple[Sweep, ...] = (
    Sweep("numpy, PIL, yaml, scipy", 1072, 18, 18, ""),
    Sweep("torch", 2208, 92, 92, ""),
    Sweep("torchvision", 187, 3, 3, ""),
    Sweep("sklearn, skimage", 659, 16, 16, ""),
    Sweep(OLD_PACKAGES, 446, 17, 3, "`numpy.numpy2_aliases`: imgaug's np.sctypes (14 modules)"),
)

OPTIONAL = "an optional dependency of a submodule that the package imports only when asked; "
LEFTOVERS: tuple[Leftover, ...] = (
    Leftover("numpy, PIL, yaml, scipy", 11, "missing module cupy (6), dask (5): scipy's array-API backends",
             OPTIONAL + "install cupy or dask to use them"),
    Leftover("numpy, PIL, yaml, scipy", 2, "missing module olefile: PIL.FpxImagePlugin, MicImagePlugin",
             OPTIONAL + "pip install olefile for FlashPix/MIC images"),
    Leftover("numpy, PIL, yaml, scipy", 1, "PIL._typing: cannot import numbers._IntegralLike",
             "a module for type checkers only; Pillow never imports it at run time"),
    Leftover("numpy, PIL, yaml, scipy", 4, "numpy build-time modules: numpy._core.cversions (code_generators), "
             "numpy._pyinstaller.hook-numpy (PyInstaller), numpy.distutils.msvc9compiler, msvccompiler",
             "build and packaging tools, not run-time API"),
    Leftover("torch", 92, "optional dependencies (cutlass, onnxscript, tensorboard, …)",
             OPTIONAL + "install the named package where the feature is used"),
    Leftover("torchvision", 2, "torchvision._C_stable, torchvision.image_stable: 'dynamic module does not define "
             "module export function'",
             "native libraries without a Python module init (the sweep finds the .so files), not Python modules"),
    Leftover("torchvision", 1, "torchvision.io.video: missing module pytorch (pytorch.vision.fb)",
             "the video API torchvision 0.26 removed; its entry above says what to do"),
    Leftover("sklearn, skimage", 11, "missing module cupy (6), dask (5): sklearn.externals.array_api_compat",
             OPTIONAL + "install cupy or dask to use them"),
    Leftover("sklearn, skimage", 1, "sklearn._build_utils.tempita: missing module Cython", "build-time only"),
    Leftover("sklearn, skimage", 4, "skimage.io plugins: astropy, GDAL, imread, SimpleITK not installed",
             OPTIONAL + "install the reader a plugin names"),
    Leftover(OLD_PACKAGES, 1, "timm.data.tf_preprocessing: missing module tensorflow",
             OPTIONAL + "pip install tensorflow for timm's TF preprocessing"),
    Leftover(OLD_PACKAGES, 1, "timm.data.parsers.parser_tfds: SystemExit",
             "the module calls exit(1) when tensorflow_datasets is missing, an optional dependency: "
             "pip install tensorflow-datasets"),
    Leftover(OLD_PACKAGES, 1, "pretrainedmodels.models.wideresnet: missing module hickle",
             "an undeclared dependency of pretrainedmodels 0.7.4: pip install hickle"),
)


def by_library() -> Iterator[tuple[str, list[Removal]]]:
    """The entries grouped by library, in inventory order."""
    groups: dict[str, list[Removal]] = {}
    for removal in REMOVALS:
        groups.setdefault(removal.library, []).append(removal)
    yield from groups.items()


def markdown() -> str:
    """docs/removed-apis.md."""
    lines = [
        "# Removed APIs",
        "",
        "Generated by `python -m compatfix.inventory --markdown > docs/removed-apis.md` from "
        "`compatfix/inventory/__init__.py`; do not edit by hand.",
        "",
        "Each entry: what was removed, in which release, what 2020-22 code did with it, and the "
        "compatfix shim that restores it or the reason there is none.",
        "",
        "`compatfix scan PATH` finds the uses of these names in your code and says, for the versions "
        "installed, whether a shim fixes each one and what replaces it ([scan.md](scan.md)); "
        "`compatfix doctor` lists the ones removed here that no shim restores by default.",
    ]
    for library, removals in by_library():
        lines += ["", "## " + library, "", "| Removed | Release | Date | Old use | Status | Evidence |",
                  "|---|---|---|---|---|---|"]
        for r in removals:
            cells = (r.names, r.removed_in, r.date, r.old_use, r.status, r.evidence)
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    lines += ["", "## Import sweep", "",
              "`scripts/import_sweep.py` imports every submodule with compatfix off and on. What still fails "
              "with it on is listed below it, with why no shim restores it.", "",
              "| Packages | Modules | Failing without compatfix | Failing with it | Fixed by | Versions |",
              "|---|---|---|---|---|---|"]
    for sweep in SWEEPS:
        lines.append("| %s | %d | %d | %d | %s | %s |" % (sweep.packages, sweep.modules, sweep.failing_off,
                                                        sweep.failing_on, sweep.fixed_by or "-", sweep.stack))
    lines += ["", "### Failures left", "", "| Packages | Modules | Cause | Why no shim |", "|---|---|---|---|"]
    for left in LEFTOVERS:
        packages = "the nine 2020-22 packages" if left.packages == OLD_PACKAGES else left.packages
        lines.append("| %s | %d | %s | %s |" % (packages, left.modules, left.cause, left.reason))
    return "\n".join(lines) + "\n"
