/* SPDX-License-Identifier: MIT */
/* A scene file from tests/data with a workspace, warm start and result sized for it, and the
 * certificate assertion the solver tests share. */
#ifndef CONTACTD_TESTS_SCENE_FIXTURE_H
#define CONTACTD_TESTS_SCENE_FIXTURE_H
#include <stdbool.h>
#include "solver/contact.h"

typedef struct t_fixture {
    cs_scene scene;
    cs_limits lim;  /* the scene's own sizes, d up to 16, the solvers asked for */
    cs_workspace *ws;
    cs_warmstart *warm;
    void *mem;
    cs_result res;
} t_fixture;

/* Loads tests/data/<name>; fails the test with the parser's message when it cannot. The
 * workspace is sized for every solver. */
t_fixture *t_fixture_load(const char *name);
/* The same, for a session that declared only the solvers in the mask (cs_limits.solvers). */
t_fixture *t_fixture_load_for(const char *name, unsigned solvers);
void t_fixture_free(t_fixture *f);

/* Asserts every residual of r's certificate is below 1e-9 of its scale; the maximal-dissipation
 * gap only when dissipation is true (a frictionless solver does not model it). */
void t_assert_certified(const cs_result *r, bool dissipation);

#endif /* CONTACTD_TESTS_SCENE_FIXTURE_H */
