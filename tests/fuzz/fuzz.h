/* SPDX-License-Identifier: MIT */
/* libFuzzer's entry point, which every target in this directory defines. Built with clang and
 * -Dfuzz=true it is driven by libFuzzer; otherwise corpus_main.c runs it over seed files as a
 * regression test. */
#ifndef CONTACTD_TESTS_FUZZ_H
#define CONTACTD_TESTS_FUZZ_H
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif /* CONTACTD_TESTS_FUZZ_H */
