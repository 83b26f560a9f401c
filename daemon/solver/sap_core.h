/* SPDX-License-Identifier: MIT */
/* Internal: the SAP core, shared by the scene and the FCLIB adapters (sap.c). A problem in
 * generalized velocities (sparse SPD A, sparse contact Jacobian J, free velocity v*, per-contact
 * law), split into islands (connected components of the graph of A + J^T J) and minimized island
 * by island with Newton's method and a line search. Memory comes in two caller-owned blocks, so
 * the scene path carves them from the workspace and the offline path from the heap. */
#ifndef CONTACTD_SOLVER_SAP_CORE_H
#define CONTACTD_SOLVER_SAP_CORE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "solver/sap.h"
#include "solver/sap_contact.h"

/* One SAP problem: minimize |v - v*|_A^2 / 2 + sum_i gamma_i^T R_i gamma_i / 2 over v, where
 * gamma_i = P_F(-R_i^-1 v_c,i) and v_c = J v + bias. Plain data owned by the adapter.
 * J is stored by contact, as a dense 3 x k_i block over the k_i dofs the contact touches (its
 * three rows share them): the shape every product with J and the Newton matrix's J^T G J use. */
typedef struct cs__sap_problem {
    int nv, nc;
    const int *a_colptr;            /* A: [nv x nv] symmetric positive definite, CSC, */
    const int *a_rowind;            /*    both triangles stored */
    const double *a_val;
    const int *j_ptr;               /* J: [3 nc x nv]; contact i touches the k_i dofs */
    const int *j_col;               /*    j_col[j_ptr[i] .. j_ptr[i + 1]), strictly ascending; */
    const double *j_val;            /*    its rows (n, t1, t2) over them: [3 x k_i] row-major at
                                     *    3 j_ptr[i] */
    const double *vstar;            /* [nv] free velocity */
    const double *bias;             /* [3 nc] contact velocity at v = 0 (minus SAP's vhat) */
    const cs__sap_contact *contact; /* [nc] */
} cs__sap_problem;

/* The island partition. Components of the dof graph, those with contacts first. */
typedef struct cs__sap_islands {
    int n;         /* components */
    int ncontact;  /* components with contacts: 0 .. ncontact-1 */
    int nmax;      /* dofs of the largest component with contacts */
    int nmax_all;  /* dofs of the largest component */
    int *dof;      /* [nv] dofs, grouped by component */
    int *dof_ptr;  /* [nv + 1] component k: dof[dof_ptr[k] .. dof_ptr[k + 1]) */
    int *con;      /* [nc] contacts grouped by component; those touching no dof after
                    * con_ptr[ncontact] */
    int *con_ptr;  /* [nv + 1] */
    int *local;    /* [nv] index of a dof within its component */
    int *comp;     /* [nv] component of each dof (first the union-find forest) */
    int *scratch;  /* [nv + 1] */
} cs__sap_islands;

/* Bytes of the partition's block for nv dofs and nc contacts. */
size_t cs__sap_islands_size(int nv, int nc);
/* Points is's arrays into mem (cs__sap_islands_size() bytes, 64-byte aligned). */
void cs__sap_islands_init(cs__sap_islands *is, void *mem, int nv, int nc);
typedef struct cs__meter cs__meter;
/* Partitions p's dofs (indices assumed in range). O(nnz) almost linear. meter: the solve's
 * deadline, read as the contacts are passed over (NULL: none). Returns false when it passed
 * (the partition is then unfinished). rt-safe: yes. */
bool cs__sap_partition(const cs__sap_problem *p, cs__sap_islands *is, cs__meter *meter);

/* Newton scratch. */
typedef struct cs__sap_work {
    double *dinv;  /* [nv] diag(A)^-1/2: the stopping test's scaling, 1/sqrt(kg) */
    double *avs;   /* [nv] A v* */
    double *r;     /* [nv] A (v - v*) */
    double *jtg;   /* [nv] J^T gamma */
    double *grad;  /* [nv] gradient of the cost = momentum residual, N s */
    double *dv;    /* [nv] Newton direction */
    double *dp;    /* [nv] A dv */
    double *vc;    /* [3 nc] J v + bias */
    double *dvc;   /* [3 nc] J dv */
    double *G;     /* [9 nc] Hessian blocks of the contacts */
    double *H;     /* [nmax^2] island Newton matrix, then its Cholesky factor */
    int *hend;     /* [nmax] the factor's column ends (cs__sap_chol) */
    double *b;     /* [nmax] island right-hand side */
    double *gjc;   /* [3 x nmax] G times one contact's J block */
    int *lcol;     /* [nmax] island-local indices of that contact's dofs */
} cs__sap_work;

/* Bytes of the Newton block for nv dofs, nc contacts, islands of at most nmax dofs. */
size_t cs__sap_work_size(int nv, int nc, int nmax);
void cs__sap_work_init(cs__sap_work *w, void *mem, int nv, int nc, int nmax);

/* prm with its zero fields replaced by the defaults (prm may be NULL). */
cs_sap_params cs__sap_params_resolve(const cs_sap_params *prm);

/* Minimizes p from v (in: initial guess for dofs in contact islands; out: the answer; dofs in
 * islands without contacts get v*). gamma [3 nc], region [nc] out: the impulses and projection
 * regions at the returned v (contacts touching no dof: zero, separate). prm resolved. opt: the
 * deadline, may be NULL. ret_iterations: Newton iterations summed over islands.
 * Returns CS_CONVERGED, CS_DEADLINE (an island hit the deadline; later islands are evaluated at
 * their initial guess), CS_MAXITER, CS_SINGULAR (H not positive definite, no descent or no line
 * search step), CS_EINPUT (A has a non-positive diagonal or the cost is not finite); v, gamma and
 * region are consistent for every status >= 0. thread: any. rt-safe: yes. */
cs_status cs__sap_newton(const cs__sap_problem *p, const cs__sap_islands *is,
                         const cs_sap_params *prm, const cs_options *opt, cs__sap_work *w,
                         double *v, double *gamma, uint8_t *region, int *ret_iterations);

/* Dense A of component k into H ([n x n] column-major, n its dofs, full). */
void cs__sap_dense_a(const cs__sap_problem *p, const cs__sap_islands *is, int k, double *H);
/* Cholesky H = L L^T in place ([n x n] column-major, lower triangle read and written; blocked
 * over BLAS for large n without a deadline, a plain column Cholesky over each column's envelope
 * otherwise, see sap_core.c). end [n]: out, one past the last non-zero of each column of L (n
 * on the blocked path), for the solve. meter: the deadline, read per column (NULL: none).
 * Returns 0; -1 when H is not positive definite; 1 when meter's deadline passed (H partly
 * factored). rt-safe: yes. */
int cs__sap_chol(int n, double *H, int *end, cs__meter *meter);
/* Solves L L^T X = B in place with L and end from cs__sap_chol(), B [n x nrhs] column-major;
 * stops (B unusable) when meter's deadline passes (NULL: never). */
void cs__sap_chol_solve(int n, const double *L, const int *end, int nrhs, double *B,
                        cs__meter *meter);

#endif /* CONTACTD_SOLVER_SAP_CORE_H */
