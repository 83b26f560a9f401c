/* SPDX-License-Identifier: MIT */
/* Lloyd 2005, sections V-VI: Lemke's method on the frictional contact LCP of eq. (6) without
 * forming its matrix. Each basis is solved through a small kernel (eq. 21, bordered for the
 * covering variable) of size <= 6 m + 2 built from the contact Jacobian rows, so a pivot costs
 * O(r^3 + n d) instead of O((n (2 + d))^2).
 *
 * Two variants share the code: "structural" carries every contact's friction block from the
 * start; "reduced" starts from the frictionless LCP and appends a contact's friction block when
 * the contact becomes active (its normal velocity leaves the basis). */
#ifndef CONTACTD_SOLVER_LEMKE_STRUCTURAL_H
#define CONTACTD_SOLVER_LEMKE_STRUCTURAL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "solver/certify.h"
#include "solver/model.h"
#include "solver/solvers.h"

/* A contact's part of a Lemke basis, kept across ticks by contact id for warm starts: which of
 * theta, lambda and phi_j are basic, and whether the friction block exists. */
#define CS_BASIS_THETA 0x1u
#define CS_BASIS_BLOCK 0x2u
#define CS_BASIS_LAMBDA 0x4u
#define CS_BASIS_PHI(j) (0x100u << (j)) /* j < 16 */

/* Scratch bytes of cs_lemke_structural_solve() for any problem within lim. */
size_t cs_lemke_structural_size(const cs_limits *lim);
/* Scratch bytes of the table's runs below: with joints allowed (lim->max_joints > 0) the larger
 * of that and cs_lemke_standard_size(lim), which the runs use for a scene with joints. */
size_t cs__lemke_structural_run_size(const cs_limits *lim);

/* Solves eq. (6) of m on the d-sided pyramid. reduced: Lloyd's section VI variant. warm: [nc]
 * basis words of a previous answer in m's contact order (0 for unknown contacts), or NULL for a
 * cold start; a warm basis that is infeasible is repaired by Lemke from it, and when that fails
 * the solve restarts cold (pivots of all runs count). The reduced variant's cold start is a
 * crash basis from the frictionless LCP's answer (lemke_structural.c), then cold runs. Every
 * answer must pass the certificate (certify.h, pyramid, opt->cert_tol); a cycle, a ray or a failed
 * check is retried cold with another covering vector, up to 3 cold runs. lambda: [3 nc] out,
 * contact-frame impulses. basis: [nc] out, the final basis words (for the next tick's warm start).
 * v [6 nb], cert, state [nc]: out on CS_CONVERGED, the post-step velocity and the certificate and
 * contact states of the answer's check (the caller need not certify again). st: pivots.
 * Returns CS_CONVERGED, CS_RAY, CS_MAXITER (pivot cap from the LCP size, or cycling),
 * CS_SINGULAR (a kernel lost rank, or the last answer failed its check), CS_DEADLINE,
 * CS_ENOSPACE, or CS_EINPUT for a model with joints (its kernel would use the bodies' own mass
 * matrix, not the joints' Mhat); lambda is only meaningful on CS_CONVERGED.
 * thread: any, one caller per workspace. rt-safe: yes. */
cs_status cs_lemke_structural_solve(cs_workspace *ws, const cs_model *m, const cs_options *opt,
                                    bool reduced, const uint32_t *warm, double *lambda,
                                    uint32_t *basis, double *v, cs_certificate *cert,
                                    uint8_t *state, cs_stats *st);

/* cs_lemke_structural_solve() behind the solver table's signature (solvers.h): the structural
 * variant, and the reduced one ("lemke"). Warm from in->basis; out->certified on CS_CONVERGED.
 * A scene with joints has no block-diagonal mass matrix for the kernel (model.h): both run
 * Lemke on the same pyramid LCP formed from the reduced Delassus matrix (lemke-standard,
 * lemke_contact.h; lemke with its rows scaled, cs__lemke_standard_run_scaled), cold, and leave
 * out->basis zero. */
cs_status cs__lemke_structural_run(cs_workspace *ws, const cs__solve_in *in, cs__solve_out *out);
cs_status cs__lemke_structural_run_reduced(cs_workspace *ws, const cs__solve_in *in,
                                           cs__solve_out *out);

/* The kernel solve alone, for tests that check it against an explicit tableau: for the basis zb
 * (per pair, 1 when its z member is basic; pairs in the structural order: nu_i for every contact,
 * then sigma_i0 .. sigma_i,d-1, gamma_i for every contact with mu > 0) with z0 basic in pair open
 * (-1: none) and covering vector 1, writes the basic values q [pairs] and, when open >= 0, the
 * column mcol [pairs] of the open pair's z member (drive_z) or w member. Returns CS_CONVERGED,
 * CS_SINGULAR or CS_ENOSPACE. thread: any, one caller per workspace. */
cs_status cs__lemke_structural_basis(cs_workspace *ws, const cs_model *m, const uint8_t *zb,
                                     int open, bool drive_z, double *q, double *mcol);

#endif /* CONTACTD_SOLVER_LEMKE_STRUCTURAL_H */
