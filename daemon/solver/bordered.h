/* SPDX-License-Identifier: MIT */
/* The inverse of a square system whose unknowns come and go one at a time, each with its own
 * equation: the clamped set of a pivoting method, which differs from one pivot to the next by a
 * single index (Baraff 1994, section 4.5: "for a serious implementation we highly recommend the use
 * of an incremental factorization"). Bordering adds an index and its inverse's block formula
 * removes one in O(p^2), against O(p^3) to factor afresh; the system need not be symmetric
 * (friction tied to normals). A member whose Schur pivot is at or below tol would make the system
 * singular (exact ties): it is kept aside ("deferred", its unknown held at 0) and its equation is
 * checked at each solve, as a rank-revealing factorization drops a redundant column; it is taken
 * in again once a removal or, in an unsymmetric system, another member makes room. */
#ifndef CONTACTD_SOLVER_BORDERED_H
#define CONTACTD_SOLVER_BORDERED_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cs_workspace cs_workspace;
typedef struct cs__meter cs__meter;

/* Entry (equation of member row, unknown of member col) of the system. */
typedef double cs__bordered_entry(const void *ctx, int row, int col);

/* thread: the solve's. Arrays from the solve's workspace. */
typedef struct cs__bordered {
    int cap;    /* members at most */
    int p;      /* members in the inverse: slots 0 .. p - 1 */
    int m;      /* members: slots p .. m - 1 are deferred */
    int *id;    /* [cap] member of each slot */
    int *slot;  /* [nid] slot of each id, -1 when not a member */
    unsigned char *retry; /* [nid] deferred members whose pivot may have grown since tried */
    double *K;  /* [cap x cap] column-major: K(s, t) = entry(id[s], id[t]) over all members */
    double *inv;            /* [cap x cap] inverse of K's leading p x p block */
    double *y, *z, *rs, *xs; /* [cap] scratch */
    double tol;             /* Schur pivots at or below this are singular (absolute) */
    bool stale;             /* a removal lost accuracy: refactor before the next solve */
    bool symmetric;         /* entry(r, c) == entry(c, r) (the caller's to set after init): the
                               inverse is symmetric, so a join computes one product, not two */
    cs__bordered_entry *entry;
    const void *ctx;
    cs__meter *meter;       /* the solve's deadline (NULL: none); work counted in multiply-adds */
} cs__bordered;

/* Workspace bytes for up to cap members with ids in [0, nid). */
size_t cs__bordered_size(int cap, int nid);

/* Empty system over ids [0, nid), entries from entry(ctx, ., .); tol: absolute threshold of the
 * Schur pivots. O(nid), counted on meter. Returns 0, or -1 when ws is short. */
int cs__bordered_init(cs__bordered *b, cs_workspace *ws, int cap, int nid, double tol,
                      cs__bordered_entry *entry, const void *ctx, cs__meter *meter);

/* Removes every member. */
void cs__bordered_clear(cs__bordered *b);

static inline bool cs__bordered_has(const cs__bordered *b, int id) {
    return b->slot[id] >= 0;
}

/* Adds member id (not a member; at most cap members). O(p^2). */
void cs__bordered_add(cs__bordered *b, int id);
/* cs__bordered_add for a member whose column u's image K^-1 u over the present members is known:
 * scale x (x by id, as cs__bordered_solve_once or cs__bordered_solve gave it, with no member
 * changed since), which spares one product with the inverse. */
void cs__bordered_add_known(cs__bordered *b, int id, const double *x, double scale);
/* Removes member id. O(p^2). */
void cs__bordered_remove(cs__bordered *b, int id);
/* Takes deferred members in where their pivot allows now (each removal, and each member that joins
 * the inverse, marks the deferred members whose pivot it changes by more than tol, an O(p) test
 * each; a symmetric PSD system never marks on a join), and refactors from scratch when a removal
 * lost accuracy. */
void cs__bordered_refresh(cs__bordered *b);

/* x = K^-1 rhs over the members (rhs, x: [nid] by id; 0 for the deferred ones), one product
 * with the inverse and no refinement or check: for a caller that can read the residual K x - rhs
 * from work it does anyway, and calls cs__bordered_solve when that residual asks. Returns 0, or 1
 * when the meter's deadline passed. O(p^2). */
int cs__bordered_solve_once(cs__bordered *b, const double *rhs, double *x);

/* Solves K x = rhs over the members (rhs, x: [nid] by id; x is written for members only, 0 for the
 * deferred ones), with one step of iterative refinement. Returns 0; -1 when a deferred member's
 * equation fails by more than cons_tol (the inverse cannot answer: the caller factors the whole
 * system); 1 when the meter's deadline passed. */
int cs__bordered_solve(cs__bordered *b, const double *rhs, double *x, double cons_tol);

#endif /* CONTACTD_SOLVER_BORDERED_H */
