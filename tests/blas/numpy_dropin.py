# SPDX-License-Identifier: BSD-3-Clause
"""NumPy under the BLAS drop-in (issue 31: "the BLAS drop-in under NumPy is where users meet it").

Run twice by tests/blas/run_numpy.sh with the same seed: once as is (mode "ref": NumPy's own BLAS
computes every product in complex128 from the f32/f64/c64/c128 inputs, and the results are
saved), once with libtessera_blas preloaded (mode "check": the same products in their own dtype,
through the drop-in's cblas_sgemm/cblas_dgemm/cblas_cgemm/cblas_zgemm, compared with the saved
references; complex operands have random real and imaginary parts). Shapes: the small
sizes of the tiny lane (1, 16, 32, 64 and ragged ones), matrix-vector-like ones, and a few past
the lane; operands as NumPy hands them to CBLAS: C- and Fortran-ordered, transposed views, and
strided row slices (which NumPy copies or passes with a leading dimension).
"""
import sys

import numpy as np

SHAPES = [(1, 1, 1), (16, 16, 16), (32, 32, 32), (64, 64, 64), (7, 13, 5), (3, 5, 300),
          (40, 33, 64), (1, 64, 64), (64, 1, 64), (20, 16, 12), (100, 90, 80), (130, 97, 60)]


def cplx(rng, shape):
    """Complex128 values, real and imaginary parts uniform in [-1, 1]."""
    return rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)


def operands(rng, m, n, k):
    """Yields (name, A, B) with A m x k and B k x n in several layouts (complex128 values: the
    real dtypes take their real parts, the complex ones all of them)."""
    a = cplx(rng, (m, k))
    b = cplx(rng, (k, n))
    yield "c-order", a, b
    yield "fortran", np.asfortranarray(a), np.asfortranarray(b)
    yield "transposed", cplx(rng, (k, m)).T, cplx(rng, (n, k)).T
    big = cplx(rng, (2 * m, k + 3))
    yield "row-slice", big[::2, 1:k + 1], b


DTYPES = (np.float32, np.float64, np.complex64, np.complex128)


def cast(v, dt):
    """v in dtype dt, keeping its layout (real dtypes: the real part)."""
    if not np.issubdtype(dt, np.complexfloating):
        v = v.real
    return np.asarray(v.astype(dt), order="K")


def main():
    mode, path = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(31)
    cases = []
    for m, n, k in SHAPES:
        for name, a, b in operands(rng, m, n, k):
            cases.append((f"{m}x{n}x{k} {name}", a, b))
    if mode == "ref":
        refs = {}
        for i, (label, a, b) in enumerate(cases):
            for dt in DTYPES:
                # float64 (complex128) product of the values the checked run multiplies in dt
                x = cast(a, dt).astype(np.complex128)
                y = cast(b, dt).astype(np.complex128)
                refs[f"{i}_{np.dtype(dt).name}"] = x @ y
                refs[f"{i}_{np.dtype(dt).name}_abs"] = np.abs(x) @ np.abs(y)
        np.savez(path, **refs)
        print(f"references: {len(refs) // 2} products")
        return 0
    refs = np.load(path)
    bad = 0
    for i, (label, a, b) in enumerate(cases):
        for dt in DTYPES:
            x, y = cast(a, dt), cast(b, dt)
            got = (x @ y).astype(np.complex128)
            ref = refs[f"{i}_{np.dtype(dt).name}"]
            k = a.shape[1]
            eps = np.finfo(dt).eps
            # |error| <= c k eps (|A| |B|), elementwise (complex: twice the constant)
            c = 8.0 if np.issubdtype(dt, np.complexfloating) else 4.0
            bound = c * (k + 2) * eps * refs[f"{i}_{np.dtype(dt).name}_abs"]
            err = np.abs(got - ref)
            if not np.all(err <= bound + 1e-300) or not np.all(np.isfinite(got)):
                bad += 1
                print(f"FAIL {label} {np.dtype(dt).name}: max error {err.max():.3g}, "
                      f"bound {bound.max():.3g}")
    print(f"checked {len(DTYPES) * len(cases)} products, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
