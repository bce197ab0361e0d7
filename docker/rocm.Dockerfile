# Tessera, HIP variant, from ROCm's dev image on Ubuntu (it has hipify-perl and hipBLAS, so the
# build hipifies with ROCm's own tool and the vendor GEMM path uses hipBLAS).
#   docker build -f docker/rocm.Dockerfile -t tessera:rocm .
#   docker run --rm --device=/dev/kfd --device=/dev/dri --group-add video tessera:rocm \
#     mpirun -np 2 tessera-gemm --device hip -m 8192 -n 8192 -k 8192
FROM rocm/dev-ubuntu-24.04:6.3
ENV PATH=/opt/rocm/bin:$PATH
COPY scripts/ /opt/tessera-scripts/scripts/
# hipcc is already in the image; deps.sh adds the rest (cmake, cmocka, Open MPI, OpenBLAS...).
RUN /opt/tessera-scripts/scripts/deps.sh cpu && apt-get install -y --no-install-recommends hipblas-dev \
    && rm -rf /var/lib/apt/lists/*
RUN useradd --create-home --shell /bin/bash tessera && usermod -aG video,render tessera || true
USER tessera
WORKDIR /home/tessera/tessera
COPY --chown=tessera:tessera . .
RUN scripts/build.sh hip build --no-deps --test --install /home/tessera/.local \
    -DCMAKE_PREFIX_PATH=/opt/rocm
ENV PATH=/home/tessera/.local/bin:$PATH \
    LD_LIBRARY_PATH=/home/tessera/.local/lib
CMD ["tessera-gemm", "--help"]
