/* SPDX-License-Identifier: MIT */
/* Internal: the stages of a structural Lemke solve (lemke_structural.c) before its first pivot and
 * after its last, as entry points of their own, so that tests can count the clock reads of each
 * (deadline.h) without reaching into the solver's static functions. */
#ifndef CONTACTD_SOLVER_LEMKE_STRUCTURAL_STAGES_H
#define CONTACTD_SOLVER_LEMKE_STRUCTURAL_STAGES_H
#include <stdbool.h>
#include <stdint.h>
#include "solver/certify.h"
#include "solver/model.h"

/* The set-up before a cold run's first pivot, with opt's deadline: the Jacobian table, the rows'
 * scaling and the cold basis (every friction block unless reduced). Its scratch is taken from ws
 * and given back. Returns CS_CONVERGED, CS_DEADLINE (the deadline passed on the way) or
 * CS_ENOSPACE. thread: any, one caller per workspace. rt-safe: yes. */
cs_status cs__lemke_structural_set_up(cs_workspace *ws, const cs_model *m, const cs_options *opt,
                                      bool reduced);

/* The check of a converged run's answer, which reads M and J, not the kernel: v [6 nb] out, the
 * post-step velocity of the contact-frame impulses lambda [3 nc], and cert and state [nc] out, its
 * certificate on m's pyramid (certify.h), judged at the meter's opt->cert_tol. meter: the solve's
 * deadline (deadline.h), read as the check works. Returns CS_CONVERGED when the answer passes,
 * CS_DEADLINE when the deadline passed during the check (the answer is then not judged), else
 * CS_SINGULAR (also when ws is short of the check's scratch). thread: any, one caller per
 * workspace. rt-safe: yes. */
cs_status cs__lemke_structural_check(cs_workspace *ws, const cs_model *m, const double *lambda,
                                     double *v, cs_certificate *cert, uint8_t *state,
                                     cs__meter *meter);

#endif /* CONTACTD_SOLVER_LEMKE_STRUCTURAL_STAGES_H */
