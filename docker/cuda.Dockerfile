# syntax=docker/dockerfile:1
# Tessera, CUDA variant, on NVIDIA's CUDA images (Ubuntu), with a CUDA-aware Open MPI over UCX,
# so that SUMMA hands device panels to MPI directly instead of staging them through host
# memory. Two stages: "build" (CUDA devel image: UCX and Open MPI built with CUDA, then Tessera
# built, tested and installed into /opt/tessera) and the runtime stage (CUDA runtime image with
# cuBLAS, UCX, Open MPI and Tessera only).
#   docker build -f docker/cuda.Dockerfile -t tessera:cuda .
#   docker build -f docker/cuda.Dockerfile --build-arg CUDA_VERSION=12.8.1 \
#     --build-arg CUDA_ARCHITECTURES="90;100" -t tessera:cuda .
#   docker run --rm --gpus all tessera:cuda mpirun -np 2 tessera-gemm --device cuda -m 8192 -n 8192 -k 8192
# Is MPI CUDA-aware? (the line must end in "value:true"; `tessera-gemm --json` then reports
# "staging": false on GPUs)
#   docker run --rm tessera:cuda sh -c 'ompi_info --parsable --all | grep mpi_built_with_cuda_support:value'
# The tests run at build time without a GPU (GPU tests report skipped); run them on the GPU in
# the build stage: docker build --target build -t tessera:cuda-dev ... then
#   docker run --rm --gpus all tessera:cuda-dev ctest --test-dir /home/tessera/tessera/build -L cuda
# Linted in CI: scripts/test.d/docker.sh (hadolint).
ARG CUDA_VERSION=12.6.3
ARG UBUNTU_RELEASE=24.04

FROM nvidia/cuda:${CUDA_VERSION}-devel-ubuntu${UBUNTU_RELEASE} AS build
# GPU architectures (CMAKE_CUDA_ARCHITECTURES: compute capabilities, e.g. "80;90") and the
# versions of the MPI stack built here.
ARG CUDA_ARCHITECTURES="80;90"
ARG UCX_VERSION=1.17.0
ARG OPENMPI_VERSION=5.0.6
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
COPY scripts/ /opt/tessera-scripts/scripts/
# Build and test packages, strict (a missing one stops the build), without the distribution's
# Open MPI (built without CUDA support) and the ScaLAPACK linked against it; curl and bzip2
# fetch and unpack the MPI sources.
RUN /opt/tessera-scripts/scripts/deps.sh --strict --without-mpi cuda ca-certificates curl bzip2 \
    && rm -rf /var/lib/apt/lists/*
# UCX with its CUDA transports (cuda_copy, cuda_ipc, gdr_copy where present). libcuda.so is
# the driver's, mounted at run time: the build links the CUDA toolkit's stub.
WORKDIR /tmp/ucx-build
RUN curl -fsSL "https://github.com/openucx/ucx/releases/download/v${UCX_VERSION}/ucx-${UCX_VERSION}.tar.gz" \
      | tar -xz -C /tmp \
    && LIBRARY_PATH=/usr/local/cuda/lib64/stubs "/tmp/ucx-${UCX_VERSION}/contrib/configure-release" \
      --prefix=/opt/ucx --with-cuda=/usr/local/cuda --enable-mt --without-java --disable-doxygen-doc \
    && LIBRARY_PATH=/usr/local/cuda/lib64/stubs make -j"$(nproc)" \
    && make install \
    && rm -rf /tmp/ucx-build/* "/tmp/ucx-${UCX_VERSION}"
# Open MPI over UCX, CUDA-aware; its hwloc, libevent and PMIx built in, so the runtime stage
# needs no other package for it. The check fails the build when CUDA support is missing.
WORKDIR /tmp/ompi-build
RUN curl -fsSL "https://download.open-mpi.org/release/open-mpi/v${OPENMPI_VERSION%.*}/openmpi-${OPENMPI_VERSION}.tar.bz2" \
      | tar -xj -C /tmp \
    && "/tmp/openmpi-${OPENMPI_VERSION}/configure" --prefix=/opt/openmpi \
      --with-cuda=/usr/local/cuda --with-cuda-libdir=/usr/local/cuda/lib64/stubs \
      --with-ucx=/opt/ucx --disable-mpi-fortran \
      --with-hwloc=internal --with-libevent=internal --with-pmix=internal \
    && make -j"$(nproc)" \
    && make install \
    && rm -rf /tmp/ompi-build/* "/tmp/openmpi-${OPENMPI_VERSION}" \
    && /opt/openmpi/bin/ompi_info --parsable --all | grep -q 'mpi_built_with_cuda_support:value:true'
WORKDIR /
# The base image's values are kept: LD_LIBRARY_PATH gets ours appended (or alone when the base
# image has none), PATH ours in front (this MPI before any other).
ENV PATH=/opt/openmpi/bin:${PATH} \
    LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+${LD_LIBRARY_PATH}:}/opt/openmpi/lib:/opt/ucx/lib
# uid 1001: Ubuntu 24.04's images have their "ubuntu" user at 1000.
RUN useradd --create-home --uid 1001 --shell /bin/bash tessera \
    && install -d -o tessera -g tessera /opt/tessera
USER 1001
WORKDIR /home/tessera/tessera
COPY --chown=1001:1001 . .
RUN scripts/build.sh cuda build --no-deps --test --install /opt/tessera \
      -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHITECTURES}" -DMPI_C_COMPILER=/opt/openmpi/bin/mpicc

FROM nvidia/cuda:${CUDA_VERSION}-runtime-ubuntu${UBUNTU_RELEASE} AS runtime
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# OpenMP and OpenBLAS (the CPU vendor path dlopen()s it); cuBLAS is in the base image.
# Versions are the release's (the base image's tag fixes them); pinning each package would
# break the build at every Ubuntu update.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libgomp1 libopenblas0 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 1001 --shell /bin/bash tessera
COPY --from=build /opt/ucx /opt/ucx
COPY --from=build /opt/openmpi /opt/openmpi
COPY --from=build /opt/tessera /opt/tessera
ENV PATH=/opt/tessera/bin:/opt/openmpi/bin:${PATH} \
    LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+${LD_LIBRARY_PATH}:}/opt/tessera/lib:/opt/openmpi/lib:/opt/ucx/lib
USER 1001
WORKDIR /home/tessera
CMD ["tessera-gemm", "--help"]
