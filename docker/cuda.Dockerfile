# Tessera, CUDA variant, from NVIDIA's CUDA devel image on Ubuntu.
#   docker build -f docker/cuda.Dockerfile -t tessera:cuda .
#   docker run --rm --gpus all tessera:cuda mpirun -np 2 tessera-gemm --device cuda -m 8192 -n 8192 -k 8192
# The tests run at build time without a GPU (GPU tests report skipped); run them on the GPU with
#   docker run --rm --gpus all tessera:cuda ctest --test-dir /home/tessera/tessera/build -L cuda
FROM nvidia/cuda:12.6.3-devel-ubuntu24.04
COPY scripts/ /opt/tessera-scripts/scripts/
RUN /opt/tessera-scripts/scripts/deps.sh cuda && rm -rf /var/lib/apt/lists/*
RUN useradd --create-home --shell /bin/bash tessera
USER tessera
WORKDIR /home/tessera/tessera
COPY --chown=tessera:tessera . .
RUN scripts/build.sh cuda build --no-deps --test --install /home/tessera/.local
ENV PATH=/home/tessera/.local/bin:$PATH \
    LD_LIBRARY_PATH=/home/tessera/.local/lib
CMD ["tessera-gemm", "--help"]
