/* SPDX-License-Identifier: MIT */
/* Scene files: both spellings of field names, 64-bit integers as strings or numbers, defaults,
 * error messages with field paths; the writer's output read back by the reader; and every scene
 * in tests/data loads and validates. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "testlib.h"

#include "wire/codec.h"
#include "solver/contact.h"
#include "wire/scene_json.h"

// One body on the ground with two contacts, in lowerCamelCase with string ids.
static const char camel[] =
    "{\n"
    "  \"seq\": \"12345678901234\", \"dt\": 0.002,\n"
    "  \"gravity\": {\"z\": -9.81}, \"frictionDirections\": 6, \"solver\": \"SOLVER_DANTZIG\",\n"
    "  \"bodies\": [{\"id\": 3, \"mass\": 1.5,\n"
    "    \"inertia\": [0.01, 0, 0, 0, 0.02, 0, 0, 0, 0.03],\n"
    "    \"position\": {\"x\": 0.5, \"y\": -0.25, \"z\": 0.1},\n"
    "    \"linearVelocity\": {\"x\": 1.0}, \"angularVelocity\": {\"z\": 2.0},\n"
    "    \"force\": {\"y\": 3.0}, \"torque\": {\"x\": 4.0}}],\n"
    "  \"contacts\": [\n"
    "    {\"id\": \"18446744073709551615\", \"bodyA\": 3, \"bodyB\": 0,\n"
    "     \"point\": {\"x\": 0.5}, \"normal\": {\"z\": 1}, \"distance\": -0.001,\n"
    "     \"friction\": 0.4, \"stiffness\": 1e5, \"dissipation\": 0.02},\n"
    "    {\"id\": 7, \"bodyA\": 3, \"normal\": {\"z\": 1}}\n"
    "  ]\n"
    "}\n";

// The same scene with the original snake_case names and numbers where the first has strings.
static const char snake[] =
    "{\"seq\": 12345678901234, \"dt\": 0.002, \"gravity\": {\"z\": -9.81},\n"
    " \"friction_directions\": 6, \"solver_name\": \"dantzig\",\n"
    " \"bodies\": [{\"id\": 3, \"mass\": 1.5, \"inertia\": [0.01, 0, 0, 0, 0.02, 0, 0, 0, 0.03],\n"
    "   \"position\": {\"x\": 0.5, \"y\": -0.25, \"z\": 0.1},\n"
    "   \"linear_velocity\": {\"x\": 1.0}, \"angular_velocity\": {\"z\": 2.0},\n"
    "   \"force\": {\"y\": 3.0}, \"torque\": {\"x\": 4.0}, \"orientation\": null}],\n"
    " \"contacts\": [{\"id\": \"18446744073709551615\", \"body_a\": 3, \"body_b\": 0,\n"
    "   \"point\": {\"x\": 0.5}, \"normal\": {\"z\": 1}, \"distance\": -0.001, \"friction\": 0.4,\n"
    "   \"stiffness\": \"1e5\", \"dissipation\": 0.02},\n"
    "  {\"id\": \"7\", \"body_a\": 3, \"normal\": {\"x\": 0, \"y\": 0, \"z\": 1}}]}\n";

static void check_parsed(const cs_scene *s) {
    assert_true(s->seq == UINT64_C(12345678901234));
    assert_true(s->dt == 0.002);
    assert_true(s->gravity[0] == 0.0 && s->gravity[1] == 0.0 && s->gravity[2] == -9.81);
    assert_int_equal(s->friction_dirs, 6);
    assert_int_equal(s->solver, CS_SOLVER_DANTZIG);
    assert_int_equal(s->nb, 1);
    assert_int_equal(s->nc, 2);
    const cs_body *b = &s->bodies[0];
    assert_int_equal(b->id, 3);
    assert_true(b->mass == 1.5);
    assert_true(b->inertia[0] == 0.01 && b->inertia[4] == 0.02 && b->inertia[8] == 0.03);
    assert_true(b->pos[0] == 0.5 && b->pos[1] == -0.25 && b->pos[2] == 0.1);
    // Absent orientation: identity.
    assert_true(b->quat[0] == 1.0 && b->quat[1] == 0.0 && b->quat[2] == 0.0 && b->quat[3] == 0.0);
    assert_true(b->v[0] == 1.0 && b->v[1] == 0.0 && b->w[2] == 2.0 && b->f[1] == 3.0);
    assert_true(b->tau[0] == 4.0);
    const cs_contact *c = &s->contacts[0];
    assert_true(c->id == UINT64_MAX);
    assert_int_equal(c->body_a, 3);
    assert_int_equal(c->body_b, 0);
    assert_true(c->point[0] == 0.5 && c->normal[2] == 1.0);
    assert_true(c->distance == -0.001 && c->mu == 0.4);
    assert_true(c->stiffness == 1e5 && c->dissipation == 0.02);
    // The second contact leaves almost everything at its default.
    c = &s->contacts[1];
    assert_true(c->id == 7 && c->body_b == 0 && c->mu == 0.0 && c->distance == 0.0);
    assert_true(c->stiffness == 0.0 && c->dissipation == 0.0);
    assert_true(c->point[0] == 0.0 && c->point[1] == 0.0 && c->point[2] == 0.0);
}

static void parses_camel_case(void **state) {
    (void)state;
    cs_scene s;
    char err[256] = "";
    const int r = cd_scene_json_parse(camel, cs_scene_validate, &s, err, sizeof err);
    if (r != 0) {
        fail_msg("parse failed: %s", err);
    }
    check_parsed(&s);
    cd_scene_json_free(&s);
    assert_null(s.bodies);
    assert_null(s.contacts);
}

static void parses_snake_case(void **state) {
    (void)state;
    cs_scene s;
    char err[256] = "";
    const int r = cd_scene_json_parse(snake, cs_scene_validate, &s, err, sizeof err);
    if (r != 0) {
        fail_msg("parse failed: %s", err);
    }
    check_parsed(&s);
    cd_scene_json_free(&s);
}

static void defaults(void **state) {
    (void)state;
    cs_scene s;
    char err[256] = "";
    assert_int_equal(cd_scene_json_parse("{\"dt\": 0.001}", cs_scene_validate,
                                         &s, err, sizeof err), 0);
    assert_int_equal(s.nb, 0);
    assert_int_equal(s.nc, 0);
    assert_true(s.seq == 0 && s.gravity[2] == 0.0);
    assert_int_equal(s.friction_dirs, CS_DIRS_DEFAULT);
    assert_int_equal(s.solver, CS_SOLVER_DEFAULT);
    cd_scene_json_free(&s);
}

// Parses text, expecting failure with a message that starts with want.
static void expect_error(const char *text, const char *want) {
    cs_body sentinel_body;
    cs_scene s = {.seq = 99, .nb = 5, .bodies = &sentinel_body};
    char err[512] = "";
    const int r = cd_scene_json_parse(text, cs_scene_validate, &s, err, sizeof err);
    print_message("# error: %s\n", err);
    assert_int_equal(r, -EINVAL);
    if (strncmp(err, want, strlen(want)) != 0) {
        fail_msg("message '%s' does not start with '%s'", err, want);
    }
    // Outputs are untouched on failure.
    assert_true(s.seq == 99 && s.nb == 5 && s.bodies == &sentinel_body);
}

#define BODY "{\"id\": 1, \"mass\": 1, \"inertia\": [1, 0, 0, 0, 1, 0, 0, 0, 1]}"
#define CONTACT "{\"bodyA\": 1, \"normal\": {\"z\": 1}}"

static void errors_name_the_path(void **state) {
    (void)state;
    expect_error("{\"dt\": 0.001, \"bodies\": [" BODY "], \"contacts\": [" CONTACT ", " CONTACT
                 ", " CONTACT ", {\"bodyA\": 1, \"normal\": {\"x\": \"abc\"}}]}",
                 "contacts[3].normal.x: expected a number");
    expect_error("{\"dt\": 0.001, \"bodies\": [{\"id\": 1, \"mas\": 1}]}",
                 "bodies[0].mas: unknown field");
    expect_error("{\"dt\": 0.001, \"bodies\": [{\"id\": 1, \"mass\": 1, \"inertia\": [1, 0, 1]}]}",
                 "bodies[0].inertia: expected 9 values, got 3");
    expect_error("{\"dt\": 0.001, \"bodies\": [{\"id\": 1, \"inertia\": [1, 0, \"x\"]}]}",
                 "bodies[0].inertia[2]: expected a number");
    expect_error("{\"contacts\": [{\"id\": -1}]}", "contacts[0].id: -1 is out of range");
    expect_error("{\"contacts\": [{\"id\": \"-1\"}]}", "contacts[0].id: expected a non-negative");
    expect_error("{\"contacts\": [{\"id\": 1.5}]}", "contacts[0].id: expected an integer");
    expect_error("{\"contacts\": [{\"id\": \"12x\"}]}", "contacts[0].id: expected a non-negative");
    expect_error("{\"contacts\": [{\"id\": \"18446744073709551616\"}]}", "contacts[0].id:");
    expect_error("{\"contacts\": [{\"bodyA\": 4294967296}]}", "contacts[0].body_a: 4294967296");
    expect_error("{\"contacts\": [{\"body_a\": 1, \"bodyA\": 1}]}",
                 "contacts[0].body_a: given twice");
    expect_error("{\"bodies\": {}}", "bodies: expected an array");
    expect_error("{\"gravity\": [0, 0, -9.81]}", "gravity: expected an object");
    expect_error("{\"solver\": \"SOLVER_FAST\"}", "solver: unknown value 'SOLVER_FAST'");
    expect_error("{\"solverName\": 3}", "solver_name: expected a string");
    expect_error("[1, 2]", "expected an object");
    expect_error("{\"dt\": 0.001,\n \"seq\": }", "invalid JSON at line 2");
    // Conversion and validation messages come through with their field names.
    expect_error("{\"dt\": 0.001, \"solverName\": \"fast\"}", "solver_name: unknown solver 'fast'");
    expect_error("{\"dt\": 0.001, \"joints\": [{\"id\": 1}]}", "joints[0].kind: unknown");
    expect_error("{\"dt\": \"NaN\"}", "dt:");
    expect_error("{\"dt\": 0.001, \"bodies\": [{\"id\": 1, \"mass\": -2, "
                 "\"inertia\": [1, 0, 0, 0, 1, 0, 0, 0, 1]}]}",
                 "bodies[0].mass");
    expect_error("{\"dt\": 0.001, \"frictionDirections\": 100}",
                 "friction_directions: 100 exceeds the session limit of 64");
    // A kinematic body has no mass fields; a contact needs a body the solve moves.
    expect_error("{\"dt\": 0.001, \"bodies\": [{\"id\": 1, \"kinematic\": true, \"mass\": 2}]}",
                 "bodies[0].mass: a kinematic body has no mass (its velocity is prescribed)");
    expect_error("{\"dt\": 0.001, \"bodies\": [{\"id\": 1, \"kinematic\": true, "
                 "\"inertia\": [1, 0, 0, 0, 1, 0, 0, 0, 1]}]}",
                 "bodies[0].inertia: a kinematic body has no mass (its velocity is prescribed)");
    expect_error("{\"dt\": 0.001, \"bodies\": [{\"id\": 1, \"kinematic\": true}], "
                 "\"contacts\": [" CONTACT "]}",
                 "contacts[0].body_a: body_a (1) and body_b (0) are each kinematic or the world");
    expect_error("{\"dt\": 0.001, \"bodies\": [{\"id\": 1, \"kinematic\": 1}]}",
                 "bodies[0].kinematic: expected");
}

// A free box (id 1) and a kinematic probe (id 2) pressing on it, as a client writes them.
static const char kinematic[] =
    "{\"dt\": 0.001, \"bodies\": [" BODY ",\n"
    " {\"id\": 2, \"kinematic\": true, \"linearVelocity\": {\"z\": -0.25},\n"
    "  \"position\": {\"z\": 0.3}}],\n"
    " \"contacts\": [{\"bodyA\": 1, \"bodyB\": 2, \"normal\": {\"z\": -1}}]}\n";

/* "kinematic": true reads into cs_body.kinematic, and the writer gives it back (with no
 * inertia: a kinematic body sends none), so the scene reads back the same. */
static void kinematic_reads_and_writes(void **state) {
    (void)state;
    cs_scene s;
    char err[256] = "";
    if (cd_scene_json_parse(kinematic, cs_scene_validate, &s, err, sizeof err) != 0) {
        fail_msg("parse failed: %s", err);
    }
    assert_int_equal(s.nb, 2);
    assert_false(s.bodies[0].kinematic);
    assert_true(s.bodies[1].kinematic);
    assert_true(s.bodies[1].mass == 0 && s.bodies[1].v[2] == -0.25);
    const cs_limits lim = {.max_bodies = s.nb, .max_contacts = s.nc, .max_dirs = 64};
    cd_frame_msg fm;
    assert_int_equal(cd_codec_frame_msg_init(&fm, &lim), 0);
    const Contactd__V1__ClientMessage *env = cd_codec_frame_build(&fm, &s);
    char *text = cd_scene_json_write(&env->frame->base, false);
    assert_non_null(text);
    print_message("# %s\n", text);
    cJSON *root = cJSON_Parse(text);
    const cJSON *bodies = cJSON_GetObjectItemCaseSensitive(root, "bodies");
    const cJSON *b0 = cJSON_GetArrayItem(bodies, 0), *b1 = cJSON_GetArrayItem(bodies, 1);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(b0, "kinematic")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b1, "kinematic")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(b1, "inertia")), 0);
    cJSON_Delete(root);
    cs_scene back;
    assert_int_equal(cd_scene_json_parse(text, cs_scene_validate, &back, err, sizeof err), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(back.bodies[i].kinematic, s.bodies[i].kinematic);
        assert_true(back.bodies[i].mass == s.bodies[i].mass);
        assert_memory_equal(back.bodies[i].v, s.bodies[i].v, sizeof s.bodies[i].v);
        assert_memory_equal(back.bodies[i].inertia, s.bodies[i].inertia,
                            sizeof s.bodies[i].inertia);
    }
    free(text);
    cd_scene_json_free(&back);
    cd_codec_frame_msg_fini(&fm);
    cd_scene_json_free(&s);
}

// A scene -> Frame -> JSON text -> scene round trip through the writer and the reader.
static void writer_output_reads_back(void **state) {
    (void)state;
    cs_scene s;
    char err[256] = "";
    assert_int_equal(cd_scene_json_parse(camel, cs_scene_validate, &s, err, sizeof err), 0);
    const cs_limits lim = {.max_bodies = s.nb, .max_contacts = s.nc, .max_dirs = 64};
    cd_frame_msg fm;
    assert_int_equal(cd_codec_frame_msg_init(&fm, &lim), 0);
    const Contactd__V1__ClientMessage *env = cd_codec_frame_build(&fm, &s);
    char *text = cd_scene_json_write(&env->frame->base, false);
    assert_non_null(text);
    print_message("# %s\n", text);

    // The canonical mapping: lowerCamelCase, 64-bit integers as strings, enums by name.
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    assert_non_null(cJSON_GetObjectItemCaseSensitive(root, "frictionDirections"));
    assert_null(cJSON_GetObjectItemCaseSensitive(root, "friction_directions"));
    const cJSON *seq = cJSON_GetObjectItemCaseSensitive(root, "seq");
    assert_true(cJSON_IsString(seq));
    assert_string_equal(seq->valuestring, "12345678901234");
    const cJSON *solver = cJSON_GetObjectItemCaseSensitive(root, "solver");
    assert_true(cJSON_IsString(solver));
    assert_string_equal(solver->valuestring, "SOLVER_DANTZIG");
    const cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "contacts"), 0);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(c0, "id")->valuestring,
                        "18446744073709551615");
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(c0, "bodyA")));
    cJSON_Delete(root);

    cs_scene back;
    assert_int_equal(cd_scene_json_parse(text, cs_scene_validate, &back, err, sizeof err), 0);
    check_parsed(&back);
    assert_memory_equal(back.bodies, s.bodies, sizeof(cs_body) * (size_t)s.nb);
    assert_memory_equal(back.contacts, s.contacts, sizeof(cs_contact) * (size_t)s.nc);
    free(text);
    cd_scene_json_free(&back);
    cd_codec_frame_msg_fini(&fm);
    cd_scene_json_free(&s);
}

static void writer_spells_non_finite_values(void **state) {
    (void)state;
    Contactd__V1__Residuals res = CONTACTD__V1__RESIDUALS__INIT;
    res.complementarity = NAN;
    res.cone = INFINITY;
    res.momentum = -INFINITY;
    res.dissipation = 0.25;
    char *text = cd_scene_json_write(&res.base, false);
    assert_non_null(text);
    assert_string_equal(text, "{\"complementarity\":\"NaN\",\"normalVelocity\":0,"
                              "\"cone\":\"Infinity\",\"dissipation\":0.25,"
                              "\"momentum\":\"-Infinity\",\"joint\":0}");
    free(text);
}

static void every_data_file_loads(void **state) {
    (void)state;
    const char *dir = getenv("CONTACTD_DATA");
    assert_non_null(dir);
    DIR *d = opendir(dir);
    assert_non_null(d);
    int loaded = 0;
    for (const struct dirent *e; (e = readdir(d));) {
        const size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 5, ".json") != 0) {
            continue;
        }
        char path[4096], err[1024] = "";
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        cs_scene s;
        const int r = cd_scene_json_load(path, cs_scene_validate, &s, err, sizeof err);
        if (r != 0) {
            fail_msg("%s", err);
        }
        print_message("# %s: %d bodies, %d contacts\n", e->d_name, s.nb, s.nc);
        assert_true(s.nb > 0 && s.nc > 0);
        cd_scene_json_free(&s);
        loaded++;
    }
    closedir(d);
    // The issue asks for at least four scenes: box on plane, incline, peg in hole, stack.
    assert_true(loaded >= 4);
}

static void missing_file(void **state) {
    (void)state;
    cs_scene s;
    char err[256] = "";
    assert_int_equal(cd_scene_json_load("/nonexistent/scene.json", cs_scene_validate,
                                        &s, err, sizeof err), -ENOENT);
    assert_non_null(strstr(err, "/nonexistent/scene.json: "));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_camel_case),
        cmocka_unit_test(parses_snake_case),
        cmocka_unit_test(defaults),
        cmocka_unit_test(errors_name_the_path),
        cmocka_unit_test(writer_output_reads_back),
        cmocka_unit_test(kinematic_reads_and_writes),
        cmocka_unit_test(writer_spells_non_finite_values),
        cmocka_unit_test(every_data_file_loads),
        cmocka_unit_test(missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
