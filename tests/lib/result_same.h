/* SPDX-License-Identifier: MIT */
/* Whether two cdc_results are the same: the check that the client library's two ways of reading
 * a Result agree (test_result and the result fuzzer, which links no cmocka). thread: any. */
#ifndef CONTACTD_TESTS_RESULT_SAME_H
#define CONTACTD_TESTS_RESULT_SAME_H
#include <stdbool.h>
#include "contactd/types.h"

/* True when a and b have the same header, timing, residuals, solver statistics and strings, and
 * the same nc contacts, nb bodies and nj joints; doubles compared by their bytes. */
bool t_result_same(const cdc_result *a, const cdc_result *b);

#endif /* CONTACTD_TESTS_RESULT_SAME_H */
