# Copyright Spack Project Developers. See COPYRIGHT file for details.
#
# SPDX-License-Identifier: (Apache-2.0 OR MIT)

# Tessera's Spack recipe, kept in Tessera's repository (packaging/spack/tessera/package.py)
# until it is contributed to Spack's builtin repository: `spack repo add packaging/spack` needs
# a repo.yaml there (namespace: tessera), or copy this folder into a repository of your own.
# Every variant maps to one CMake option of CMakeLists.txt (packaging/tests/spack_variants.py
# checks the mapping both ways).

from spack.package import *


class Tessera(CMakePackage, CudaPackage, ROCmPackage):
    """Dense arrays and matrix multiplication on CPUs (OpenMP), NVIDIA and AMD GPUs, and over
    MPI (2-D block-cyclic SUMMA and 2.5D GEMM), with GEMM drop-ins for the BLAS (sgemm_,
    dgemm_, cblas_sgemm, cblas_dgemm) and ScaLAPACK (pdgemm_, psgemm_)."""

    homepage = "https://tessera.invalid"
    url = "https://tessera.invalid/releases/tessera-0.1.0.tar.gz"

    license("BSD-3-Clause", checked_by="tessera-developers")

    # The checksum is the one scripts/release.sh writes beside the tarball of the tag v0.1.0.
    version("0.1.0", sha256="0000000000000000000000000000000000000000000000000000000000000000")

    variant("mpi", default=True, description="Distributed GEMM over MPI, tessera-gemm")
    variant("openmp", default=True, description="CPU backend parallelized with OpenMP")
    variant(
        "blas",
        default=True,
        description="Drop-in libraries: libtessera_blas (GEMM) and, with +mpi, "
        "libtessera_scalapack (PDGEMM)",
    )
    variant(
        "vendor_blas",
        default=False,
        description="CPU vendor GEMM path: OpenBLAS's CBLAS, loaded at run time",
    )
    variant(
        "gpu_vendor_blas",
        default=True,
        description="GPU vendor GEMM path: cuBLAS with +cuda, hipBLAS with +rocm",
    )

    # The drop-ins export only the GEMM routines (sgemm_, dgemm_, cblas_sgemm, cblas_dgemm;
    # pdgemm_, psgemm_): they are placed in front of a complete BLAS or ScaLAPACK, never
    # instead of one. So this package provides neither "blas" nor "scalapack".

    conflicts("+cuda", when="+rocm", msg="one GPU backend per build: build two variants")

    # Version bounds as in the CMake files: cmake_minimum_required(VERSION 3.25), MPI's C
    # interface (any version), the CUDA toolkit through FindCUDAToolkit and C++17 device code.
    depends_on("c", type="build")
    depends_on("cmake@3.25:", type="build")
    depends_on("mpi", when="+mpi")
    # Found at configure time, loaded with dlopen() at run time (not linked).
    depends_on("openblas", when="+vendor_blas", type=("build", "run"))
    depends_on("hip", when="+rocm")
    depends_on("hipblas", when="+rocm+gpu_vendor_blas")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define_from_variant("TESSERA_ENABLE_MPI", "mpi"),
            self.define_from_variant("TESSERA_ENABLE_OPENMP", "openmp"),
            self.define_from_variant("TESSERA_BUILD_DROPINS", "blas"),
            self.define_from_variant("TESSERA_WITH_VENDOR_BLAS", "vendor_blas"),
            self.define_from_variant("TESSERA_GPU_VENDOR_BLAS", "gpu_vendor_blas"),
            self.define_from_variant("TESSERA_ENABLE_CUDA", "cuda"),
            self.define_from_variant("TESSERA_ENABLE_HIP", "rocm"),
            self.define("TESSERA_BUILD_TESTS", self.run_tests),
            self.define("TESSERA_BUILD_EXAMPLES", False),
            self.define("TESSERA_BUILD_BENCH", False),
        ]
        if spec.satisfies("+cuda"):
            args.append(self.define_from_variant("CMAKE_CUDA_ARCHITECTURES", "cuda_arch"))
        if spec.satisfies("+rocm"):
            args.append(self.define_from_variant("TESSERA_HIP_ARCHITECTURES", "amdgpu_target"))
            args.append(self.define("ROCM_PATH", spec["hip"].prefix))
        if spec.satisfies("+mpi"):
            args.append(self.define("MPI_C_COMPILER", spec["mpi"].mpicc))
        return args

    @run_after("install")
    def cache_test_sources(self):
        """Keep the examples for the stand-alone tests."""
        cache_extra_test_sources(self, ["examples/matmul.c", "data/wine.npy"])

    def test_version(self):
        """tessera-tune reports the package's version"""
        exe = which(self.prefix.bin.join("tessera-tune"))
        out = exe("--version", output=str.split, error=str.split)
        assert str(self.spec.version) in out

    def test_gemm(self):
        """tessera-gemm multiplies a small random problem and verifies it"""
        if not self.spec.satisfies("+mpi"):
            raise SkipTest("tessera-gemm is built with +mpi only")
        exe = which(self.prefix.bin.join("tessera-gemm"))
        exe("-m", "96", "-n", "80", "-k", "64", "--dtype", "f64", "--verify", "--device", "cpu")

    def test_example(self):
        """build examples/matmul.c against the installed library and run it"""
        src = join_path(self.test_suite.current_test_cache_dir, "examples", "matmul.c")
        data = join_path(self.test_suite.current_test_cache_dir, "data", "wine.npy")
        # Spack 1.x: the C compiler is the "c" dependency; older Spack: self.compiler.
        cc = which(self.spec["c"].package.cc if "c" in self.spec else self.compiler.cc)
        cc(
            "-o",
            "matmul",
            src,
            f"-I{self.prefix.include}",
            f"-L{self.prefix.lib}",
            f"-Wl,-rpath,{self.prefix.lib}",
            "-ltessera",
            "-lm",
        )
        matmul = which("./matmul")
        matmul(data, "wine_gram.npy", extra_env={"TSR_DEVICE": "cpu"})
