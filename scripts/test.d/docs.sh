# SPDX-License-Identifier: BSD-3-Clause
# Sourced by scripts/test.sh: the API reference builds from the public headers without a
# single Doxygen warning (WARN_AS_ERROR in docs/Doxyfile).
if ! command -v doxygen >/dev/null 2>&1; then
  echo "docs: doxygen not found: skipped"
  return 0
fi
mkdir -p "$BUILD/docs"
log="$BUILD/docs/doxygen.log"
if (cd "$TSR_ROOT" && { cat docs/Doxyfile; echo "OUTPUT_DIRECTORY = $BUILD/docs"; } | doxygen - >"$log" 2>&1) \
   && [ -f "$BUILD/docs/html/index.html" ] && ! grep -qiE 'warning|error' "$log"; then
  echo "docs: API reference built without warnings ($BUILD/docs/html/index.html)"
else
  cat "$log"
  echo "docs: doxygen reported problems"
  return 1
fi
