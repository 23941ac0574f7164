"""Shims for SciPy; each submodule's shims live beside this file (``misc.py`` for
``scipy.misc``, ``integrate.py`` for ``scipy.integrate``, ``sparse.py`` for
``scipy.sparse.linalg.eigen.arpack``). This file: the NumPy names SciPy's top level re-exported
until 1.12 (``scipy.finfo``, ``scipy.sum``, ``scipy.sqrt``, ...)."""

from __future__ import annotations

import functools

from compatfix.patching import Lazy, restore_names
from compatfix.registry import AFTER_IMPORT, Shim

# What SciPy 1.11 re-exported from NumPy (its last release to): every name of NumPy
# 1.26's __all__ that is neither private nor a module (SciPy's own loop skipped those) nor
# show_config, which SciPy has of its own ...
NUMPY_NAMES = tuple("""
    ALLOW_THREADS AxisError BUFSIZE CLIP ComplexWarning DataSource ERR_CALL ERR_DEFAULT ERR_IGNORE ERR_LOG
    ERR_PRINT ERR_RAISE ERR_WARN FLOATING_POINT_SUPPORT FPE_DIVIDEBYZERO FPE_INVALID FPE_OVERFLOW FPE_UNDERFLOW
    False_ Inf Infinity MAXDIMS MAY_SHARE_BOUNDS MAY_SHARE_EXACT ModuleDeprecationWarning NAN NINF NZERO NaN PINF
    PZERO RAISE RankWarning SHIFT_DIVIDEBYZERO SHIFT_INVALID SHIFT_OVERFLOW SHIFT_UNDERFLOW ScalarType
    TooHardError True_ UFUNC_BUFSIZE_DEFAULT UFUNC_PYVALS_NAME VisibleDeprecationWarning WRAP absolute add
    add_docstring add_newdoc add_newdoc_ufunc all allclose alltrue amax amin angle any append apply_along_axis
    apply_over_axes arange arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin argpartition argsort
    argwhere around array array2string array_equal array_equiv array_repr array_split array_str asanyarray asarray
    asarray_chkfinite ascontiguousarray asfarray asfortranarray asmatrix atleast_1d atleast_2d atleast_3d average
    bartlett base_repr binary_repr bincount bitwise_and bitwise_not bitwise_or bitwise_xor blackman block bmat
    bool_ broadcast broadcast_arrays broadcast_shapes broadcast_to busday_count busday_offset busdaycalendar byte
    byte_bounds bytes_ c_ can_cast cast cbrt cdouble ceil cfloat character chararray choose clip clongdouble
    clongfloat column_stack common_type compare_chararrays complex128 complex256 complex64 complex_
    complexfloating compress concatenate conj conjugate convolve copy copysign copyto corrcoef correlate cos cosh
    count_nonzero cov cross csingle cumprod cumproduct cumsum datetime64 datetime_as_string datetime_data deg2rad
    degrees delete deprecate deprecate_with_doc diag diag_indices diag_indices_from diagflat diagonal diff
    digitize disp divide divmod dot double dsplit dstack dtype e ediff1d einsum einsum_path empty empty_like equal
    errstate euler_gamma exp exp2 expand_dims expm1 extract eye fabs fastCopyAndTranspose fill_diagonal
    find_common_type finfo fix flatiter flatnonzero flexible flip fliplr flipud float128 float16 float32 float64
    float_ float_power floating floor floor_divide fmax fmin fmod format_float_positional format_float_scientific
    format_parser frexp from_dlpack frombuffer fromfile fromfunction fromiter frompyfunc fromregex fromstring full
    full_like gcd generic genfromtxt geomspace get_array_wrap get_include get_printoptions getbufsize geterr
    geterrcall geterrobj gradient greater greater_equal half hamming hanning heaviside histogram histogram2d
    histogram_bin_edges histogramdd hsplit hstack hypot i0 identity iinfo imag in1d index_exp indices inexact inf
    info infty inner insert int16 int32 int64 int8 int_ intc integer interp intersect1d intp invert is_busday
    isclose iscomplex iscomplexobj isfinite isfortran isin isinf isnan isnat isneginf isposinf isreal isrealobj
    isscalar issctype issubclass_ issubdtype issubsctype iterable ix_ kaiser kron lcm ldexp left_shift less
    less_equal lexsort linspace little_endian load loadtxt log log10 log1p log2 logaddexp logaddexp2 logical_and
    logical_not logical_or logical_xor logspace longcomplex longdouble longfloat longlong lookfor mask_indices mat
    matmul matrix maximum maximum_sctype may_share_memory mean median memmap meshgrid mgrid min_scalar_type
    minimum mintypecode mod modf moveaxis msort multiply nan nan_to_num nanargmax nanargmin nancumprod nancumsum
    nanmax nanmean nanmedian nanmin nanpercentile nanprod nanquantile nanstd nansum nanvar nbytes ndarray
    ndenumerate ndim ndindex nditer negative nested_iters newaxis nextafter nonzero not_equal number obj2sctype
    object_ ogrid ones ones_like outer packbits pad partition percentile pi piecewise place poly poly1d polyadd
    polyder polydiv polyfit polyint polymul polysub polyval positive power printoptions prod product promote_types
    ptp put put_along_axis putmask quantile r_ rad2deg radians ravel ravel_multi_index real real_if_close recarray
    recfromcsv recfromtxt reciprocal record remainder repeat require reshape resize result_type right_shift rint
    roll rollaxis roots rot90 round_ row_stack s_ safe_eval save savetxt savez savez_compressed sctype2char
    sctypeDict sctypes searchsorted select set_numeric_ops set_printoptions set_string_function setbufsize
    setdiff1d seterr seterrcall seterrobj setxor1d shape shares_memory short show_runtime sign signbit
    signedinteger sin sinc single singlecomplex sinh size sometrue sort sort_complex source spacing split sqrt
    square squeeze stack std str_ string_ subtract sum swapaxes take take_along_axis tan tanh tensordot tile
    timedelta64 trace tracemalloc_domain transpose trapz tri tril tril_indices tril_indices_from trim_zeros triu
    triu_indices triu_indices_from true_divide trunc typecodes typename ubyte ufunc uint uint16 uint32 uint64
    uint8 uintc uintp ulonglong unicode_ union1d unique unpackbits unravel_index unsignedinteger unwrap ushort
    vander var vdot vectorize void vsplit vstack where who zeros zeros_like
""".split())
# ... the complex-valued versions of numpy.lib.scimath, which replaced NumPy's own
# (scipy.sqrt(-1) was 1j), and numpy.random's rand and randn and numpy.fft's ifft.
SCIMATH_NAMES = ("sqrt", "log", "log2", "logn", "log10", "power", "arccos", "arcsin", "arctanh")
OTHER_NAMES = {"rand": "numpy.random", "randn": "numpy.random", "ifft": "numpy.fft"}
# Those of NUMPY_NAMES that NumPy 2 removed as well (2.4 and 2.5 lack them): no plain
# rename to numpy.<name> ports them; compatfix's numpy shims restore most of them ...
NUMPY2_REMOVED = frozenset("""
    ALLOW_THREADS AxisError BUFSIZE CLIP ComplexWarning DataSource ERR_CALL ERR_DEFAULT ERR_IGNORE ERR_LOG
    ERR_PRINT ERR_RAISE ERR_WARN FLOATING_POINT_SUPPORT FPE_DIVIDEBYZERO FPE_INVALID FPE_OVERFLOW FPE_UNDERFLOW
    Inf Infinity MAXDIMS MAY_SHARE_BOUNDS MAY_SHARE_EXACT ModuleDeprecationWarning NAN NINF NZERO NaN PINF PZERO
    RAISE RankWarning SHIFT_DIVIDEBYZERO SHIFT_INVALID SHIFT_OVERFLOW SHIFT_UNDERFLOW TooHardError
    UFUNC_BUFSIZE_DEFAULT UFUNC_PYVALS_NAME VisibleDeprecationWarning WRAP add_docstring add_newdoc
    add_newdoc_ufunc alltrue asfarray byte_bounds cast cfloat chararray clongfloat compare_chararrays complex_
    cumproduct deprecate deprecate_with_doc disp fastCopyAndTranspose find_common_type float_ format_parser
    get_array_wrap geterrobj in1d infty issctype issubclass_ issubsctype longcomplex longfloat lookfor mat
    maximum_sctype msort nbytes obj2sctype product recfromcsv recfromtxt round_ row_stack safe_eval sctype2char
    sctypes set_numeric_ops set_string_function seterrobj singlecomplex sometrue source string_ tracemalloc_domain
    trapz unicode_ who
""".split())
# ... but not these, which no NumPy 2 has under that name, nor compatfix: SciPy cannot get
# them back either (a use of one stays the AttributeError it is).
NO_NUMPY_HOME = frozenset("""
    ALLOW_THREADS AxisError BUFSIZE CLIP ComplexWarning ERR_CALL ERR_DEFAULT ERR_IGNORE ERR_LOG ERR_PRINT
    ERR_RAISE ERR_WARN FLOATING_POINT_SUPPORT FPE_DIVIDEBYZERO FPE_INVALID FPE_OVERFLOW FPE_UNDERFLOW MAXDIMS
    MAY_SHARE_BOUNDS MAY_SHARE_EXACT ModuleDeprecationWarning NAN RAISE RankWarning SHIFT_DIVIDEBYZERO
    SHIFT_INVALID SHIFT_OVERFLOW SHIFT_UNDERFLOW TooHardError UFUNC_BUFSIZE_DEFAULT UFUNC_PYVALS_NAME
    VisibleDeprecationWarning WRAP add_newdoc_ufunc chararray disp get_array_wrap geterrobj lookfor nbytes
    set_numeric_ops set_string_function seterrobj source tracemalloc_domain who
""".split())
RESTORED = tuple(name for name in NUMPY_NAMES if name not in NO_NUMPY_HOME)


def _numpy_object(home: str, name: str):
    import numpy

    # Attribute by attribute (numpy.emath is not importable as a module), and through
    # getattr: names NumPy 2 removed resolve where compatfix's numpy shims restore them.
    owner = numpy
    for part in home.split(".")[1:]:
        owner = getattr(owner, part)
    return getattr(owner, name)


def restore_numpy_names(scipy) -> None:
    homes = dict.fromkeys(RESTORED, "numpy")
    homes.update(dict.fromkeys(SCIMATH_NAMES, "numpy.emath"))  # numpy.lib.scimath, by its public name
    homes.update(OTHER_NAMES)
    # Lazy: each is looked up at its first use, so that `import scipy` pays for none of them.
    names = {name: Lazy(functools.partial(_numpy_object, home, name)) for name, home in homes.items()}
    restore_names(scipy, names, "scipy.numpy_names")


SHIMS = (
    Shim(
        "scipy.numpy_names",
        targets=["scipy"],
        kind=AFTER_IMPORT,
        requires={"scipy": ">=1.12"},
        apply=restore_numpy_names,
        restores=[*RESTORED, *SCIMATH_NAMES, *OTHER_NAMES],
        broke="SciPy 1.12 (2024-01) removed the NumPy names its top level re-exported (deprecated in 1.4): "
        "scipy.finfo, scipy.sum, scipy.array, scipy.sqrt, ... are AttributeErrors",
        summary="restore them as the NumPy objects themselves (numpy.emath's for sqrt, log, power and the "
        "others SciPy took from numpy.lib.scimath; numpy.random's rand and randn; numpy.fft's ifft)",
        replacement="numpy.<name> (numpy.lib.scimath.<name> for sqrt, log, log2, logn, log10, power, arccos, "
        "arcsin, arctanh)",
        renames={**{"scipy." + name: "numpy." + name for name in RESTORED
                    if name not in SCIMATH_NAMES and name not in NUMPY2_REMOVED},
                 **{"scipy." + name: "numpy.lib.scimath." + name for name in SCIMATH_NAMES},
                 **{"scipy." + name: home + "." + name for name, home in OTHER_NAMES.items()}},
        rewrites={"scipy." + name: "numpy.%s, which NumPy 2 removed too (see numpy's entry for what replaces it)" % name
                  for name in sorted(NUMPY2_REMOVED - NO_NUMPY_HOME)},
    ),
)
