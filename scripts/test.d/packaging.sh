# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Sourced by scripts/test.sh: packaging and release (issue 51). Reuses the cpu variant's build
# ($BUILD/cpu, where ctest already ran install_consumer: C, C++, pkg-config, cc -ltessera);
# installs python3-venv and lmod (tsr_install_packages), then:
#  - module: install_module (the Lmod module file) again, now that Lmod is there;
#  - option_checks: contradictory or malformed options fail the configure with Tessera's message;
#  - spack_variants: the Spack package's variants against the CMake options, one to one;
#  - release: scripts/release.sh on temporary tags in a temporary clone (its tarball is the
#    EasyBuild test's source);
#  - style: flake8 and black with Spack's settings on packaging/spack (from PyPI);
#  - easybuild: eb --check-contrib, then a real install of the easyconfig (toolchain SYSTEM),
#    module load Tessera, and a C program built with pkg-config and find_package runs
#    (EasyBuild from PyPI, Lmod from Debian).
# What cannot be installed is skipped with one line saying so. About 3 minutes on 2 cores,
# most of it EasyBuild compiling the library once.
pkg_dir=$BUILD/packaging
mkdir -p "$pkg_dir"
pkg_failed=()
pkg_tests=$TSR_ROOT/packaging/tests

"$pkg_tests/option_checks.sh" "$TSR_ROOT" "$pkg_dir/options" || pkg_failed+=(option_checks)
python3 "$pkg_tests/spack_variants.py" "$TSR_ROOT" || pkg_failed+=(spack_variants)
"$pkg_tests/release_test.sh" "$TSR_ROOT" "$pkg_dir/release" || pkg_failed+=(release)

# Python tools from PyPI in a virtual environment kept between runs (python3-venv, Debian).
tsr_install_packages python3-venv lmod || true
venv=$pkg_dir/venv
if [ ! -x "$venv/bin/eb" ] || [ ! -x "$venv/bin/black" ] || [ ! -x "$venv/bin/flake8" ]; then
  rm -rf "$venv"
  if ! { python3 -m venv "$venv" && "$venv/bin/pip" install -q easybuild flake8 black; } \
       >"$pkg_dir/pip.log" 2>&1; then
    echo "packaging: pip install easybuild flake8 black failed (no PyPI?): style and EasyBuild tests skipped"
    tail -n 3 "$pkg_dir/pip.log"
    rm -rf "$venv"
  fi
fi

# The module file with Lmod, on the cpu variant's build (its ctest skipped install_module when
# Lmod was not installed yet).
if [ -f /usr/share/lmod/lmod/init/bash ] && [ -f "$BUILD/cpu/CTestTestfile.cmake" ]; then
  if (cd "$BUILD/cpu" && ctest -R '^install_module$' --output-on-failure) >"$pkg_dir/module.log" 2>&1; then
    echo "packaging: module file (install_module, Lmod): passed"
  else
    cat "$pkg_dir/module.log"
    pkg_failed+=(module)
  fi
else
  echo "packaging: module file test skipped: Lmod not installed (Debian package lmod) or no $BUILD/cpu"
fi

if [ -x "$venv/bin/black" ]; then
  if (cd "$TSR_ROOT/packaging/spack" && "$venv/bin/flake8" tessera/package.py &&
      "$venv/bin/black" --check --quiet .); then
    echo "packaging: Spack package style (flake8, black; Spack's settings): passed"
  else
    pkg_failed+=(spack_style)
  fi
fi

if [ ! -x "$venv/bin/eb" ]; then
  : # said above
elif [ ! -f /usr/share/lmod/lmod/init/bash ]; then
  echo "packaging: EasyBuild test skipped: Lmod not installed (Debian package lmod)"
elif ! command -v mpicc >/dev/null 2>&1; then
  echo "packaging: EasyBuild test skipped: no mpicc (Debian package libopenmpi-dev)"
else
  tarball=""
  for f in "$pkg_dir"/release/out/tessera-*.tar.gz; do
    [ -f "$f" ] && tarball=$f
  done
  if [ -z "$tarball" ]; then
    echo "packaging: EasyBuild test skipped: no release tarball (the release test failed)"
  elif ! PATH=$venv/bin:$PATH "$pkg_tests/easybuild_install.sh" "$TSR_ROOT" "$pkg_dir/easybuild" \
         "$tarball"; then
    pkg_failed+=(easybuild)
  fi
fi

if [ ${#pkg_failed[@]} -gt 0 ]; then
  echo "packaging: FAILED: ${pkg_failed[*]}"
  return 1
fi
echo "packaging: passed"
