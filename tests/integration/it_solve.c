/* SPDX-License-Identifier: MIT */
/* End to end: the box resting on a plane, sent over the Unix socket and over TCP with the client
 * library and with `contactctl send`, comes back with status OK, normal forces summing to m g,
 * the same forces as an in-process solve, and a consistent timing record; the Welcome carries the
 * granted limits, rate and budget; Stats count what happened; a ball joint's and a hinge's
 * forces come back; a kinematic probe pushes the box.
 * Arguments: the contactd and contactctl executables. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "wire/scene_json.h"
#include "solver/contact.h"
#include "testlib.h"

static const char *contactd_path, *contactctl_path;
static it_daemon d;
static cs_scene box;
static double mg;            /* the box's weight, N */
static double local_force[3 * 4]; /* in-process answer, world forces per contact */

static int setup(void **state) {
    (void)state;
    it_scene_load("box_on_plane.json", &box);
    mg = it_scene_weight(&box);
    // The reference: libcontact in this process, cold, as a new session's first frame is.
    const cs_limits lim = {.max_bodies = 1, .max_contacts = 4, .max_dirs = 8};
    cs_workspace *ws = cs_workspace_new(&lim);
    void *mem = aligned_alloc(64, (cs_result_size(&lim) + 63) / 64 * 64);
    cs_result res;
    cs_result_init(&res, mem, &lim);
    const cs_options opt = {.solver = CS_SOLVER_LEMKE};
    if (!ws || !mem || cs_step(ws, &box, &opt, NULL, &res) != CS_CONVERGED || res.nc != 4) {
        return -1;
    }
    memcpy(local_force, res.force, sizeof local_force);
    cs_workspace_free(ws);
    free(mem);
    return it_daemon_start(&d, contactd_path, NULL, 0);
}

static int teardown(void **state) {
    (void)state;
    it_daemon_cleanup(&d);
    cd_scene_json_free(&box);
    return 0;
}

static void check_result(const Contactd__V1__Result *r, uint64_t seq) {
    assert_int_equal(r->seq, seq);
    assert_int_equal(r->status, CONTACTD__V1__STATUS__STATUS_OK);
    assert_true(r->tick > 0);
    assert_int_equal(r->n_contacts, 4);
    assert_near(it_normal_force_sum(r, &box), mg, 1e-6 * mg);
    // Same scene, same solver, both cold: the daemon answers what libcontact answers.
    for (int i = 0; i < 4; i++) {
        assert_int_equal(r->contacts[i]->id, box.contacts[i].id);
        assert_near(r->contacts[i]->force->x, local_force[3 * i + 0], 1e-9 * mg);
        assert_near(r->contacts[i]->force->y, local_force[3 * i + 1], 1e-9 * mg);
        assert_near(r->contacts[i]->force->z, local_force[3 * i + 2], 1e-9 * mg);
    }
    it_assert_timing(r->timing);
}

static void box_over(bool tcp) {
    const cdc_hello hello = {.client_name = "it_solve",
                             .limits = {.max_bodies = 1, .max_contacts = 4, .max_dirs = 8}};
    cdc_conn *c = it_session_open(&d, tcp, &hello);
    const Contactd__V1__Welcome *w = cdc_wire_welcome(c);
    assert_int_equal(w->protocol_version, 1);
    assert_true(w->session_id > 0);
    assert_string_equal(w->default_solver_name, "lemke");
    assert_int_equal(w->rate_hz, 1000);
    assert_int_equal(w->deadline_ns, 800000); /* 80 % of the 1 ms period */
    assert_non_null(w->limits);
    assert_int_equal(w->limits->max_bodies, 1);
    assert_int_equal(w->limits->max_contacts, 4);
    assert_int_equal(w->limits->max_friction_directions, 8);
    assert_int_equal(w->limits->max_joints, 0); // joints are declared, not defaulted

    // A loaded machine may make the cold session's frame miss its deadline: then it is labelled
    // (no certified answer yet, so no forces), the session stays cold, and the frame is sent
    // again, a few times at most.
    uint64_t seq = tcp ? 1007 : 7;
    Contactd__V1__ServerMessage *m = it_frame_exchange(c, &box, seq);
    for (int retry = 0; retry < 5 && m->result->status != CONTACTD__V1__STATUS__STATUS_OK;
         retry++) {
        it_assert_timing(m->result->timing);
        assert_false(m->result->timing->deadline_met);
        cdc_wire_free(m);
        m = it_frame_exchange(c, &box, ++seq);
    }
    check_result(m->result, box.seq);
    cdc_wire_free(m);
    cdc_conn_close(c);
}

/* Sends s as frame seq and returns the Result; a frame that missed its deadline (a labelled
 * miss, the only reason an answer may fail here) is sent again, up to five times. */
static Contactd__V1__ServerMessage *exchange_ok(cdc_conn *c, cs_scene *s, uint64_t seq) {
    Contactd__V1__ServerMessage *m = it_frame_exchange(c, s, seq);
    for (int retry = 0; retry < 5 && m->result->status != CONTACTD__V1__STATUS__STATUS_OK;
         retry++) {
        assert_false(m->result->timing->deadline_met);
        cdc_wire_free(m);
        m = it_frame_exchange(c, s, ++seq);
    }
    return m;
}

/* Every solver this build has, chosen by name in the Hello: the daemon runs that one (its name
 * in the Welcome and in each Result's stats) and answers what libcontact's cold step with it
 * answers, the weight carried by the rigid ones. */
static void every_solver_by_name(void **state) {
    (void)state;
    const cs_limits lim = {.max_bodies = 1, .max_contacts = 4, .max_dirs = 8};
    cs_workspace *ws = cs_workspace_new(&lim);
    void *mem = aligned_alloc(64, (cs_result_size(&lim) + 63) / 64 * 64);
    assert_non_null(ws);
    assert_non_null(mem);
    cs_result res;
    cs_result_init(&res, mem, &lim);
    int solvers = 0;
    for (int k = 1; k < CS_SOLVER_COUNT; k++) {
        if (!cs_solver_is_available((cs_solver)k))
            continue;
        const char *name = cs_solver_name((cs_solver)k);
        const cs_options opt = {.solver = (cs_solver)k};
        assert_int_equal(cs_step(ws, &box, &opt, NULL, &res), CS_CONVERGED);
        const cdc_hello hello = {.client_name = "it_solve", .solver_name = name,
                                 .limits = {.max_bodies = 1, .max_contacts = 4, .max_dirs = 8}};
        cdc_conn *c = it_session_open(&d, false, &hello);
        assert_string_equal(cdc_wire_welcome(c)->default_solver_name, name);
        Contactd__V1__ServerMessage *m = exchange_ok(c, &box, 1);
        const Contactd__V1__Result *r = m->result;
        assert_int_equal(r->status, CONTACTD__V1__STATUS__STATUS_OK);
        assert_string_equal(r->stats->solver, name);
        assert_int_equal(r->n_contacts, 4);
        // SAP's compliant contact takes up 98 % of the weight in this first step.
        if (k != CS_SOLVER_SAP)
            assert_near(it_normal_force_sum(r, &box), mg, 1e-6 * mg);
        for (int i = 0; i < 4; i++) {
            assert_near(r->contacts[i]->force->x, res.force[3 * i + 0], 1e-9 * mg);
            assert_near(r->contacts[i]->force->y, res.force[3 * i + 1], 1e-9 * mg);
            assert_near(r->contacts[i]->force->z, res.force[3 * i + 2], 1e-9 * mg);
        }
        cdc_wire_free(m);
        cdc_conn_close(c);
        solvers++;
    }
    print_message("# %d solvers by name\n", solvers);
    assert_int_equal(solvers, CS_SOLVER_COUNT - 1);
    free(mem);
    cs_workspace_free(ws);
}

/* The box hangs from a ball joint to the world above its centre: with `dantzig`, which takes
 * joints, the Result's JointForce holds its weight up; then from a hinge about x, pushed by a
 * torque about y that the hinge must hold (torque -tau about the anchor, no force beyond the
 * weight). A `sap` session takes the same hinge as rows of its own problem, to its near-rigid
 * compliance (sap.h: 2.5e-6 of the load for one body, 1e-4 allowed); a hinge with a zero axis
 * gets an Error naming the field, and the session goes on. */
static void joint_forces_come_back(void **state) {
    (void)state;
    cs_scene s = box;
    cs_joint j = {.id = 5, .body_a = box.bodies[0].id, .kind = CS_JOINT_BALL,
                  .anchor = {box.bodies[0].pos[0], box.bodies[0].pos[1],
                             box.bodies[0].pos[2] + 0.5}};
    s.nc = 0;
    s.nj = 1;
    s.joints = &j;
    const cdc_hello hello = {.client_name = "it_solve", .solver_name = "dantzig",
                             .limits = {.max_bodies = 1, .max_contacts = 4, .max_joints = 1,
                                        .max_dirs = 8}};
    cdc_conn *c = it_session_open(&d, false, &hello);
    assert_int_equal(cdc_wire_welcome(c)->limits->max_joints, 1);
    Contactd__V1__ServerMessage *m = exchange_ok(c, &s, 40);
    const Contactd__V1__Result *r = m->result;
    assert_int_equal(r->status, CONTACTD__V1__STATUS__STATUS_OK);
    assert_int_equal(r->n_joints, 1);
    assert_int_equal(r->joints[0]->id, 5);
    assert_near(r->joints[0]->force->z, mg, 1e-9 * mg);
    assert_near(r->joints[0]->force->x, 0, 1e-9 * mg);
    assert_true(r->residuals->joint <= 1e-12);
    cdc_wire_free(m);

    // The hinge: a new joint id, so its frames are captured at this pose.
    cs_body hb = box.bodies[0];
    hb.tau[1] = 0.7;
    s.bodies = &hb;
    j = (cs_joint){.id = 6, .body_a = hb.id, .kind = CS_JOINT_HINGE, .axis = {1, 0, 0},
                   .anchor = {hb.pos[0], hb.pos[1], hb.pos[2] + 0.5}};
    m = exchange_ok(c, &s, 60);
    r = m->result;
    assert_int_equal(r->status, CONTACTD__V1__STATUS__STATUS_OK);
    assert_int_equal(r->joints[0]->id, 6);
    assert_near(r->joints[0]->force->z, mg, 1e-9 * mg);
    assert_near(r->joints[0]->force->x, 0, 1e-9 * mg);
    assert_near(r->joints[0]->torque->y, -0.7, 1e-9);
    assert_near(r->joints[0]->torque->x, 0, 1e-12);
    assert_true(r->residuals->joint <= 1e-12);
    cdc_wire_free(m);
    cdc_conn_close(c);

    const cdc_hello sap = {.client_name = "it_solve", .solver_name = "sap",
                           .limits = hello.limits};
    c = it_session_open(&d, false, &sap);
    m = exchange_ok(c, &s, 50);
    r = m->result;
    assert_int_equal(r->status, CONTACTD__V1__STATUS__STATUS_OK);
    assert_int_equal(r->joints[0]->id, 6);
    assert_near(r->joints[0]->force->z, mg, 1e-4 * mg);
    assert_near(r->joints[0]->force->x, 0, 1e-4 * mg);
    assert_near(r->joints[0]->torque->y, -0.7, 1e-4 * 0.7);
    assert_true(r->residuals->joint <= 1e-4 * 9.81e-3);
    cdc_wire_free(m);
    j.axis[0] = 0;
    s.seq = 70;
    assert_int_equal(cdc_wire_frame_send(c, &s), 0);
    m = it_session_recv(c, CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR);
    assert_int_equal(m->error->code, CONTACTD__V1__ERROR_CODE__ERROR_INVALID);
    assert_string_equal(m->error->message, "joints[0].axis: not unit length (|a| = 0)");
    cdc_wire_free(m);
    // The session goes on: the box on its plane, no joint.
    m = it_frame_exchange(c, &box, 71);
    assert_int_equal(m->result->n_contacts, 4);
    cdc_wire_free(m);
    cdc_conn_close(c);
}

/* A kinematic probe (its velocity prescribed, no mass) pushes the box over its plane at V along
 * x, at the centre of its left face with a frictionless tip: the daemon's answer (lemke) moves
 * the box with the probe, the probe pushes with m V / dt plus the floor's sliding friction
 * mu m g, and the probe's velocity comes back as it was sent. A probe sent with a mass gets an
 * Error naming the field, and the session goes on. */
static void kinematic_probe_pushes(void **state) {
    (void)state;
    const double V = 0.05, mu = box.contacts[0].mu, m = box.bodies[0].mass;
    const double *c = box.bodies[0].pos, half = c[2];
    cs_body bodies[2] = {box.bodies[0],
                         {.id = 2, .kinematic = true, .pos = {c[0] - 2 * half, c[1], c[2]},
                          .quat = {1, 0, 0, 0}, .v = {V, 0, 0}}};
    cs_contact contacts[5];
    memcpy(contacts, box.contacts, 4 * sizeof *contacts);
    contacts[4] = (cs_contact){.id = 5, .body_a = bodies[0].id, .body_b = 2,
                               .point = {c[0] - half, c[1], c[2]}, .normal = {1, 0, 0}};
    cs_scene s = box;
    s.nb = 2, s.nc = 5, s.bodies = bodies, s.contacts = contacts;
    const cdc_hello hello = {.client_name = "it_solve",
                             .limits = {.max_bodies = 2, .max_contacts = 5, .max_dirs = 8}};
    cdc_conn *conn = it_session_open(&d, false, &hello);
    Contactd__V1__ServerMessage *msg = exchange_ok(conn, &s, 60);
    const Contactd__V1__Result *r = msg->result;
    assert_int_equal(r->status, CONTACTD__V1__STATUS__STATUS_OK);
    assert_int_equal(r->n_contacts, 5);
    assert_int_equal(r->contacts[4]->id, 5);
    const double push = m * V / s.dt - mu * m * box.gravity[2];
    assert_near(r->contacts[4]->force->x, push, 1e-9 * push);
    assert_int_equal(r->n_bodies, 2);
    assert_int_equal(r->bodies[0]->id, bodies[0].id);
    assert_near(r->bodies[0]->linear_velocity->x, V, 1e-12);
    assert_near(r->bodies[0]->linear_velocity->z, 0, 1e-12);
    assert_int_equal(r->bodies[1]->id, 2);
    assert_true(r->bodies[1]->linear_velocity->x == V);
    assert_true(r->bodies[1]->linear_velocity->y == 0 && r->bodies[1]->linear_velocity->z == 0);
    cdc_wire_free(msg);

    bodies[1].mass = 1;
    s.seq = 70;
    assert_int_equal(cdc_wire_frame_send(conn, &s), 0);
    msg = it_session_recv(conn, CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR);
    assert_int_equal(msg->error->code, CONTACTD__V1__ERROR_CODE__ERROR_INVALID);
    assert_string_equal(msg->error->message, "bodies[1].mass: a kinematic body has no mass "
                                             "(its velocity is prescribed)");
    cdc_wire_free(msg);
    msg = it_frame_exchange(conn, &box, 71);
    assert_int_equal(msg->result->n_contacts, 4);
    cdc_wire_free(msg);
    cdc_conn_close(conn);
}

static void box_over_unix(void **state) {
    (void)state;
    box_over(false);
}

static void box_over_tcp(void **state) {
    (void)state;
    box_over(true);
}

static void limits_are_lowered_to_the_config(void **state) {
    (void)state;
    const cdc_hello hello = {.limits = {.max_bodies = 1000000, .max_contacts = 1000000,
                                        .max_dirs = 1000}};
    cdc_conn *c = it_session_open(&d, false, &hello);
    const Contactd__V1__Welcome *w = cdc_wire_welcome(c);
    assert_int_equal(w->limits->max_bodies, 64);
    assert_int_equal(w->limits->max_contacts, 256);
    assert_int_equal(w->limits->max_friction_directions, 16);
    assert_int_equal(w->limits->max_message_bytes, 262144);
    cdc_conn_close(c);
}

static void stats_count_the_frames(void **state) {
    (void)state;
    cdc_conn *c = it_session_open(&d, true, NULL);
    Contactd__V1__ServerMessage *m = it_stats_fetch(c);
    const Contactd__V1__Stats *st = m->stats;
    // The two box frames above were received and solved; this session is open.
    assert_true(st->frames_received >= 2);
    assert_true(st->frames_solved >= 2);
    assert_true(st->ticks > 0);
    assert_true(st->sessions >= 1);
    assert_true(st->solve_ns_max > 0);
    assert_true(st->solve_ns_sum >= st->solve_ns_max);
    cdc_wire_free(m);
    cdc_conn_close(c);
}

// Runs `contactctl send` (a 10 ms budget) once and parses its JSON Result; *ret_exit is its exit
// status. Fails the test when it printed no JSON.
static cJSON *contactctl_send_once(const char *how, const char *where, int *ret_exit) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s send %s %s %s --budget 10000 --json", contactctl_path,
             t_data_path("box_on_plane.json"), how, where);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    static char out[1 << 16];
    const size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    *ret_exit = pclose(p);
    cJSON *j = cJSON_Parse(out);
    if (!j) {
        fail_msg("contactctl printed no JSON: %s", out);
    }
    return j;
}

// Runs `contactctl send` against the daemon and checks its JSON Result like check_result. A
// fresh session's only frame may miss its deadline on a loaded machine (then it has no answer
// yet, labelled as such, and contactctl exits 1): that is retried, a few times at most.
static void contactctl_send(const char *how, const char *where) {
    int exit_status = -1;
    cJSON *j = NULL;
    for (int attempt = 0; attempt < 5 && exit_status != 0; attempt++) {
        cJSON_Delete(j);
        j = contactctl_send_once(how, where, &exit_status);
        if (exit_status != 0) {
            const cJSON *t = cJSON_GetObjectItem(j, "timing");
            assert_false(cJSON_IsTrue(cJSON_GetObjectItem(t, "deadlineMet")));
            assert_string_not_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "status")),
                                    "STATUS_OK");
        }
    }
    assert_int_equal(exit_status, 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "status")), "STATUS_OK");
    const cJSON *contacts = cJSON_GetObjectItem(j, "contacts");
    assert_int_equal(cJSON_GetArraySize(contacts), 4);
    double sum = 0.0;
    for (int i = 0; i < 4; i++) {
        const cJSON *f = cJSON_GetObjectItem(cJSON_GetArrayItem(contacts, i), "force");
        const double v[3] = {cJSON_GetNumberValue(cJSON_GetObjectItem(f, "x")),
                             cJSON_GetNumberValue(cJSON_GetObjectItem(f, "y")),
                             cJSON_GetNumberValue(cJSON_GetObjectItem(f, "z"))};
        for (int k = 0; k < 3; k++) {
            assert_near(v[k], local_force[3 * i + k], 1e-9 * mg);
            sum += v[k] * box.contacts[i].normal[k];
        }
    }
    assert_near(sum, mg, 1e-6 * mg);
    cJSON_Delete(j);
}

static void contactctl_send_over_unix(void **state) {
    (void)state;
    contactctl_send("--socket", d.socket);
}

static void contactctl_send_over_tcp(void **state) {
    (void)state;
    contactctl_send("--tcp", d.tcp);
}

int main(int argc, char **argv) {
    if (it_args(argc, argv, true, &contactd_path, &contactctl_path) < 0) {
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(box_over_unix),
        cmocka_unit_test(box_over_tcp),
        cmocka_unit_test(every_solver_by_name),
        cmocka_unit_test(limits_are_lowered_to_the_config),
        cmocka_unit_test(stats_count_the_frames),
        cmocka_unit_test(joint_forces_come_back),
        cmocka_unit_test(kinematic_probe_pushes),
        cmocka_unit_test(contactctl_send_over_unix),
        cmocka_unit_test(contactctl_send_over_tcp),
        IT_SIGTERM_TEST(&d),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
