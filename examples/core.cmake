# SPDX-License-Identifier: BSD-3-Clause
# Examples of the core library: a tour of the API, and the Gram matrix of a real data set.
tsr_add_example(NAME tutorial SOURCES tutorial.c)
tsr_add_example(NAME matmul SOURCES matmul.c
  ARGS ${PROJECT_SOURCE_DIR}/data/wine.npy wine_gram.npy)
# Run without arguments, the example still finds the project's copy of the data.
target_compile_definitions(matmul PRIVATE TSR_EXAMPLE_DATA="${PROJECT_SOURCE_DIR}/data/wine.npy")
