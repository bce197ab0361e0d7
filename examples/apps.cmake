# SPDX-License-Identifier: BSD-3-Clause
# Examples of issue "install, package and ship": devices, transfers, a logistic regression.
tsr_add_example(NAME devices SOURCES devices.c)
tsr_add_example(NAME transfer SOURCES transfer.c LABELS "cpu;cuda;hip")
tsr_add_example(NAME logreg SOURCES logreg.c
  ARGS ${PROJECT_SOURCE_DIR}/data/wine.npy ${PROJECT_SOURCE_DIR}/data/wine_labels.npy cpu)
