/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A stand-in for the libraries a process may load before Tessera that take glibc's static TLS
 * surplus with initial-exec thread-locals (test_dlopen_tls.c): 1 KiB of them.
 */
static __thread char tsr_test_ie_block[1024] __attribute__((tls_model("initial-exec")));

__attribute__((visibility("default"))) char *tsr_test_ie_touch(void) {
  tsr_test_ie_block[0] = 1;
  return tsr_test_ie_block;
}
