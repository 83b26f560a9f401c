/* SPDX-License-Identifier: MIT */
/* Internal view of the warm start: the previous certified answer of a session, its contact
 * impulses keyed by contact id. It seeds the fallback answer today and the warm-started
 * solvers of later issues. */
#ifndef CONTACTD_SOLVER_WARMSTART_H
#define CONTACTD_SOLVER_WARMSTART_H
#include <stdbool.h>
#include "solver/contact.h"

/* Remembers r's impulses by contact id (r within the limits w was made for). */
void cs__warm_store(cs_warmstart *w, const cs_result *r);
/* Previous impulse of contact id (contact frame) into out[3]; false (and zeros) when unknown. */
bool cs__warm_impulse(const cs_warmstart *w, uint64_t id, double out[3]);

#endif /* CONTACTD_SOLVER_WARMSTART_H */
