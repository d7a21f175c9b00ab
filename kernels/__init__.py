"""Numba kernels of exactdp (installed as ``exactdp.kernels``).

Kernels take and return plain NumPy arrays and scalars; validation and wrapping in
result objects happens in the Python layer (``exactdp.*``).  Every kernel is compiled
through :func:`exactdp.kernels.jit.kernel`, the single JIT policy of the project.
"""
