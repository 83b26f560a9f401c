/* SPDX-License-Identifier: MIT */
/* The scene generators of tests/lib/scene_gen.c: every scene validates, the same seed gives the
 * same bytes, contacts sit on the bodies' surfaces with normals into body_a, the shared cases
 * reproduce the scene files of tests/data, and the closed loop integrates and keeps contact
 * ids. */
#include "scene_gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene_fixture.h"
#include "solver/contact.h"
#include "testlib.h"

static const cs_limits lim = {
    .max_bodies = T_GEN_MAX_BODIES, .max_contacts = T_GEN_MAX_CONTACTS, .max_dirs = 16};

/* Fails naming the scene when it does not validate. */
static void assert_valid(const t_gen_scene *g, const char *what, int a, int b) {
    char err[256];
    if (cs_scene_validate(&g->s, &lim, err, sizeof err) != 0)
        fail_msg("%s(%d, %d): %s", what, a, b, err);
    assert_ptr_equal(g->s.bodies, g->bodies);
    assert_ptr_equal(g->s.contacts, g->contacts);
}

static int body_index(const t_gen_scene *g, uint32_t id) {
    for (int b = 0; b < g->s.nb; b++)
        if (g->bodies[b].id == id)
            return b;
    return -1;
}

/* Contact i lies on body_a's surface and -n is an outward normal of body_a there (stepping by eps
 * against n leaves the body at unit rate), n is unit, and, against a body or a plane of the
 * scene, the signed distance from the point is the contact's distance. */
static void assert_on_surfaces(const t_gen_scene *g, int i) {
    const cs_contact *c = &g->contacts[i];
    const double *n = c->normal, eps = 1e-6;
    assert_near(sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]), 1.0, 1e-14);
    const int a = body_index(g, c->body_a);
    assert_true(a >= 0);
    double grad[3], out[3];
    assert_near(t_gen_body_distance(g, a, c->point, grad), 0.0, 1e-12);
    for (int k = 0; k < 3; k++)
        out[k] = c->point[k] - eps * n[k];
    assert_near(t_gen_body_distance(g, a, out, grad), eps, 1e-10);
    if (c->body_b != 0) {
        const int b = body_index(g, c->body_b);
        assert_near(t_gen_body_distance(g, b, c->point, grad), c->distance, 1e-12);
    } else if (g->np > 0) {
        bool on_plane = false;
        for (int w = 0; w < g->np; w++) {
            const t_gen_plane *P = &g->planes[w];
            const double d =
                P->n[0] * c->point[0] + P->n[1] * c->point[1] + P->n[2] * c->point[2] - P->offset;
            on_plane |= memcmp(P->n, n, sizeof P->n) == 0 && fabs(d - c->distance) < 1e-12;
        }
        assert_true(on_plane);
    }
}

static void assert_ids_unique(const t_gen_scene *g) {
    for (int i = 0; i < g->s.nc; i++)
        for (int j = 0; j < i; j++)
            assert_true(g->contacts[i].id != g->contacts[j].id);
}

/* Every generator over its whole parameter range gives a valid scene with the documented counts
 * and geometry. */
static void all_scenes_valid_with_contacts_on_surfaces(void **state) {
    (void)state;
    t_gen_scene *g = malloc(sizeof(*g));
    assert_non_null(g);
    for (uint64_t seed = 1; seed <= 5; seed++) {
        for (int n = 8; n <= 32; n += 8) {
            t_gen_peg(g, n, 0.25, 8, seed);
            assert_valid(g, "peg", n, (int)seed);
            assert_int_equal(g->s.nc, n);
            for (int i = 0; i < n; i++)
                assert_on_surfaces(g, i);
            assert_ids_unique(g);
            assert_memory_equal(g->s.gravity, ((double[3]){0, 0, 0}), sizeof g->s.gravity);
        }
        for (int kind = 0; kind < T_GEN_SINGLE_KINDS; kind++) {
            t_gen_single(g, kind, 0.3, 4, seed);
            assert_valid(g, "single", kind, (int)seed);
            assert_int_equal(g->s.nc, t_gen_single_contacts(kind));
            assert_int_equal(g->s.friction_dirs, 4);
            for (int i = 0; i < g->s.nc; i++)
                assert_on_surfaces(g, i);
            assert_ids_unique(g);
        }
        for (int side = 2; side <= 16; side += 7) {
            t_gen_grid(g, side, 0.3, 8, seed);
            assert_valid(g, "grid", side, (int)seed);
            assert_int_equal(g->s.nc, side * side);
            for (int i = 0; i < g->s.nc; i++)
                assert_on_surfaces(g, i);
            assert_ids_unique(g);
        }
        for (int boxes = 1; boxes <= 5; boxes++)
            for (int variant = 0; variant < 1 << (boxes - 1); variant++) {
                t_gen_stack(g, boxes, variant, 0.5, 8, seed);
                assert_valid(g, "stack", boxes, variant);
                int n = 4;
                for (int i = 1; i < boxes; i++)
                    n += (variant >> (i - 1)) & 1 ? 8 : 4;
                assert_int_equal(g->s.nc, n);
                for (int i = 0; i < n; i++)
                    assert_on_surfaces(g, i);
                assert_ids_unique(g);
            }
        for (int nb = 1; nb <= 5; nb++)
            for (int nc = 1; nc <= 32; nc++) {
                t_gen_random(g, nb, nc, 8, seed * 1000 + (uint64_t)(nb * 33 + nc));
                assert_valid(g, "random", nb, nc);
                assert_int_equal(g->s.nb, nb);
                assert_int_equal(g->s.nc, nc);
                for (int i = 0; i < nc; i++) {
                    const cs_contact *c = &g->contacts[i];
                    assert_true(c->mu >= 0 && c->mu <= 1);
                    assert_true(c->distance >= 0 && c->distance <= 0.005);
                    const cs_body *A = &g->bodies[body_index(g, c->body_a)];
                    const double d[3] = {c->point[0] - A->pos[0], c->point[1] - A->pos[1],
                                         c->point[2] - A->pos[2]};
                    assert_true(sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) <= 0.2);
                }
                for (int b = 0; b < nb; b++)
                    assert_true(g->bodies[b].mass >= 0.5 && g->bodies[b].mass <= 2);
            }
    }
    free(g);
}

/* Reference geometry: each scene file against the generator that claims to reproduce it. Points
 * and normals agree to rounding (make_scenes.py does the same arithmetic in the same order). */
static void assert_same_geometry(const cs_scene *file, const t_gen_scene *g) {
    assert_int_equal(file->nb, g->s.nb);
    assert_int_equal(file->nc, g->s.nc);
    for (int b = 0; b < file->nb; b++) {
        const cs_body *F = &file->bodies[b], *B = &g->bodies[b];
        assert_int_equal(F->id, B->id);
        assert_near(F->mass, B->mass, 0.0);
        for (int k = 0; k < 9; k++)
            assert_near(F->inertia[k], B->inertia[k], 1e-15);
        for (int k = 0; k < 3; k++)
            assert_near(F->pos[k], B->pos[k], 1e-15);
        for (int k = 0; k < 4; k++)
            assert_near(F->quat[k], B->quat[k], 1e-15);
    }
    for (int i = 0; i < file->nc; i++) {
        const cs_contact *F = &file->contacts[i], *C = &g->contacts[i];
        assert_true(F->id == C->id);
        assert_int_equal(F->body_a, C->body_a);
        assert_int_equal(F->body_b, C->body_b);
        for (int k = 0; k < 3; k++) {
            assert_near(F->point[k], C->point[k], 1e-15);
            assert_near(F->normal[k], C->normal[k], 0.0);
        }
        assert_near(F->distance, C->distance, 0.0);
        assert_near(F->mu, C->mu, 0.0);
    }
}

static void reproduces_scene_files(void **state) {
    (void)state;
    t_gen_scene *g = malloc(sizeof(*g));
    assert_non_null(g);
    t_fixture *f = t_fixture_load("peg_in_hole.json");
    t_gen_peg(g, 16, 0.25, 8, 7);
    assert_same_geometry(&f->scene, g);
    t_fixture_free(f);

    f = t_fixture_load("stack_3.json");
    t_gen_stack(g, 3, 0, 0.5, 8, 7);
    assert_same_geometry(&f->scene, g);
    t_fixture_free(f);

    f = t_fixture_load("box_on_plane.json");
    t_gen_single(g, 3, 0.5, 8, 7);
    assert_same_geometry(&f->scene, g);
    t_fixture_free(f);
    free(g);
}

/* The same seed gives the same bytes; another seed another wrench on the same geometry. */
static void deterministic(void **state) {
    (void)state;
    t_gen_scene *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
    assert_non_null(a);
    assert_non_null(b);
    for (int which = 0; which < 6; which++) {
        for (uint64_t seed = 11; seed <= 12; seed++) {
            t_gen_scene *g = seed == 11 ? a : b;
            switch (which) {
            case 0: t_gen_peg(g, 24, 0.25, 8, 42); break;
            case 1: t_gen_single(g, 7, 0.25, 8, 42); break;
            case 2: t_gen_stack(g, 5, 10, 0.25, 8, 42); break;
            case 3: t_gen_random(g, 5, 32, 8, 42); break;
            case 4: t_gen_clutter(g, 40, 42); break;
            case 5: t_gen_slide(g, 0.3, 8, 42); break;
            }
        }
        assert_int_equal(a->s.nb, b->s.nb);
        assert_int_equal(a->s.nc, b->s.nc);
        assert_memory_equal(a->bodies, b->bodies, (size_t)a->s.nb * sizeof(cs_body));
        assert_memory_equal(a->contacts, b->contacts, (size_t)a->s.nc * sizeof(cs_contact));
    }
    // A copy has its own pointers and the same contents.
    t_gen_clutter(a, 20, 5);
    t_gen_copy(b, a);
    assert_ptr_equal(b->s.bodies, b->bodies);
    assert_ptr_equal(b->s.contacts, b->contacts);
    assert_int_equal(b->s.nc, a->s.nc);
    assert_memory_equal(b->contacts, a->contacts, (size_t)a->s.nc * sizeof(cs_contact));
    assert_memory_equal(b->half, a->half, sizeof a->half);
    t_gen_peg(a, 16, 0.25, 8, 1);
    t_gen_peg(b, 16, 0.25, 8, 2);
    assert_memory_equal(a->contacts, b->contacts, 16 * sizeof(cs_contact));
    assert_memory_not_equal(a->bodies[0].f, b->bodies[0].f, sizeof a->bodies[0].f);
    free(a);
    free(b);
}

/* A turned wrench keeps its magnitude and the force-torque angle, and a full period returns it. */
static void peg_turn_is_a_rotation(void **state) {
    (void)state;
    t_gen_scene *g = malloc(sizeof(*g));
    assert_non_null(g);
    t_gen_peg(g, 16, 0.25, 8, 3);
    const double *f0 = g->wrench, *t0 = g->wrench + 3;
    const double f0f0 = f0[0] * f0[0] + f0[1] * f0[1] + f0[2] * f0[2];
    const double f0t0 = f0[0] * t0[0] + f0[1] * t0[1] + f0[2] * t0[2];
    t_gen_peg_turn(g, 250, 1000);
    const double *f = g->bodies[0].f, *t = g->bodies[0].tau;
    assert_near(f[0] * f[0] + f[1] * f[1] + f[2] * f[2], f0f0, 1e-12 * f0f0);
    assert_near(f[0] * t[0] + f[1] * t[1] + f[2] * t[2], f0t0, 1e-12);
    assert_true(fabs(f[0] - f0[0]) > 1e-3 || fabs(f[1] - f0[1]) > 1e-3);
    t_gen_peg_turn(g, 1000, 1000);
    for (int k = 0; k < 3; k++)
        assert_near(f[k], f0[k], 1e-12);
    free(g);
}

/* The clutter rests: no feature pair (walls included) overlaps by more than rounding, since
 * every pair within the margin has a contact and all their distances are >= 0; each body is
 * supported by at least one contact; every contact lies on the surfaces it joins. */
static void clutter_geometry(void **state) {
    (void)state;
    t_gen_scene *g = malloc(sizeof(*g));
    assert_non_null(g);
    const int sizes[3] = {10, 20, 40};
    for (int s = 0; s < 3; s++) {
        t_gen_clutter(g, sizes[s], (uint64_t)s + 1);
        assert_valid(g, "clutter", sizes[s], s);
        assert_int_equal(g->s.nb, sizes[s]);
        assert_ids_unique(g);
        int supported[T_GEN_MAX_BODIES] = {0};
        for (int i = 0; i < g->s.nc; i++) {
            assert_on_surfaces(g, i);
            assert_true(g->contacts[i].distance >= -1e-12);
            assert_true(g->contacts[i].distance < 0.005);
            // Support: the normal points up into body_a, or down into body_a from body_b above.
            const cs_contact *c = &g->contacts[i];
            if (c->normal[2] > 0.5)
                supported[body_index(g, c->body_a)] = 1;
            if (c->normal[2] < -0.5 && c->body_b != 0)
                supported[body_index(g, c->body_b)] = 1;
        }
        int boxes = 0;
        for (int b = 0; b < g->s.nb; b++) {
            assert_true(supported[b]);
            boxes += g->shape[b] == T_GEN_BOX;
        }
        assert_true(boxes > 0 && boxes < g->s.nb);
    }
    free(g);
}

/* Integration: zero velocities change nothing but seq and tick; a spin about z of 1 rad/s for
 * 1000 steps of 1 ms turns a body by 1 rad (first-order quaternion update: error O(dt)); a
 * translation moves it by v t exactly up to rounding. */
static void advance_integrates_and_keeps_ids(void **state) {
    (void)state;
    t_gen_scene *g = malloc(sizeof(*g)), *h = malloc(sizeof(*h));
    void *mem = malloc(cs_result_size(&lim));
    assert_non_null(g);
    assert_non_null(h);
    assert_non_null(mem);
    cs_result r;
    cs_result_init(&r, mem, &lim);
    t_gen_clutter(g, 20, 5);
    t_gen_clutter(h, 20, 5);
    r.nb = g->s.nb;
    memset(r.v, 0, 6 * (size_t)r.nb * sizeof(double));
    t_gen_clutter_advance(g, &r);
    assert_int_equal(g->s.seq, h->s.seq + 1);
    assert_int_equal(g->tick, 1);
    assert_int_equal(g->s.nc, h->s.nc);
    for (int i = 0; i < g->s.nc; i++)
        assert_true(g->contacts[i].id == h->contacts[i].id);
    assert_memory_equal(g->bodies[3].pos, h->bodies[3].pos, sizeof g->bodies[3].pos);

    for (int b = 0; b < r.nb; b++) {
        double *v = r.v + 6 * b;
        v[0] = 0.1, v[1] = -0.2, v[2] = 0, v[3] = 0, v[4] = 0, v[5] = 1;
    }
    for (int t = 0; t < 1000; t++)
        t_gen_clutter_advance(g, &r);
    for (int b = 0; b < g->s.nb; b++) {
        const cs_body *B = &g->bodies[b], *H = &h->bodies[b];
        assert_near(B->pos[0], H->pos[0] + 0.1, 1e-12);
        assert_near(B->pos[1], H->pos[1] - 0.2, 1e-12);
        // Relative turn about z: angle of q conj(q0).
        const double w = B->quat[0] * H->quat[0] + B->quat[3] * H->quat[3] +
                         B->quat[1] * H->quat[1] + B->quat[2] * H->quat[2];
        const double z = H->quat[0] * B->quat[3] - B->quat[0] * H->quat[3] +
                         B->quat[2] * H->quat[1] - B->quat[1] * H->quat[2];
        assert_near(2 * atan2(z, w), 1.0, 1e-3);
    }
    free(mem);
    free(g);
    free(h);
}

/* Closed loop with a solver: the pushed box slides on, stays on the floor with the same four
 * contact ids, and gains speed at (1.2 mu g - h / m) where the friction force h lies between the
 * d-gon's inradius and circumradius times mu m g (cos(pi/d) .. 1): 0.2 .. 0.276 mu g for d = 8. */
static void slide_closed_loop(void **state) {
    (void)state;
    if (!cs_solver_is_available(CS_SOLVER_LEMKE_STANDARD))
        skip();
    t_gen_scene *g = malloc(sizeof(*g));
    assert_non_null(g);
    const double mu = 0.3, g0 = 9.81;
    t_gen_slide(g, mu, 8, 9);
    const cs_limits l = {.max_bodies = 1, .max_contacts = 8, .max_dirs = 8};
    cs_workspace *ws = cs_workspace_new(&l);
    cs_warmstart *warm = cs_warmstart_new(&l);
    void *mem = malloc(cs_result_size(&l));
    assert_non_null(ws);
    assert_non_null(warm);
    assert_non_null(mem);
    cs_result r;
    cs_result_init(&r, mem, &l);
    const cs_options opt = {.solver = CS_SOLVER_LEMKE_STANDARD};
    const double v0 = hypot(g->bodies[0].v[0], g->bodies[0].v[1]);
    uint64_t ids[4];
    assert_int_equal(g->s.nc, 4);
    for (int i = 0; i < 4; i++)
        ids[i] = g->contacts[i].id;
    const int ticks = 100;
    for (int t = 0; t < ticks; t++) {
        assert_int_equal(cs_step(ws, &g->s, &opt, warm, &r), CS_CONVERGED);
        t_gen_clutter_advance(g, &r);
        assert_int_equal(g->s.nc, 4);
        for (int i = 0; i < 4; i++)
            assert_true(g->contacts[i].id == ids[i]);
    }
    const cs_body *B = &g->bodies[0];
    assert_near(B->pos[2], 0.1, 1e-9);
    const double gain = hypot(B->v[0], B->v[1]) - v0, t = ticks * g->s.dt;
    assert_true(gain >= 0.2 * mu * g0 * t * (1 - 1e-6));
    assert_true(gain <= (1.2 - cos(M_PI / 8)) * mu * g0 * t * (1 + 1e-6));
    free(mem);
    cs_warmstart_free(warm);
    cs_workspace_free(ws);
    free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_scenes_valid_with_contacts_on_surfaces),
        cmocka_unit_test(reproduces_scene_files),
        cmocka_unit_test(deterministic),
        cmocka_unit_test(peg_turn_is_a_rotation),
        cmocka_unit_test(clutter_geometry),
        cmocka_unit_test(advance_integrates_and_keeps_ids),
        cmocka_unit_test(slide_closed_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
