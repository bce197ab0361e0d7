/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CPU GEMM, the configuration's room (src/omp/gemm/config/ and the kernel table's choice): the
 * rule for CPUs without a registry row on synthetic CPUs (tsr__gemm_choose), overridden
 * kernels and cache blocks for every kernel this CPU runs, and the kernel selection
 * (TSR_CPU_KERNEL, TSR_CPU_GEMM_BLOCKS), against a float64 reference on random inputs.
 *
 * Run once per kernel (TSR_CPU_KERNEL, as test_gemm_kernels); a kernel the CPU lacks makes the
 * program exit 77 (skipped). The shared helpers are gemm_test.h.
 */
#include "gemm_test.h"

/* ---------------------------------------------------------------- default rule -------- */

/* A CPU for tsr__gemm_choose: vendor, family, model, ISAs, L1/L2/L3 in KiB. */
static tsr__gemm_cpu fake_cpu(const char *vendor, int family, int model, bool avx2, bool avx512,
                              int64_t l1k, int64_t l2k, int64_t l3k) {
  tsr__gemm_cpu c;
  memset(&c, 0, sizeof c);
  snprintf(c.vendor, sizeof c.vendor, "%s", vendor);
  c.family = family;
  c.model = model;
  c.isas = tsr__gemm_isa_bit("portable") | (avx2 ? tsr__gemm_isa_bit("avx2") : 0) |
           (avx512 ? tsr__gemm_isa_bit("avx512") : 0);
  const int64_t kib[3] = {l1k, l2k, l3k};
  for (int i = 0; i < 3; ++i)
    c.cache[i] = (tsr__cpu_cache){kib[i] * 1024, i == 0 ? 8 : 16, 64};
  return c;
}

/* Every configuration of a rule choice: the kernel of `isa` for both dtypes and thread counts,
   and blocks that fit the caches the CPU reported (the B micro-panel, NR x KC, within the L1
   unless KC sits at its floor of 128; the A block, MC x KC, within half the L2; the B panel,
   KC x NC, within a quarter of the L3), multiples of the register block. */
static void assert_rule_fits(const tsr__gemm_cpu *cpu, const tsr__gemm_choice *ch,
                             const char *isa) {
  for (int d = 0; d < 2; ++d)
    for (int t = 0; t < 2; ++t) {
      const tsr__gemm_config *c = &ch->cfg[d][t];
      const int64_t s = tsr__dtype_size(tg_dtypes[d]);
      assert_string_equal(c->ker->isa, isa);
      assert_int_equal(c->ker->dtype, tg_dtypes[d]);
      assert_string_equal(c->source, "rule");
      assert_true(c->kc >= 128 && c->kc <= 512 && c->kc % 8 == 0);
      if (c->kc > 128) assert_true(c->kc * c->ker->nr * s <= cpu->cache[0].size);
      assert_true(c->mc % c->ker->mr == 0 && c->mc >= c->ker->mr);
      if (c->mc > c->ker->mr) assert_true(c->mc * c->kc * s <= cpu->cache[1].size / 2);
      assert_true(c->nc % c->ker->nr == 0 && c->nc >= c->ker->nr && c->nc <= 4096);
      if (c->nc > c->ker->nr) assert_true(c->kc * c->nc * s <= cpu->cache[2].size / 8);
      /* An eighth of the L3, not far below it (one more NR would not fit), up to 4096. */
      if (c->nc < 4096) assert_true(c->kc * (c->nc + c->ker->nr) * s > cpu->cache[2].size / 8);
      /* Not far below what fits either: one more KC step, MR rows or NR columns would not. */
      if (c->kc < 512 && c->kc > 128)
        assert_true((c->kc + 8) * c->ker->nr * s > cpu->cache[0].size);
      assert_true((c->mc + c->ker->mr) * c->kc * s > cpu->cache[1].size / 2);
      assert_memory_equal(&ch->cfg[d][0].kc, &ch->cfg[d][1].kc, 3 * sizeof(int64_t));
    }
}

/* The default for CPUs without a measured row (tsr__gemm_choose on CPUs described here, not
   this machine): the widest ISA for both dtypes, blocks from the reported caches; measured rows
   keep their figures; TSR_CPU_KERNEL-style requests. */
static void test_default_rule(void **state) {
  (void)state;
  tsr__gemm_choice ch;
  /* No vector ISA (or a non-x86 build): the portable kernels. */
  tsr__gemm_cpu plain = fake_cpu("unknown", 0, 0, false, false, 32, 512, 8192);
  assert_true(tsr__gemm_choose(&plain, NULL, &ch));
  assert_rule_fits(&plain, &ch, "portable");
#if defined(TSR__GEMM_X86)
  /* An unseen AVX-512 CPU (a Skylake-X CPUID, which has no row, and an invented AMD family):
     the AVX-512 kernels for f32 and f64. */
  tsr__gemm_cpu skx = fake_cpu("GenuineIntel", 6, 0x55, true, true, 32, 1024, 39424);
  assert_true(tsr__gemm_choose(&skx, "auto", &ch));
  assert_rule_fits(&skx, &ch, "avx512");
  assert_string_equal(ch.uarch, "unknown");
  assert_string_equal(ch.cfg[0][0].ker->name, "avx512-14x32");
  assert_int_equal(ch.cfg[1][0].kc, 256); /* 32 KiB / (16 * 8) */
  assert_int_equal(ch.cfg[1][0].mc, 252); /* 512 KiB / (256 * 8) = 256, rounded to 14 */
  tsr__gemm_cpu amd = fake_cpu("AuthenticAMD", 0x1B, 0x20, true, true, 48, 2048, 131072);
  assert_true(tsr__gemm_choose(&amd, "", &ch));
  assert_rule_fits(&amd, &ch, "avx512");
  assert_int_equal(ch.cfg[0][0].kc, 384); /* 48 KiB / (32 * 4) */
  /* The blocks follow the caches, not another CPU's row: a bigger L2 gives a bigger MC. */
  tsr__gemm_choice small;
  tsr__gemm_cpu amd_small = amd;
  amd_small.cache[1].size /= 4;
  assert_true(tsr__gemm_choose(&amd_small, NULL, &small));
  assert_rule_fits(&amd_small, &small, "avx512");
  assert_true(small.cfg[1][0].mc < ch.cfg[1][0].mc);
  /* The sup-path rule of a CPU with no row: its L2, per dtype and thread count. */
  for (int d = 0; d < 2; ++d)
    for (int t = 0; t < 2; ++t) {
      assert_int_equal(ch.cfg[d][t].sup_bytes, amd.cache[1].size);
      assert_int_equal(small.cfg[d][t].sup_bytes, amd_small.cache[1].size);
    }
  /* An unseen AVX2-only CPU (a Zen 3 CPUID: no measured row): the AVX2 kernels. */
  tsr__gemm_cpu zen3 = fake_cpu("AuthenticAMD", 0x19, 0x21, true, false, 32, 512, 32768);
  assert_true(tsr__gemm_choose(&zen3, NULL, &ch));
  assert_rule_fits(&zen3, &ch, "avx2");
  assert_string_equal(ch.uarch, "unknown");
  /* Asking for AVX-512 there: not met, the widest it runs. */
  assert_false(tsr__gemm_choose(&zen3, "avx512", &ch));
  assert_rule_fits(&zen3, &ch, "avx2");
  /* The measured Zen 4 row (issue 31): AVX-512 for f32 with KC 1024 / MC 56 on one thread and
     KC 512 on several; f64 KC 256 / MC 224 on both. */
  tsr__gemm_cpu zen4 = fake_cpu("AuthenticAMD", 0x19, 0x11, true, true, 32, 1024, 32768);
  assert_true(tsr__gemm_choose(&zen4, NULL, &ch));
  assert_string_equal(ch.uarch, "zen4");
  assert_string_equal(ch.cfg[0][0].ker->name, "avx512-14x32");
  assert_string_equal(ch.cfg[0][0].source, "registry");
  assert_int_equal(ch.cfg[0][0].kc, 1024);
  assert_int_equal(ch.cfg[0][0].mc, 56);
  assert_int_equal(ch.cfg[0][1].kc, 512);
  assert_int_equal(ch.cfg[0][1].mc, 56);
  assert_string_equal(ch.cfg[1][0].ker->name, "avx512-14x16");
  assert_int_equal(ch.cfg[1][0].kc, 256);
  assert_int_equal(ch.cfg[1][1].mc, 224);
  for (int d = 0; d < 2; ++d) /* NC 2048: half the B block of 4096 (issue 48) */
    for (int t = 0; t < 2; ++t)
      assert_int_equal(ch.cfg[d][t].nc, 2048);
  /* The measured Emerald Rapids row (issue 31): deep KC, NC within half the 2 MiB L2 for
     shallow slices, and its own sup-path rule (96 KiB, not the L2). */
  tsr__gemm_cpu emr = fake_cpu("GenuineIntel", 6, 0xCF, true, true, 48, 2048, 307200);
  assert_true(tsr__gemm_choose(&emr, NULL, &ch));
  assert_string_equal(ch.uarch, "spr");
  assert_string_equal(ch.cfg[0][0].ker->name, "avx512-14x32-pb");
  assert_string_equal(ch.cfg[1][1].ker->name, "avx512-14x16-pb");
  assert_int_equal(ch.cfg[0][0].kc, 1024);
  assert_int_equal(ch.cfg[0][0].nc, 1024);
  assert_int_equal(ch.cfg[1][0].kc, 512);
  assert_int_equal(ch.cfg[1][0].mc, 224);
  assert_int_equal(ch.cfg[1][1].nc, 512);
  for (int d = 0; d < 2; ++d)
    for (int t = 0; t < 2; ++t)
      assert_int_equal(ch.cfg[d][t].sup_bytes, 96 << 10);
  /* The same CPUID with AVX-512 hidden (a hypervisor): the row does not apply; the rule. */
  zen4.isas &= ~tsr__gemm_isa_bit("avx512");
  assert_true(tsr__gemm_choose(&zen4, NULL, &ch));
  assert_rule_fits(&zen4, &ch, "avx2");
  assert_string_equal(ch.uarch, "unknown");
  /* Another ISA asked for on a measured CPU: the rule's blocks for that ISA's kernel. */
  zen4.isas |= tsr__gemm_isa_bit("avx512");
  assert_true(tsr__gemm_choose(&zen4, "avx2", &ch));
  assert_rule_fits(&zen4, &ch, "avx2");
#endif
}

/* The shallow products' kernel (tsr__gemm_choice.shallow, on CPUs described here): where the
   chosen kernel has more rows than the L1 has ways, the widest ISA's kernel whose rows fit,
   with the rule's blocks; none where the rows fit already, where the L1's ways are unknown, or
   where an ISA was asked for. */
static void test_shallow_choice(void **state) {
  (void)state;
  tsr__gemm_choice ch;
  tsr__gemm_cpu plain = fake_cpu("unknown", 0, 0, false, false, 32, 512, 8192);
  assert_true(tsr__gemm_choose(&plain, NULL, &ch));
  for (int d = 0; d < 2; ++d)
    assert_null(ch.shallow[d].ker); /* the portable kernel's rows fit */
#if defined(TSR__GEMM_X86)
  /* Zen 4 (8-way L1), AVX-512's 14 rows: AVX2's 6. */
  tsr__gemm_cpu zen4 = fake_cpu("AuthenticAMD", 0x19, 0x11, true, true, 32, 1024, 32768);
  assert_true(tsr__gemm_choose(&zen4, NULL, &ch));
  for (int d = 0; d < 2; ++d) {
    const tsr__gemm_config *c = &ch.shallow[d];
    assert_non_null(c->ker);
    assert_string_equal(c->ker->isa, "avx2");
    assert_int_equal(c->ker->dtype, tg_dtypes[d]);
    assert_true(c->ker->mr <= 8);
    assert_string_equal(c->source, "shallow");
    int64_t rule[3];
    tsr__gemm_rule_blocks(c->ker, zen4.cache, rule);
    assert_int_equal(c->kc, rule[0]);
    assert_int_equal(c->mc, rule[1]);
    assert_int_equal(c->nc, rule[2]);
  }
  /* A 16-way L1: AVX-512's rows fit, nothing to change. */
  tsr__gemm_cpu wide = zen4;
  wide.cache[0].ways = 16;
  assert_true(tsr__gemm_choose(&wide, NULL, &ch));
  assert_null(ch.shallow[1].ker);
  /* Ways unknown, an AVX2-only CPU, an ISA asked for: none. */
  tsr__gemm_cpu unknown = zen4;
  unknown.cache[0].ways = 0;
  assert_true(tsr__gemm_choose(&unknown, NULL, &ch));
  assert_null(ch.shallow[1].ker);
  tsr__gemm_cpu zen3 = fake_cpu("AuthenticAMD", 0x19, 0x21, true, false, 32, 512, 32768);
  assert_true(tsr__gemm_choose(&zen3, NULL, &ch));
  assert_null(ch.shallow[0].ker);
  assert_true(tsr__gemm_choose(&zen4, "avx512", &ch));
  assert_null(ch.shallow[1].ker);
#endif
}

/* The switch on this machine (tsr__gemm_config_shallow): k up to 64 with C's rows a multiple
   of the L1's set period apart takes the shallow kernel where this CPU has one (and no ISA is
   forced), nothing else does; and those products are right against the float64 reference,
   with ragged edges and every C update, on the packed path forced and on the rule's path. */
static void test_shallow_switch(void **state) {
  (void)state;
  const tsr__cpu_cache *l1 = &tsr__cpu_facts_get()->cache[0];
  const int64_t period = l1->ways > 0 ? l1->size / l1->ways : 4096;
  for (int d = 0; d < 2; ++d) {
    const tsr_dtype dt = tg_dtypes[d];
    const int64_t es = tsr__dtype_size(dt), rows = period > 0 ? period / es : 512;
    tsr__gemm_config base;
    tsr__gemm_config_get(dt, 1, NULL, &base);
    const bool forced = getenv("TSR_CPU_KERNEL") && strcmp(getenv("TSR_CPU_KERNEL"), "auto") != 0;
    const bool expect =
        !forced && l1->ways > 0 && base.ker->mr > l1->ways && strcmp(base.source, "override") != 0;
    const struct {
      int64_t k, ldc;
      bool switched;
    } probes[] = {{16, rows, expect}, {1, 2 * rows, expect}, {64, 3 * rows, expect},
                  {65, rows, false},  {16, rows + 8, false}, {16, rows / 2 + 3, false}};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; ++i) {
      const tsr__gemm_args g = {
          .dtype = dt, .m = 300, .n = 200, .k = probes[i].k, .beta = 1.0, .ldc = probes[i].ldc};
      tsr__gemm_config c = base;
      tsr__gemm_config_shallow(&g, &c);
      if (probes[i].switched) {
        assert_true(c.ker->mr <= l1->ways);
        assert_string_equal(c.source, "shallow");
        assert_int_equal(c.grain, base.grain);
      } else {
        assert_ptr_equal(c.ker, base.ker);
        assert_string_equal(c.source, base.source);
      }
    }
    /* Products with C's rows one period apart, on the packed path (sup_mnk 0) and where the
       library's rule decides (C within the sup path's bound: the packed path when switched). */
    const int64_t ks[] = {1, 2, 7, 16, 64};
    const double betas[] = {0.0, 1.0, 0.5};
    for (int t = 1; t <= 2; ++t) {
      tg_tuning.sup_mnk = t == 1 ? 0 : -1;
      tg_set_threads(t);
      for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ++ki)
        for (int bi = 0; bi < 3; ++bi) {
          const int64_t n = rows - 5 - (int64_t)ki;
          gemm_case gc = {.dtype = dt,
                          .ta = ki & 1,
                          .tb = (ki >> 1) & 1,
                          .m = 41 + (int64_t)ki,
                          .n = n,
                          .k = ks[ki],
                          .alpha = -0.75,
                          .beta = betas[bi],
                          .pad_c = rows - n,
                          .path = TSR_GEMM_AUTO};
          tg_check(gc, 9100 + (uint64_t)(d * 100 + ki * 10 + (size_t)bi + (size_t)t * 1000));
        }
    }
    tg_tuning.sup_mnk = -1;
  }
}

/* Kernel selection: an unknown or unavailable request falls back to the best kernel. */
static void test_kernel_selection(void **state) {
  (void)state;
  const char *orig = getenv("TSR_CPU_KERNEL");
  char saved[32] = {0};
  if (orig) snprintf(saved, sizeof saved, "%s", orig);
  setenv("TSR_CPU_KERNEL", "no-such-isa", 1);
  assert_false(tsr__gemm_registry_reload());
  assert_non_null(tg_cfg_of(TSR_F32, 1).ker);
  assert_true(tsr__gemm_isa_available(tsr__omp_gemm_kernel_name(TSR_F64)));
  tg_check_all_trans(TSR_F64, 20, 21, 22, 6000);
  setenv("TSR_CPU_KERNEL", "portable", 1);
  assert_true(tsr__gemm_registry_reload());
  assert_string_equal(tsr__omp_gemm_kernel_name(TSR_F32), "portable");
  assert_string_equal(tg_cfg_of(TSR_F64, 2).ker->isa, "portable");
  if (orig)
    setenv("TSR_CPU_KERNEL", saved, 1);
  else
    unsetenv("TSR_CPU_KERNEL");
  tsr__gemm_registry_reload();
  assert_string_equal(tsr__omp_gemm_kernel_name(TSR_F64), tg_cfg_of(TSR_F32, 1).ker->isa);
  assert_string_equal(tsr__omp_gemm_kernel_name(TSR_I32), "none");
  /* TSR_CPU_GEMM_BLOCKS replaces the cache blocks (rounded to the register block). */
  setenv("TSR_CPU_GEMM_BLOCKS", "100,50,70", 1);
  tsr__gemm_registry_reload();
  const tsr__gemm_config c = tg_cfg_of(TSR_F64, 1);
  assert_int_equal(c.kc, 100);
  assert_int_equal(c.mc, 50 / c.ker->mr * c.ker->mr);
  assert_int_equal(c.nc, 70 / c.ker->nr * c.ker->nr);
  assert_string_equal(c.source, "TSR_CPU_GEMM_BLOCKS");
  tg_check_all_trans(TSR_F64, 61, 75, 230, 6100);
  unsetenv("TSR_CPU_GEMM_BLOCKS");
  tsr__gemm_registry_reload();
}

/* Every kernel this CPU runs, through overrides with small and odd cache blocks and every
   thread grain: ragged edges of every block, 1-3 threads, all transposes. */
static void test_kernel_overrides(void **state) {
  (void)state;
  tg_tuning.sup_mnk = 0; /* the packed path's blocks (test_sup_path: the other) */
  for (int d = 0; d < 2; ++d) {
    const tsr__gemm_kernel *ks[8];
    const int nk = tsr__gemm_kernel_list(tg_dtypes[d], ks, 8);
    for (int i = 0; i < nk; ++i) {
      if (!tg_isa_under_test(ks[i])) continue;
      const int mr = ks[i]->mr, nr = ks[i]->nr;
      const tsr__gemm_config cfgs[] = {{ks[i], 8, mr, nr, 1, "override"},
                                       {ks[i], 20, 2 * mr, 3 * nr, 2, "override"},
                                       {ks[i], 96, 5 * mr, 7 * nr, 8, "override"}};
      for (int c = 0; c < 3; ++c) {
        tg_tuning.config[tg_dtypes[d] == TSR_F32 ? 0 : 1] = &cfgs[c];
        const tsr__gemm_config got = tg_cfg_of(tg_dtypes[d], 2);
        assert_ptr_equal(got.ker, ks[i]);
        /* Per call: a call without this tuning keeps the library's configuration. */
        tsr__gemm_config lib;
        tsr__gemm_config_get(tg_dtypes[d], 2, NULL, &lib);
        assert_string_not_equal(lib.source, "override");
        assert_int_equal(got.kc, cfgs[c].kc);
        assert_int_equal(got.grain, cfgs[c].grain);
        for (int t = 1; t <= 3; ++t) {
          tg_set_threads(t);
          tg_check_all_trans(tg_dtypes[d], 3 * mr + 1, 4 * nr + 3, 2 * cfgs[c].kc + 5,
                             8000 + (uint64_t)(i * 100 + c * 10 + t));
          tg_check_all_trans(tg_dtypes[d], 1, nr + 1, 3, 8500 + (uint64_t)(i * 100 + c * 10 + t));
          tg_check_all_trans(tg_dtypes[d], 2 * mr - 1, 1, cfgs[c].kc, 8700 + (uint64_t)i);
        }
      }
    }
    tg_tuning.config[tg_dtypes[d] == TSR_F32 ? 0 : 1] = NULL;
  }
  tg_tuning.sup_mnk = -1;
}

int main(void) {
  const int rc = tg_setup();
  if (rc != 0) return rc;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kernel_overrides),
      cmocka_unit_test(test_default_rule),
      cmocka_unit_test(test_shallow_choice),
      cmocka_unit_test(test_shallow_switch),
      /* Last: it re-selects the kernel. */
      cmocka_unit_test(test_kernel_selection),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
