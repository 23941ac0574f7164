"""mmcv's bilinear sampling rules, shared by the kernels that scatter gradients to the four
corners of a fractional point (RoIAlign's backward, deformable RoI pooling)."""


def bilinear_corners(y, x, height, width):
    """mmcv's bilinear_interpolate(_gradient) at the points (y, x) of a ``height`` x
    ``width`` plane: which points count (those inside [-1, height] x [-1, width]), the
    corner rows and columns (clamped at the last row and column, as the kernel does), and
    the four corners' weights, in the order (low, low), (low, high), (high, low),
    (high, high)."""
    import torch

    valid = (y >= -1.0) & (y <= height) & (x >= -1.0) & (x <= width)
    yc, xc = y.clamp(min=0.0), x.clamp(min=0.0)
    y_low, x_low = yc.to(torch.int64), xc.to(torch.int64)
    y_edge, x_edge = y_low >= height - 1, x_low >= width - 1
    y_low = torch.where(y_edge, torch.full_like(y_low, height - 1), y_low)
    x_low = torch.where(x_edge, torch.full_like(x_low, width - 1), x_low)
    y_high = torch.where(y_edge, y_low, y_low + 1)
    x_high = torch.where(x_edge, x_low, x_low + 1)
    ly = torch.where(y_edge, torch.zeros_like(yc), yc - y_low.to(yc.dtype))
    lx = torch.where(x_edge, torch.zeros_like(xc), xc - x_low.to(xc.dtype))
    hy, hx = 1.0 - ly, 1.0 - lx
    return valid, (y_low, y_high, x_low, x_high), (hy * hx, hy * lx, ly * hx, ly * lx)
