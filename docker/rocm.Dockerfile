# syntax=docker/dockerfile:1
# Tessera, HIP variant, on ROCm (Ubuntu). hipBLAS is not in Debian or Ubuntu: both stages take
# the ROCm packages from AMD's repository (repo.radeon.com, the release ROCM_VERSION, signed
# with AMD's key). Two stages: "build" (ROCm's dev image: hipcc, hipify-perl, hipBLAS; builds,
# tests and installs into /opt/tessera) and the runtime stage (Ubuntu with the HIP runtime,
# hipBLAS, Open MPI and Tessera only).
#   docker build -f docker/rocm.Dockerfile -t tessera:rocm .
#   docker build -f docker/rocm.Dockerfile --build-arg ROCM_VERSION=6.4 \
#     --build-arg HIP_ARCHITECTURES="gfx942" -t tessera:rocm .
#   docker run --rm --device=/dev/kfd --device=/dev/dri --group-add video tessera:rocm \
#     mpirun -np 2 tessera-gemm --device hip -m 8192 -n 8192 -k 8192
# Open MPI here is Ubuntu's (not ROCm-aware): GPU panels are staged through pinned host memory.
# Linted in CI: scripts/test.d/docker.sh (hadolint).
ARG ROCM_VERSION=6.3
ARG UBUNTU_RELEASE=24.04

FROM rocm/dev-ubuntu-${UBUNTU_RELEASE}:${ROCM_VERSION} AS build
ARG ROCM_VERSION
# AMD GPU architectures (TESSERA_HIP_ARCHITECTURES: gfx<id>, e.g. "gfx90a;gfx942").
ARG HIP_ARCHITECTURES="gfx90a;gfx942"
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ENV PATH=/opt/rocm/bin:${PATH}
COPY scripts/ /opt/tessera-scripts/scripts/
# AMD's repository (replacing any radeon source the base image has, so that one key signs it),
# preferred over Ubuntu's packages of the same names; then the build and test packages and
# ROCm's hipcc, device libraries and hipBLAS, strict (a missing one stops the build).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl gnupg \
    && install -d -m 0755 /etc/apt/keyrings \
    && curl -fsSL https://repo.radeon.com/rocm/rocm.gpg.key | gpg --dearmor -o /etc/apt/keyrings/rocm.gpg \
    && { grep -rl repo.radeon.com /etc/apt/sources.list.d/ || true; } | xargs -r rm -f \
    && . /etc/os-release \
    && echo "deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/rocm/apt/${ROCM_VERSION} ${VERSION_CODENAME} main" \
      > /etc/apt/sources.list.d/rocm.list \
    && printf 'Package: *\nPin: origin repo.radeon.com\nPin-Priority: 600\n' > /etc/apt/preferences.d/rocm-pin-600 \
    && apt-get update \
    && /opt/tessera-scripts/scripts/deps.sh --strict cpu hipcc rocm-device-libs hipblas-dev \
    && rm -rf /var/lib/apt/lists/*
# uid 1001: Ubuntu 24.04's images have their "ubuntu" user at 1000.
RUN useradd --create-home --uid 1001 --shell /bin/bash tessera \
    && install -d -o tessera -g tessera /opt/tessera
USER 1001
WORKDIR /home/tessera/tessera
COPY --chown=1001:1001 . .
RUN scripts/build.sh hip build --no-deps --test --install /opt/tessera \
      -DCMAKE_PREFIX_PATH=/opt/rocm -DTESSERA_HIP_ARCHITECTURES="${HIP_ARCHITECTURES}"

FROM ubuntu:${UBUNTU_RELEASE} AS runtime
ARG ROCM_VERSION
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# The HIP runtime and hipBLAS from AMD's repository (as in the build stage); Open MPI, OpenMP
# and OpenBLAS (the CPU vendor path dlopen()s it) from Ubuntu. Versions are the releases'
# (ROCM_VERSION and the base image's tag fix them); pinning each package would break the build
# at every update.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl gnupg \
    && install -d -m 0755 /etc/apt/keyrings \
    && curl -fsSL https://repo.radeon.com/rocm/rocm.gpg.key | gpg --dearmor -o /etc/apt/keyrings/rocm.gpg \
    && . /etc/os-release \
    && echo "deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/rocm/apt/${ROCM_VERSION} ${VERSION_CODENAME} main" \
      > /etc/apt/sources.list.d/rocm.list \
    && printf 'Package: *\nPin: origin repo.radeon.com\nPin-Priority: 600\n' > /etc/apt/preferences.d/rocm-pin-600 \
    && apt-get update \
    && apt-get install -y --no-install-recommends hip-runtime-amd hipblas openmpi-bin libopenblas0 libgomp1 \
    && apt-get purge -y --auto-remove curl gnupg \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --force render \
    && useradd --create-home --uid 1001 --shell /bin/bash --groups video,render tessera
COPY --from=build /opt/tessera /opt/tessera
# The base image's values are kept: LD_LIBRARY_PATH gets ours appended (or alone when the base
# image has none), PATH ours in front.
ENV PATH=/opt/tessera/bin:/opt/rocm/bin:${PATH} \
    LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+${LD_LIBRARY_PATH}:}/opt/tessera/lib:/opt/rocm/lib
USER 1001
WORKDIR /home/tessera
CMD ["tessera-gemm", "--help"]
