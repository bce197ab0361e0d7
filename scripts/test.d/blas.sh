# SPDX-License-Identifier: BSD-3-Clause
# Hook of scripts/test.sh (sourced in a subshell): the reference BLAS testers must really have
# run. Without libblas-test the blas_tester_* tests report "skipped", which CTest does not
# count as a failure; here it is one.
tester=$(dpkg -L libblas-test 2>/dev/null | grep '/xblat3d$' || true)
if [ -z "$tester" ]; then
  echo "libblas-test is not installed: the reference BLAS testers of the drop-in did not run" >&2
  exit 1
fi
for t in xblat3s xblat3d xblat3c xblat3z xscblat3 xdcblat3 xccblat3 xzcblat3; do
  if [ ! -x "$(dirname "$tester")/$t" ]; then
    echo "$(dirname "$tester")/$t is missing (libblas-test)" >&2
    exit 1
  fi
done
echo "reference BLAS testers present in $(dirname "$tester")"
