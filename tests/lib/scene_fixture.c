/* SPDX-License-Identifier: MIT */
/* Scene-file fixtures for solver tests (see scene_fixture.h). */
#include "scene_fixture.h"

#include <stdlib.h>

#include "solver/contact.h"
#include "wire/scene_json.h"
#include "testlib.h"

t_fixture *t_fixture_load(const char *name) {
    return t_fixture_load_for(name, 0);
}

t_fixture *t_fixture_load_for(const char *name, unsigned solvers) {
    t_fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    char err[256];
    if (cd_scene_json_load(t_data_path(name), cs_scene_validate, &f->scene, err, sizeof err) != 0)
        fail_msg("%s: %s", name, err);
    f->lim = (cs_limits){.max_bodies = f->scene.nb, .max_contacts = f->scene.nc, .max_dirs = 16,
                         .solvers = solvers};
    f->ws = cs_workspace_new(&f->lim);
    f->warm = cs_warmstart_new(&f->lim);
    f->mem = malloc(cs_result_size(&f->lim));
    assert_non_null(f->ws);
    assert_non_null(f->warm);
    assert_non_null(f->mem);
    cs_result_init(&f->res, f->mem, &f->lim);
    return f;
}

void t_fixture_free(t_fixture *f) {
    cd_scene_json_free(&f->scene);
    cs_workspace_free(f->ws);
    cs_warmstart_free(f->warm);
    free(f->mem);
    free(f);
}

void t_assert_certified(const cs_result *r, bool dissipation) {
    const cs_certificate *c = &r->cert;
    assert_near(c->complementarity, 0.0, 1e-9 * c->impulse_scale * c->velocity_scale);
    assert_near(c->normal_velocity, 0.0, 1e-9 * c->velocity_scale);
    assert_near(c->cone, 0.0, 1e-9 * c->impulse_scale);
    assert_near(c->momentum, 0.0, 1e-9 * c->impulse_scale);
    if (dissipation)
        assert_near(c->dissipation, 0.0, 1e-9 * c->impulse_scale);
}
