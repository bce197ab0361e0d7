# syntax=docker/dockerfile:1
# Tessera, CPU variant (OpenMP + Open MPI + OpenBLAS vendor path) on Debian, in two stages:
# "build" (compilers, CMake, test tools: builds, tests and installs into /opt/tessera) and the
# slim runtime stage (only what the installed programs and libraries load).
#   docker build -f docker/cpu.Dockerfile -t tessera:cpu .
#   docker build -f docker/cpu.Dockerfile --target build -t tessera:cpu-dev .  # with the tools
#   docker run --rm tessera:cpu mpirun -np 2 tessera-gemm -m 1024 -n 1024 -k 1024
# Linted in CI: scripts/test.d/docker.sh (hadolint).
ARG DEBIAN_RELEASE=bookworm

FROM debian:${DEBIAN_RELEASE} AS build
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# Packages come from the script CI runs (scripts/deps.sh -> scripts/common.sh); --strict makes
# a package that cannot be installed stop the build instead of a warning.
COPY scripts/ /opt/tessera-scripts/scripts/
RUN /opt/tessera-scripts/scripts/deps.sh --strict cpu && rm -rf /var/lib/apt/lists/*
RUN useradd --create-home --uid 1000 --shell /bin/bash tessera \
    && install -d -o tessera -g tessera /opt/tessera
USER 1000
WORKDIR /home/tessera/tessera
COPY --chown=1000:1000 . .
# Build, test and install with the scripts CI runs (the prefix is the runtime stage's).
RUN scripts/build.sh cpu build --no-deps --test --install /opt/tessera

FROM debian:${DEBIAN_RELEASE} AS runtime
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# Open MPI (mpirun and libmpi), OpenMP, and OpenBLAS (which the vendor path dlopen()s).
# Versions are the release's (the base image's tag fixes them); pinning each package would
# break the build at every Debian point release.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends openmpi-bin libopenblas0 libgomp1 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 1000 --shell /bin/bash tessera
COPY --from=build /opt/tessera /opt/tessera
# The base image's values are kept: LD_LIBRARY_PATH gets ours appended (or alone when the base
# image has none), PATH ours in front.
ENV PATH=/opt/tessera/bin:${PATH} \
    LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+${LD_LIBRARY_PATH}:}/opt/tessera/lib
USER 1000
WORKDIR /home/tessera
CMD ["tessera-gemm", "--help"]
