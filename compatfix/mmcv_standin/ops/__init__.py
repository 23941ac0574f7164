"""Op kernels of the ``mmcv._ext`` stand-in (``compatfix.mmcv_standin.ext``), one module per
op family. Each function has the name and arguments of mmcv's pybind function and writes
into the tensors it is given, as the C++ does. No module imports torch at import time:
``compatfix doctor`` reads the list of fallbacks without it."""
