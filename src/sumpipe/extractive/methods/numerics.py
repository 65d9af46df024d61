"""Float arithmetic whose bits do not depend on the CPU's SIMD kernels.

The extract, extractive-fit and extractive stages write the same bytes on every x86-64 machine
(docs/reproducibility.md). Three kinds of numpy/scipy operation break that, and are replaced here:

- BLAS products (`a @ b`, `np.dot`, `np.linalg.norm`) and `np.einsum`: OpenBLAS picks its kernel by
  CPU (Haswell, SkylakeX, ...), and the kernel fixes the order of the sums; einsum's loops accumulate
  in as many lanes as the vector width. `matmul` multiplies elementwise (IEEE, correctly rounded) and
  sums with numpy's reductions, whose order depends on the shapes only;
- SIMD logarithms (`np.log`, `np.log1p`: AVX-512 SVML kernels where the CPU has them): `exact_ln`
  (`sumpipe.vocab.exact`), correctly rounded once per distinct value;
- LAPACK (`scipy.linalg.eigh`, scikit-learn's SVD and NMF) calls BLAS inside: its results differ in the
  last bits between kernels. `settle` rounds them to `BITS` significant bits (about 9 decimal digits),
  which maps both kernels' results to the same number unless a value lies within a few ulps of a
  rounding boundary (about 1 value in 10^6), and `eigen` also fixes each eigenvector's sign.

Scores that rank sentences are settled too (`sumpipe.extractive.methods.base.order_by_scores`), so
sentences whose scores are equal in exact arithmetic tie, and the earlier sentence goes first.
"""

from __future__ import annotations

import numpy as np

BITS = 30  # significant bits kept by `settle`: 2^-30 ~ 9.3e-10 relative


def settle(values: np.ndarray | float, bits: int = BITS, scale: float | None = None) -> np.ndarray:
    """`values` rounded to `bits` significant bits (half to even), and those below `scale` x 2^-bits in
    magnitude set to 0: a quantity that is 0 in exact arithmetic comes out of a kernel as noise of the
    size of the rounding errors of the largest terms (1e-17 here, 1e-20 there), which relative rounding
    keeps apart. `scale`: the size of the computation (default: the largest magnitude in `values`).
    Exact operations only (frexp, scaling by powers of two, rint), so the same on every CPU."""
    array = np.asarray(values, dtype=np.float64)
    if scale is None:
        finite = np.abs(array[np.isfinite(array)])
        scale = float(finite.max()) if finite.size else 0.0
    mantissa, exponent = np.frexp(array)
    steps = float(2**bits)
    rounded = np.ldexp(np.rint(mantissa * steps) / steps, exponent)
    return np.where(np.abs(rounded) < scale / steps, 0.0, rounded)


def quantize(values: np.ndarray, step_bits: int) -> np.ndarray:
    """`values` rounded to the nearest multiple of 2^-step_bits (an absolute grid, exact). For stored
    arrays of many values whose kernel noise is absolute (1e-14 on the unit-norm SVD loadings): on a
    grid of 2^-20 about one value in 10^8 falls so close to a half-step that two CPUs round it apart."""
    step = 2.0**-step_bits
    return np.rint(np.asarray(values, dtype=np.float64) / step) * step


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b for a (M, K) and b (K, N) or (K,), each output a sum in a fixed order (module docstring).
    Costs M x K x N floats of memory: for the small per-document matrices of the extractive methods."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim == 1:
        return matmul(a[None, :], b)[0]
    if b.ndim == 1:
        return (a * b[None, :]).sum(axis=1)
    return (a[:, :, None] * b[None, :, :]).sum(axis=1)


def norm(vector: np.ndarray) -> float:
    """The L2 norm of a 1-d vector, summed in a fixed order."""
    vector = np.asarray(vector, dtype=np.float64)
    return float(np.sqrt((vector * vector).sum()))


def row_norms(matrix: np.ndarray) -> np.ndarray:
    """(R,) L2 norms of the rows of a (R, C) matrix, summed in a fixed order."""
    matrix = np.asarray(matrix, dtype=np.float64)
    return np.sqrt((matrix * matrix).sum(axis=1))


def eigen(symmetric: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(eigenvalues (n,) decreasing, eigenvectors (n, n) as columns) of a symmetric matrix, settled, each
    vector's sign chosen so that its largest-magnitude entry (the first of equal ones) is positive.

    LAPACK's eigenvectors are unique up to sign (and, for a repeated eigenvalue, a rotation, which
    no rounding fixes: the callers treat settled-equal eigenvalues as one concept where it matters)."""
    from scipy.linalg import eigh

    eigenvalues, vectors = eigh(symmetric, check_finite=False)
    eigenvalues = settle(eigenvalues)
    order = np.argsort(-eigenvalues, kind="stable")
    eigenvalues, vectors = eigenvalues[order], settle(vectors[:, order], scale=1.0)  # unit columns
    if vectors.size:
        lead = np.argmax(np.abs(vectors), axis=0)
        signs = np.where(vectors[lead, np.arange(vectors.shape[1])] < 0, -1.0, 1.0)
        vectors = vectors * signs[None, :]
    return eigenvalues, vectors
