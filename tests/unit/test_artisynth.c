/* SPDX-License-Identifier: MIT */
/* Lloyd's own single-body test scenes (ArtiSynth's contactTest.txt, read from ../shared at run
 * time) solved by the pivoting solvers, against the reference post-step velocities that
 * ArtiSynth's LemkeContactSolver produces (table in shared/docs/lemke-contact.md, section 8.1).
 *
 * The file sets state with "key = [ numbers ]" (persisting until overwritten) and solves it at
 * each "test". Body: m = 1, J = I, COM at bpos; wext is an impulse, so with dt = 1 it is the
 * applied wrench and v* = wext. Normals are normalised on read; d = 8.
 *
 * Scene 14 (an octagonal box sliding on a box, mu = 0.3 at four contacts and 0.2 at the other
 * four) has many answers: how the normal load splits between the two kinds of contact sets the
 * friction, hence the velocity. The explicit and structural solvers follow ArtiSynth's pivot
 * path and reach its answer; `lemke` starts from its crash basis (lemke_structural.c) and may
 * reach another one, which must then be exact (certificate at 1e-12). */
#include "solver/contact.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/certify.h"
#include "testlib.h"

#define MAXC 16
#define NSCENES 16
#define MANY_ANSWERS 13 /* scene 14's index */

/* Reference velocities, 4 decimals as published. */
static const double reference[NSCENES][6] = {
    {0.8, 0, 0, 0, 0, 0},
    {0.1, 0, 0, 0, 0, -0.1},
    {0.1, 0, 0.1, 0.1, 0, -0.1},
    {0.1, 0, 0.05, 0.05, 0, -0.1},
    {0.05, 0, 0, 0, 0, 0},
    {0.8, 0, 0, 0, 0, 0},
    {-0.0664, 0, 0, 0, 0, -0.1328},
    {0.4904, -0.3269, 0, 0, 0, 0.3269},
    {0.3, 0, 0, 0, 0, -0.2},
    {0.0866, -0.0577, 0, 0, 0, 0.0577},
    {0.4863, -0.1673, 0.2354, 0, -0.0250, 0.1673},
    {0, 0, 0, 0, 0, 0},
    {0, 0, 0, 0, 0, 0},
    {-0.0263, 0, 0.0186, 0, -0.0133, 0},
    {0, 0, 0, 0, 0, 0},
    {0, 0, 0, 0, 0, 0},
};

typedef struct scene_state {
    double pnts[3 * MAXC], nrms[3 * MAXC], fcoefs[MAXC], bpos[3], wext[6];
    int npnts, nnrms, nfcoefs;
} scene_state;

/* Reads "[ numbers ]" into out (at most max); returns the count, -1 on a syntax error. */
static int read_list(FILE *fp, double *out, int max) {
    int c, n = 0;
    while ((c = fgetc(fp)) != EOF && c != '[')
        if (!isspace(c) && c != '=')
            return -1;
    for (;;) {
        while ((c = fgetc(fp)) != EOF && isspace(c))
            ;
        if (c == ']' || c == EOF)
            return c == ']' ? n : -1;
        ungetc(c, fp);
        double x;
        if (fscanf(fp, "%lf", &x) != 1 || n >= max)
            return -1;
        out[n++] = x;
    }
}

static void solve_and_check(const scene_state *s, int index, cs_solver solver) {
    const int nc = s->npnts / 3;
    assert_int_equal(s->nnrms, s->npnts);
    cs_body body = {.id = 1, .mass = 1, .inertia = {1, 0, 0, 0, 1, 0, 0, 0, 1},
                    .quat = {1, 0, 0, 0}};
    memcpy(body.pos, s->bpos, sizeof body.pos);
    memcpy(body.f, s->wext, 3 * sizeof(double));
    memcpy(body.tau, s->wext + 3, 3 * sizeof(double));
    cs_contact contacts[MAXC];
    for (int i = 0; i < nc; i++) {
        const double *n = s->nrms + 3 * i;
        const double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        contacts[i] = (cs_contact){.id = (uint64_t)i + 1, .body_a = 1, .body_b = 0,
                                   .mu = i < s->nfcoefs ? s->fcoefs[i] : 0};
        for (int k = 0; k < 3; k++) {
            contacts[i].point[k] = s->pnts[3 * i + k];
            contacts[i].normal[k] = n[k] / len;
        }
    }
    const cs_scene scene = {.dt = 1, .friction_dirs = 8, .nb = 1, .nc = nc, .bodies = &body,
                            .contacts = contacts};
    const cs_limits lim = {.max_bodies = 1, .max_contacts = MAXC, .max_dirs = 8};
    char err[256];
    assert_int_equal(cs_scene_validate(&scene, &lim, err, sizeof err), 0);
    cs_workspace *ws = cs_workspace_new(&lim);
    void *mem = malloc(cs_result_size(&lim));
    cs_result r;
    cs_result_init(&r, mem, &lim);
    const cs_options opt = {.solver = solver};
    const cs_status st = cs_step(ws, &scene, &opt, NULL, &r);
    if (st != CS_CONVERGED)
        fail_msg("scene %d (%d contacts): %s", index + 1, nc, cs_status_name(st));
    if (index == MANY_ANSWERS && solver == CS_SOLVER_LEMKE) {
        if (!cs_certificate_is_ok(&r.cert, 1e-12, true))
            fail_msg("scene %d: lemke's answer is not exact", index + 1);
    } else {
        // Published to 4 decimals: half a unit in the last place, plus rounding.
        for (int k = 0; k < 6; k++)
            assert_near(r.v[k], reference[index][k], 5.1e-5);
    }
    cs_workspace_free(ws);
    free(mem);
}

static void run_file(cs_solver solver) {
    const char *path = t_shared_path("artisynth/contactTest.txt");
    FILE *fp = fopen(path, "r");
    if (!fp)
        fail_msg("cannot open %s (tests read ../shared at run time)", path);
    scene_state s = {0};
    int tests = 0, c;
    char word[32];
    while ((c = fgetc(fp)) != EOF) {
        if (c == '#') {
            while ((c = fgetc(fp)) != EOF && c != '\n')
                ;
            continue;
        }
        if (isspace(c))
            continue;
        int k = 0;
        do
            word[k++] = (char)c;
        while (k < 31 && (c = fgetc(fp)) != EOF && isalnum(c));
        if (c != EOF && !isalnum(c))
            ungetc(c, fp);
        word[k] = 0;
        double fd[4];
        int r = 0;
        if (strcmp(word, "test") == 0) {
            assert_true(tests < NSCENES);
            solve_and_check(&s, tests++, solver);
        } else if (strcmp(word, "pnts") == 0) {
            r = s.npnts = read_list(fp, s.pnts, 3 * MAXC);
        } else if (strcmp(word, "nrms") == 0) {
            r = s.nnrms = read_list(fp, s.nrms, 3 * MAXC);
        } else if (strcmp(word, "fcoefs") == 0) {
            r = s.nfcoefs = read_list(fp, s.fcoefs, MAXC);
        } else if (strcmp(word, "bpos") == 0) {
            r = read_list(fp, s.bpos, 3);
        } else if (strcmp(word, "wext") == 0) {
            r = read_list(fp, s.wext, 6);
        } else if (strcmp(word, "fdirs") == 0) {
            // This file only asks for d = 8, which the scenes above use.
            r = read_list(fp, fd, 4);
            assert_int_equal(r, 1);
            assert_near(fd[0], 8, 0);
        } else {
            fail_msg("%s: unexpected word '%s'", path, word);
        }
        if (r < 0)
            fail_msg("%s: bad list after '%s'", path, word);
    }
    fclose(fp);
    assert_int_equal(tests, NSCENES);
}

static void lemke_standard_matches_artisynth(void **state) {
    (void)state;
    run_file(CS_SOLVER_LEMKE_STANDARD);
}

static void lemke_structural_matches_artisynth(void **state) {
    (void)state;
    run_file(CS_SOLVER_LEMKE_STRUCTURAL);
}

static void lemke_matches_artisynth(void **state) {
    (void)state;
    run_file(CS_SOLVER_LEMKE);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lemke_standard_matches_artisynth),
        cmocka_unit_test(lemke_structural_matches_artisynth),
        cmocka_unit_test(lemke_matches_artisynth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
