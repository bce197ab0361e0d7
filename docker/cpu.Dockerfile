# Tessera, CPU variant (OpenMP + Open MPI + OpenBLAS vendor path) on Debian.
#   docker build -f docker/cpu.Dockerfile -t tessera:cpu .
#   docker run --rm tessera:cpu mpirun -np 2 tessera-gemm -m 1024 -n 1024 -k 1024
FROM debian:bookworm
# Packages are installed by the same script CI runs (scripts/deps.sh -> scripts/common.sh).
COPY scripts/ /opt/tessera-scripts/scripts/
RUN /opt/tessera-scripts/scripts/deps.sh cpu && rm -rf /var/lib/apt/lists/*
RUN useradd --create-home --shell /bin/bash tessera
USER tessera
WORKDIR /home/tessera/tessera
COPY --chown=tessera:tessera . .
# Build, test and install into ~/.local with the scripts CI runs.
RUN scripts/build.sh cpu build --no-deps --test --install /home/tessera/.local
ENV PATH=/home/tessera/.local/bin:$PATH \
    LD_LIBRARY_PATH=/home/tessera/.local/lib
CMD ["tessera-gemm", "--help"]
