/* SPDX-License-Identifier: MIT */
/* codec: a scene survives scene -> Frame -> bytes -> Frame -> scene exactly; bad frames are
 * refused with a message naming the field; results carry ids, forces, statuses and timing; and
 * the holders refuse what they were not sized for. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#include "io/ingest.h"
#include "solver/contact.h"
#include "wire/codec.h"
#include "wire/framing.h"

enum { NB = 2, NC = 3, NJ = 2 };
static const cs_limits lim = {.max_bodies = NB, .max_contacts = NC, .max_dirs = 16};
static const cs_limits lim_joints = {
    .max_bodies = NB, .max_contacts = NC, .max_joints = NJ, .max_dirs = 16};

// Two stacked boxes, the lower one rotated about z; three contacts with distinct values.
static void make_scene(cs_scene *s, cs_body *b, cs_contact *c) {
    const double h = sqrt(0.5); // quaternion of a 90-degree turn about z
    b[0] = (cs_body){.id = 7, .mass = 2.5, .inertia = {0.02, 0.001, 0, 0.001, 0.03, 0, 0, 0, 0.04},
                     .pos = {0.1, -0.2, 0.1}, .quat = {h, 0, 0, h}, .v = {0.01, 0.02, -0.03},
                     .w = {0.1, -0.2, 0.3}, .f = {1.5, 0, -2}, .tau = {0, 0.25, 0}};
    b[1] = (cs_body){.id = 9, .mass = 1.0, .inertia = {0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01},
                     .pos = {0.1, -0.2, 0.3}, .quat = {1, 0, 0, 0}};
    c[0] = (cs_contact){.id = UINT64_C(1) << 40, .body_a = 7, .body_b = 0, .point = {0, 0, 0},
                        .normal = {0, 0, 1}, .distance = -1e-4, .mu = 0.5};
    c[1] = (cs_contact){.id = 2, .body_a = 9, .body_b = 7, .point = {0.1, -0.2, 0.2},
                        .normal = {0, 0, 1}, .distance = 0.0, .mu = 0.3, .stiffness = 1e5,
                        .dissipation = 0.01};
    c[2] = (cs_contact){.id = UINT64_MAX, .body_a = 7, .body_b = 0, .point = {0.2, 0, 0},
                        .normal = {0.6, 0, 0.8}, .distance = 0.002, .mu = 0.0};
    *s = (cs_scene){.seq = 42, .dt = 0.001, .gravity = {0, 0, -9.81}, .friction_dirs = 6,
                    .penetration_recovery = 0.3,
                    .solver = CS_SOLVER_DANTZIG, .nb = NB, .nc = NC, .bodies = b, .contacts = c};
}

// Encodes s, decodes the bytes with protobuf-c and hands back the decoded envelope.
static Contactd__V1__ClientMessage *wire_copy(const cs_scene *s) {
    cd_frame_msg fm;
    assert_int_equal(cd_codec_frame_msg_init(&fm, &lim), 0);
    const Contactd__V1__ClientMessage *env = cd_codec_frame_build(&fm, s);
    assert_non_null(env);
    uint8_t buf[4096];
    size_t len = 0;
    assert_int_equal(cd_codec_pack(&env->base, buf, sizeof buf, &len), 0);
    assert_int_equal(len, cd_codec_packed_size(&env->base));
    cd_codec_frame_msg_fini(&fm);
    uint64_t body;
    const int k = cd_varint_decode(buf, len, &body);
    assert_true(k > 0);
    assert_int_equal((size_t)k + body, len);
    Contactd__V1__ClientMessage *m = contactd__v1__client_message__unpack(NULL, body, buf + k);
    assert_non_null(m);
    assert_int_equal(m->msg_case, CONTACTD__V1__CLIENT_MESSAGE__MSG_FRAME);
    return m;
}

// The test scene (make_scene) as a decoded wire message, freed with free_unpacked.
static Contactd__V1__ClientMessage *scene_message(void) {
    cs_scene s;
    cs_body b[NB];
    cs_contact c[NC];
    make_scene(&s, b, c);
    return wire_copy(&s);
}

static void scene_round_trip(void **state) {
    (void)state;
    cs_scene s;
    cs_body b[NB];
    cs_contact c[NC];
    make_scene(&s, b, c);
    Contactd__V1__ClientMessage *m = wire_copy(&s);

    cs_body b2[NB];
    cs_contact c2[NC];
    cs_scene out = {.bodies = b2, .contacts = c2};
    char err[256] = "";
    assert_int_equal(
        cd_ingest_frame(m->frame, &lim, CS_SOLVER_DEFAULT, &out, err, sizeof err), 0);
    assert_int_equal(out.seq, 42);
    assert_true(out.dt == s.dt);
    assert_memory_equal(out.gravity, s.gravity, sizeof s.gravity);
    assert_int_equal(out.friction_dirs, 6);
    assert_int_equal(out.solver, CS_SOLVER_DANTZIG);
    assert_int_equal(out.nb, NB);
    assert_int_equal(out.nc, NC);
    // Doubles travel as 64-bit IEEE values: the copy is bit for bit. (Field by field: the
    // structs' padding bytes carry no data.)
    for (int i = 0; i < NB; i++) {
        assert_int_equal(b2[i].id, b[i].id);
        assert_true(b2[i].mass == b[i].mass);
        assert_memory_equal(b2[i].inertia, b[i].inertia, sizeof b[i].inertia);
        assert_memory_equal(b2[i].pos, b[i].pos, sizeof b[i].pos);
        assert_memory_equal(b2[i].quat, b[i].quat, sizeof b[i].quat);
        assert_memory_equal(b2[i].v, b[i].v, sizeof b[i].v);
        assert_memory_equal(b2[i].w, b[i].w, sizeof b[i].w);
        assert_memory_equal(b2[i].f, b[i].f, sizeof b[i].f);
        assert_memory_equal(b2[i].tau, b[i].tau, sizeof b[i].tau);
    }
    for (int i = 0; i < NC; i++) {
        assert_true(c2[i].id == c[i].id);
        assert_int_equal(c2[i].body_a, c[i].body_a);
        assert_int_equal(c2[i].body_b, c[i].body_b);
        assert_memory_equal(c2[i].point, c[i].point, sizeof c[i].point);
        assert_memory_equal(c2[i].normal, c[i].normal, sizeof c[i].normal);
        assert_true(c2[i].distance == c[i].distance && c2[i].mu == c[i].mu);
        assert_true(c2[i].stiffness == c[i].stiffness);
        assert_true(c2[i].dissipation == c[i].dissipation);
    }
    contactd__v1__client_message__free_unpacked(m, NULL);
}

/* A ball joint survives the wire exactly, for a solver that takes joints. */
static void joint_round_trip(void **state) {
    (void)state;
    cs_scene s;
    cs_body b[NB];
    cs_contact c[NC];
    make_scene(&s, b, c);
    cs_joint j = {.id = 77, .body_a = 9, .body_b = 7, .kind = CS_JOINT_BALL,
                  .anchor = {0.1, -0.2, 0.2}, .axis = {0, 0.6, 0.8}};
    s.nj = 1;
    s.joints = &j;
    cd_frame_msg fm;
    assert_int_equal(cd_codec_frame_msg_init(&fm, &lim_joints), 0);
    const Contactd__V1__ClientMessage *env = cd_codec_frame_build(&fm, &s);
    assert_non_null(env);
    uint8_t buf[4096];
    size_t len = 0;
    assert_int_equal(cd_codec_pack(&env->base, buf, sizeof buf, &len), 0);
    cd_codec_frame_msg_fini(&fm);
    uint64_t body;
    const int k = cd_varint_decode(buf, len, &body);
    Contactd__V1__ClientMessage *m = contactd__v1__client_message__unpack(NULL, body, buf + k);
    assert_non_null(m);
    cs_body b2[NB];
    cs_contact c2[NC];
    cs_joint j2[NJ];
    cs_scene out = {.bodies = b2, .contacts = c2, .joints = j2};
    char err[256] = "";
    assert_int_equal(cd_ingest_frame(m->frame, &lim_joints, CS_SOLVER_DEFAULT, &out,
                                               err, sizeof err),
                     0);
    assert_int_equal(out.nj, 1);
    assert_int_equal(j2[0].id, 77);
    assert_int_equal(j2[0].body_a, 9);
    assert_int_equal(j2[0].body_b, 7);
    assert_int_equal(j2[0].kind, CS_JOINT_BALL);
    assert_memory_equal(j2[0].anchor, j.anchor, sizeof j.anchor);
    assert_memory_equal(j2[0].axis, j.axis, sizeof j.axis);
    contactd__v1__client_message__free_unpacked(m, NULL);
}

/* A kinematic body travels as its flag and velocity, with no mass and no inertia on the wire, and
 * comes back kinematic, its velocity bit for bit. */
static void kinematic_round_trip(void **state) {
    (void)state;
    cs_scene s;
    cs_body b[NB];
    cs_contact c[NC];
    make_scene(&s, b, c);
    b[1] = (cs_body){.id = 9, .kinematic = true, .pos = {0.1, -0.2, 0.3}, .quat = {1, 0, 0, 0},
                     .v = {0, 0, -0.05}, .w = {0.5, 0, 0}};
    Contactd__V1__ClientMessage *m = wire_copy(&s);
    assert_true(m->frame->bodies[1]->kinematic);
    assert_int_equal(m->frame->bodies[1]->n_inertia, 0);
    assert_false(m->frame->bodies[0]->kinematic);
    assert_int_equal(m->frame->bodies[0]->n_inertia, 9);
    cs_body b2[NB];
    cs_contact c2[NC];
    cs_scene out = {.bodies = b2, .contacts = c2};
    char err[256] = "";
    assert_int_equal(
        cd_ingest_frame(m->frame, &lim, CS_SOLVER_DEFAULT, &out, err, sizeof err), 0);
    assert_true(b2[1].kinematic);
    assert_false(b2[0].kinematic);
    assert_true(b2[1].mass == 0);
    for (int k = 0; k < 9; k++)
        assert_true(b2[1].inertia[k] == 0);
    assert_memory_equal(b2[1].v, b[1].v, sizeof b[1].v);
    assert_memory_equal(b2[1].w, b[1].w, sizeof b[1].w);
    assert_memory_equal(b2[0].inertia, b[0].inertia, sizeof b[0].inertia);
    contactd__v1__client_message__free_unpacked(m, NULL);
}

static void absent_fields_take_defaults(void **state) {
    (void)state;
    Contactd__V1__Body body = CONTACTD__V1__BODY__INIT;
    double inertia[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    body.id = 1;
    body.mass = 1.0;
    body.n_inertia = 9;
    body.inertia = inertia;
    Contactd__V1__Body *bodies[] = {&body};
    Contactd__V1__Vec3 up = CONTACTD__V1__VEC3__INIT;
    up.z = 1.0;
    Contactd__V1__Contact contact = CONTACTD__V1__CONTACT__INIT;
    contact.body_a = 1;
    contact.normal = &up;
    Contactd__V1__Contact *contacts[] = {&contact};
    Contactd__V1__Frame f = CONTACTD__V1__FRAME__INIT;
    f.dt = 0.01;
    f.n_bodies = 1;
    f.bodies = bodies;
    f.n_contacts = 1;
    f.contacts = contacts;

    cs_body b;
    cs_contact c;
    memset(&b, 0x55, sizeof b);
    memset(&c, 0x55, sizeof c);
    cs_scene out = {.bodies = &b, .contacts = &c};
    char err[256] = "";
    assert_int_equal(
        cd_ingest_frame(&f, &lim, CS_SOLVER_DEFAULT, &out, err, sizeof err), 0);
    assert_int_equal(out.friction_dirs, CS_DIRS_DEFAULT);
    assert_int_equal(out.solver, CS_SOLVER_DEFAULT);
    const double zero3[3] = {0, 0, 0}, identity[4] = {1, 0, 0, 0};
    assert_memory_equal(out.gravity, zero3, sizeof zero3);
    assert_memory_equal(b.pos, zero3, sizeof zero3);
    assert_memory_equal(b.v, zero3, sizeof zero3);
    assert_memory_equal(b.w, zero3, sizeof zero3);
    assert_memory_equal(b.f, zero3, sizeof zero3);
    assert_memory_equal(b.tau, zero3, sizeof zero3);
    assert_memory_equal(b.quat, identity, sizeof identity);
    assert_memory_equal(c.point, zero3, sizeof zero3);
    assert_true(c.mu == 0.0 && c.distance == 0.0 && c.stiffness == 0.0 && c.body_b == 0);
}

// Decodes a fresh copy of the test scene, lets edit change it, converts it and checks that the
// conversion fails with status want and a message starting with prefix.
static void expect_error(void (*edit)(Contactd__V1__Frame *), const cs_limits *l, int want,
                         const char *prefix) {
    Contactd__V1__ClientMessage *m = scene_message();
    edit(m->frame);
    cs_body b2[NB];
    cs_contact c2[NC];
    cs_joint j2[NJ];
    cs_scene out = {.bodies = b2, .contacts = c2, .joints = j2};
    char err[256] = "";
    const int r = cd_ingest_frame(m->frame, l, CS_SOLVER_DEFAULT, &out, err, sizeof err);
    print_message("# error: %s\n", err);
    assert_int_equal(r, want);
    if (strncmp(err, prefix, strlen(prefix)) != 0) {
        fail_msg("message '%s' does not start with '%s'", err, prefix);
    }
    contactd__v1__client_message__free_unpacked(m, NULL);
}

static void nan_point(Contactd__V1__Frame *f) { f->contacts[1]->point->y = NAN; }
static void negative_mass(Contactd__V1__Frame *f) { f->bodies[1]->mass = -1.0; }
static void unknown_body(Contactd__V1__Frame *f) { f->contacts[2]->body_b = 99; }
// Finite but beyond physics (issue 16: a frame with dt = 1e300 once gave 4e285 N s, labelled OK).
static void huge_mass(Contactd__V1__Frame *f) { f->bodies[1]->mass = 1e300; }
static void fast_body(Contactd__V1__Frame *f) { f->bodies[0]->linear_velocity->x = 5e3; }
static void far_point(Contactd__V1__Frame *f) { f->contacts[1]->point->y = -2e4; }
static void sticky(Contactd__V1__Frame *f) { f->contacts[0]->friction = 1e6; }
static void short_normal(Contactd__V1__Frame *f) { f->contacts[0]->normal->z = 0.5; }
static void eight_inertia(Contactd__V1__Frame *f) { f->bodies[0]->n_inertia = 8; }
// Edits allocate what they attach: the decoded message is released with free_unpacked.
static Contactd__V1__Joint *add_joint(Contactd__V1__Frame *f, Contactd__V1__JointKind kind,
                                      uint32_t a, uint32_t b) {
    f->joints = malloc(sizeof *f->joints);
    Contactd__V1__Joint *j = malloc(sizeof *j);
    contactd__v1__joint__init(j);
    j->id = 5;
    j->kind = kind;
    j->body_a = a;
    j->body_b = b;
    f->joints[0] = j;
    f->n_joints = 1;
    return j;
}
static void joint(Contactd__V1__Frame *f) {
    add_joint(f, CONTACTD__V1__JOINT_KIND__JOINT_BALL, 7, 9);
}
static void joint_no_kind(Contactd__V1__Frame *f) {
    add_joint(f, CONTACTD__V1__JOINT_KIND__JOINT_UNSPECIFIED, 7, 9);
}
static void joint_hinge(Contactd__V1__Frame *f) {
    add_joint(f, CONTACTD__V1__JOINT_KIND__JOINT_HINGE, 7, 9);
}
static void joint_unknown_body(Contactd__V1__Frame *f) {
    add_joint(f, CONTACTD__V1__JOINT_KIND__JOINT_BALL, 7, 8);
}
static void joint_to_itself(Contactd__V1__Frame *f) {
    add_joint(f, CONTACTD__V1__JOINT_KIND__JOINT_BALL, 9, 9);
}
// Body index i made kinematic as a client would send it: flag set, no inertia, mass left as is.
static void make_kinematic(Contactd__V1__Frame *f, int i) {
    f->bodies[i]->kinematic = true;
    f->bodies[i]->n_inertia = 0;
}
static void kinematic_with_inertia(Contactd__V1__Frame *f) { f->bodies[1]->kinematic = true; }
static void kinematic_with_mass(Contactd__V1__Frame *f) { make_kinematic(f, 1); }
// Body 7 kinematic: contacts[0] joins it to the world.
static void kinematic_on_world(Contactd__V1__Frame *f) {
    make_kinematic(f, 0);
    f->bodies[0]->mass = 0;
}
// Body 9 kinematic and contacts[2] turned round (world as body_a): body_b is named.
static void world_on_kinematic(Contactd__V1__Frame *f) {
    make_kinematic(f, 1);
    f->bodies[1]->mass = 0;
    f->contacts[2]->body_a = 0;
    f->contacts[2]->body_b = 9;
}
static void many_dirs(Contactd__V1__Frame *f) { f->friction_directions = 4000000000u; }
static void no_edit(Contactd__V1__Frame *f) { (void)f; }

static void unknown_name(Contactd__V1__Frame *f) {
    f->solver_name = strdup("fast");
}

static void bad_enum(Contactd__V1__Frame *f) {
    f->solver = (Contactd__V1__Solver)77;
}

static void invalid_frames_name_the_field(void **state) {
    (void)state;
    expect_error(nan_point, &lim, CS_EINPUT, "contacts[1].point");
    expect_error(negative_mass, &lim, CS_EINPUT, "bodies[1].mass");
    expect_error(unknown_body, &lim, CS_EINPUT, "contacts[2].body_b");
    expect_error(huge_mass, &lim, CS_EINPUT,
                 "bodies[1].mass: 1e+300 is outside the physical range [1e-06, 1e+06] kg");
    expect_error(fast_body, &lim, CS_EINPUT,
                 "bodies[0].linear_velocity: length 5000 is beyond the physical range [0, 1000] "
                 "m/s");
    expect_error(far_point, &lim, CS_EINPUT, "contacts[1].point: length");
    expect_error(sticky, &lim, CS_EINPUT,
                 "contacts[0].friction: 1e+06 is outside the physical range [0, 100]");
    expect_error(short_normal, &lim, CS_EINPUT, "contacts[0].normal");
    expect_error(eight_inertia, &lim, CS_EINPUT, "bodies[0].inertia: expected 9 values, got 8");
    expect_error(joint, &lim, CS_ENOSPACE, "joints: 1 joints exceed the session limit of 0");
    expect_error(joint_no_kind, &lim_joints, CS_EINPUT, "joints[0].kind: unknown joint kind 0");
    expect_error(joint_hinge, &lim_joints, CS_EINPUT, "joints[0].axis: not unit length");
    expect_error(joint_unknown_body, &lim_joints, CS_EINPUT,
                 "joints[0].body_b: unknown body id 8");
    expect_error(joint_to_itself, &lim_joints, CS_EINPUT,
                 "joints[0].body_b: same body as body_a (9)");
    expect_error(unknown_name, &lim, CS_EINPUT,
                 "solver_name: unknown solver 'fast' (known: dantzig, lemke");
    expect_error(bad_enum, &lim, CS_EINPUT, "solver: unknown solver value 77");
    expect_error(kinematic_with_inertia, &lim, CS_EINPUT,
                 "bodies[1].inertia: a kinematic body has no mass (its velocity is prescribed)");
    expect_error(kinematic_with_mass, &lim, CS_EINPUT,
                 "bodies[1].mass: a kinematic body has no mass (its velocity is prescribed)");
    expect_error(kinematic_on_world, &lim, CS_EINPUT,
                 "contacts[0].body_a: body_a (7) and body_b (0) are each kinematic or the world");
    expect_error(world_on_kinematic, &lim, CS_EINPUT,
                 "contacts[2].body_b: body_a (0) and body_b (9) are each kinematic or the world");
    expect_error(many_dirs, &lim, CS_ENOSPACE,
                 "friction_directions: 4000000000 exceeds the session limit of 16");
}

// The wire's conversion alone: returns what cd_codec_scene_from_frame gives for the edited test
// scene, with its message in err, and the normal z of contact 0 as converted in *nz.
static int convert_only(void (*edit)(Contactd__V1__Frame *), char *err, size_t errlen,
                        double *nz) {
    Contactd__V1__ClientMessage *m = scene_message();
    edit(m->frame);
    cs_body b2[NB];
    cs_contact c2[NC];
    cs_joint j2[NJ];
    cs_scene out = {.bodies = b2, .contacts = c2, .joints = j2};
    err[0] = '\0';
    const int r = cd_codec_scene_from_frame(m->frame, &lim, CS_SOLVER_DEFAULT, &out, err, errlen);
    *nz = r == 0 ? out.contacts[0].normal[2] : NAN;
    contactd__v1__client_message__free_unpacked(m, NULL);
    return r;
}

/* The split between the wire and the solver: the conversion checks only what the wire can get
 * wrong (counts, names, the inertia count) and passes physics through untouched; validation
 * (cd_ingest_frame, above) refuses it. */
static void conversion_leaves_physics_to_validation(void **state) {
    (void)state;
    char err[256];
    double nz;
    assert_int_equal(convert_only(short_normal, err, sizeof err, &nz), 0);
    assert_near(nz, 0.5, 0);
    assert_int_equal(convert_only(negative_mass, err, sizeof err, &nz), 0);
    assert_int_equal(convert_only(unknown_body, err, sizeof err, &nz), 0);
    assert_int_equal(convert_only(eight_inertia, err, sizeof err, &nz), CS_EINPUT);
    assert_string_equal(err, "bodies[0].inertia: expected 9 values, got 8");
    assert_int_equal(convert_only(bad_enum, err, sizeof err, &nz), CS_EINPUT);
    assert_string_equal(err, "solver: unknown solver value 77");
    assert_int_equal(convert_only(many_dirs, err, sizeof err, &nz), CS_ENOSPACE);
    assert_int_equal(convert_only(joint, err, sizeof err, &nz), CS_ENOSPACE);
}

static void limits_name_count_and_limit(void **state) {
    (void)state;
    const cs_limits two_contacts = {.max_bodies = NB, .max_contacts = 2, .max_dirs = 16};
    expect_error(no_edit, &two_contacts, CS_ENOSPACE,
                 "contacts: 3 contacts exceed the session limit of 2");
    const cs_limits one_body = {.max_bodies = 1, .max_contacts = NC, .max_dirs = 16};
    expect_error(no_edit, &one_body, CS_ENOSPACE, "bodies: 2 bodies exceed the session limit of 1");
}

static cs_solver convert_choice(cs_solver e, const char *name, int *r, char *err, size_t errlen) {
    Contactd__V1__ClientMessage *m = scene_message();
    m->frame->solver = (Contactd__V1__Solver)e;
    m->frame->solver_name = strdup(name);
    cs_body b2[NB];
    cs_contact c2[NC];
    cs_scene out = {.bodies = b2, .contacts = c2};
    *r = cd_ingest_frame(m->frame, &lim, CS_SOLVER_DEFAULT, &out, err, errlen);
    contactd__v1__client_message__free_unpacked(m, NULL);
    return out.solver;
}

static void solver_name_wins_over_enum(void **state) {
    (void)state;
    char err[256] = "";
    int r;
    assert_int_equal(convert_choice(CS_SOLVER_DANTZIG, "", &r, err, sizeof err),
                     CS_SOLVER_DANTZIG);
    assert_int_equal(r, 0);
    // Find a solver this build lacks, to check it is refused by name and by enum.
    for (int k = CS_SOLVER_DEFAULT + 1; k < CS_SOLVER_COUNT; k++) {
        const cs_solver missing = (cs_solver)k;
        if (cs_solver_is_available(missing)) {
            assert_int_equal(convert_choice(CS_SOLVER_DEFAULT, cs_solver_name(missing), &r, err,
                                            sizeof err), missing);
            assert_int_equal(r, 0);
            continue;
        }
        // The name wins: an unavailable enum next to an available name is fine.
        assert_int_equal(convert_choice(missing, "dantzig", &r, err, sizeof err),
                         CS_SOLVER_DANTZIG);
        assert_int_equal(r, 0);
        (void)convert_choice(CS_SOLVER_DANTZIG, cs_solver_name(missing), &r, err, sizeof err);
        assert_int_equal(r, CS_EINPUT);
        assert_non_null(strstr(err, "solver_name: solver '"));
        assert_non_null(strstr(err, "not implemented in this build"));
        (void)convert_choice(missing, "", &r, err, sizeof err);
        assert_int_equal(r, CS_EINPUT);
        assert_int_equal(strncmp(err, "solver: ", 8), 0);
        assert_non_null(strstr(err, "not implemented in this build"));
    }
}

static void status_mapping(void **state) {
    (void)state;
    assert_int_equal(cd_codec_status(CS_CONVERGED), CONTACTD__V1__STATUS__STATUS_OK);
    assert_int_equal(cd_codec_status(CS_DEADLINE), CONTACTD__V1__STATUS__STATUS_DEADLINE);
    assert_int_equal(cd_codec_status(CS_MAXITER), CONTACTD__V1__STATUS__STATUS_FALLBACK);
    assert_int_equal(cd_codec_status(CS_FALLBACK), CONTACTD__V1__STATUS__STATUS_FALLBACK);
    const cs_status failures[] = {CS_RAY, CS_SINGULAR, CS_EINPUT, CS_ENOSPACE, CS_UNCERTIFIED};
    for (size_t i = 0; i < sizeof failures / sizeof failures[0]; i++) {
        assert_int_equal(cd_codec_status(failures[i]), CONTACTD__V1__STATUS__STATUS_FAILED);
    }
}

// A result for lim with recognisable numbers: force component k of contact i is 10 i + k + 1.
static void make_result(cs_result *r, void *mem, cs_status st) {
    cs_result_init(r, mem, &lim_joints);
    r->status = st;
    r->solver = CS_SOLVER_DANTZIG;
    r->seq = 42;
    r->nb = NB;
    r->nc = NC;
    for (int i = 0; i < NC; i++) {
        r->contact_id[i] = (UINT64_C(1) << 50) + (uint64_t)i;
        r->state[i] = (uint8_t)(CS_STATE_SEPARATE + i % 3);
        for (int k = 0; k < 3; k++) {
            r->force[3 * i + k] = 10.0 * i + k + 1;
            r->impulse[3 * i + k] = 0.001 * (10.0 * i + k + 1);
        }
    }
    for (int j = 0; j < NB; j++) {
        r->body_id[j] = 7u + 2u * (uint32_t)j;
        for (int k = 0; k < 6; k++) {
            r->v[6 * j + k] = 0.5 * j + 0.1 * k;
        }
    }
    r->nj = NJ;
    for (int j = 0; j < NJ; j++) {
        r->joint_id[j] = 100u + (uint32_t)j;
        for (int k = 0; k < 3; k++) {
            r->joint_force[3 * j + k] = -(10.0 * j + k + 1);
            r->joint_torque[3 * j + k] = 0.5 * (10.0 * j + k + 1);
        }
    }
    r->cert.joint = 3e-12;
    r->stats.pivots = 5;
    r->stats.iterations = 3;
    r->cert.complementarity = 1e-12;
    r->cert.momentum = 2e-12;
}

/* What a result holder is counted for (cd_codec_result_msg_bytes: Welcome.workspace_bytes and the
 * memory budget) covers the struct and every array its one allocation holds. */
static void result_holder_bytes_cover_its_arrays(void **state) {
    (void)state;
    const cs_limits lims[] = {lim_joints,
                              {.max_bodies = 64, .max_contacts = 256, .max_dirs = 16},
                              {.max_bodies = 1, .max_contacts = 0, .max_dirs = 4}};
    for (size_t k = 0; k < sizeof lims / sizeof lims[0]; k++) {
        cd_result_msg m;
        assert_int_equal(cd_codec_result_msg_init(&m, &lims[k]), 0);
        const char *mem = m.mem;
        const char *ends[] = {
            (const char *)(m.contact_ptrs + m.max_contacts),
            (const char *)(m.contacts + m.max_contacts),
            (const char *)(m.body_ptrs + m.max_bodies),
            (const char *)(m.bodies + m.max_bodies),
            (const char *)(m.joint_ptrs + m.max_joints),
            (const char *)(m.joints + m.max_joints),
            (const char *)(m.vecs + 2 * (m.max_contacts + m.max_bodies + m.max_joints))};
        size_t used = 0;
        for (size_t e = 0; e < sizeof ends / sizeof ends[0]; e++)
            used = (size_t)(ends[e] - mem) > used ? (size_t)(ends[e] - mem) : used;
        assert_true(sizeof m + used <= cd_codec_result_msg_bytes(&lims[k]));
        cd_codec_result_msg_fini(&m);
    }
    assert_int_equal(cd_codec_result_msg_bytes(&(cs_limits){.max_contacts = -1}), 0);
}

static void result_carries_everything(void **state) {
    (void)state;
    void *mem = malloc(cs_result_size(&lim_joints));
    cs_result r;
    make_result(&r, mem, CS_CONVERGED);
    cd_result_msg m;
    assert_int_equal(cd_codec_result_msg_init(&m, &lim_joints), 0);
    const cd_timing t = {.received_ns = 100, .solve_start_ns = 200, .solve_ns = 50,
                         .deadline_ns = 900, .sent_ns = 400, .deadline_met = true};
    const Contactd__V1__ServerMessage *env = cd_codec_result_build(&m, &r, &t, 1234, NULL);
    assert_non_null(env);

    // Through the bytes and back, as a client sees it.
    uint8_t buf[8192];
    size_t len;
    assert_int_equal(cd_codec_pack(&env->base, buf, sizeof buf, &len), 0);
    uint64_t body;
    const int k = cd_varint_decode(buf, len, &body);
    Contactd__V1__ServerMessage *back = contactd__v1__server_message__unpack(NULL, body, buf + k);
    assert_non_null(back);
    assert_int_equal(back->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT);
    const Contactd__V1__Result *res = back->result;
    assert_int_equal(res->seq, 42);
    assert_int_equal(res->tick, 1234);
    assert_int_equal(res->status, CONTACTD__V1__STATUS__STATUS_OK);
    assert_int_equal(res->n_contacts, NC);
    for (int i = 0; i < NC; i++) {
        const Contactd__V1__ContactForce *cf = res->contacts[i];
        assert_true(cf->id == (UINT64_C(1) << 50) + (uint64_t)i);
        assert_int_equal(cf->state, CS_STATE_SEPARATE + i % 3);
        assert_true(cf->force->x == 10.0 * i + 1 && cf->force->y == 10.0 * i + 2 &&
                    cf->force->z == 10.0 * i + 3);
        assert_true(cf->impulse->x == r.impulse[3 * i] && cf->impulse->z == r.impulse[3 * i + 2]);
    }
    assert_int_equal(res->n_bodies, NB);
    for (int j = 0; j < NB; j++) {
        assert_int_equal(res->bodies[j]->id, 7 + 2 * j);
        assert_true(res->bodies[j]->linear_velocity->y == r.v[6 * j + 1]);
        assert_true(res->bodies[j]->angular_velocity->z == r.v[6 * j + 5]);
    }
    assert_int_equal(res->n_joints, NJ);
    for (int j = 0; j < NJ; j++) {
        const Contactd__V1__JointForce *jf = res->joints[j];
        assert_int_equal(jf->id, 100 + j);
        assert_true(jf->force->x == -(10.0 * j + 1) && jf->force->z == -(10.0 * j + 3));
        assert_true(jf->torque->y == 0.5 * (10.0 * j + 2));
    }
    assert_true(res->residuals->joint == 3e-12);
    assert_string_equal(res->stats->solver, "dantzig");
    assert_int_equal(res->stats->pivots, 5);
    assert_int_equal(res->stats->iterations, 3);
    assert_true(res->residuals->complementarity == 1e-12 && res->residuals->momentum == 2e-12);
    assert_int_equal(res->timing->received_ns, 100);
    assert_int_equal(res->timing->solve_start_ns, 200);
    assert_int_equal(res->timing->solve_ns, 50);
    assert_int_equal(res->timing->deadline_ns, 900);
    assert_int_equal(res->timing->sent_ns, 400);
    assert_true(res->timing->deadline_met);
    assert_string_equal(res->detail, "");
    contactd__v1__server_message__free_unpacked(back, NULL);

    // Too small a buffer is refused whole.
    assert_int_equal(cd_codec_pack(&env->base, buf, cd_codec_packed_size(&env->base) - 1, &len),
                     -ENOBUFS);

    // A fallback keeps its forces; a failure sends zeros and no labels, with the reason.
    make_result(&r, mem, CS_FALLBACK);
    env = cd_codec_result_build(&m, &r, &t, 1235, "fell back");
    assert_int_equal(env->result->status, CONTACTD__V1__STATUS__STATUS_FALLBACK);
    assert_true(env->result->contacts[2]->force->z == 23.0);
    make_result(&r, mem, CS_RAY);
    env = cd_codec_result_build(&m, &r, NULL, 1236, "ray");
    assert_int_equal(env->result->status, CONTACTD__V1__STATUS__STATUS_FAILED);
    assert_string_equal(env->result->detail, "ray");
    assert_true(env->result->contacts[0]->id == UINT64_C(1) << 50);
    for (int i = 0; i < NC; i++) {
        const Contactd__V1__ContactForce *cf = env->result->contacts[i];
        assert_true(cf->force->x == 0 && cf->force->y == 0 && cf->force->z == 0);
        assert_true(cf->impulse->x == 0 && cf->impulse->y == 0 && cf->impulse->z == 0);
        assert_int_equal(cf->state, CONTACTD__V1__CONTACT_STATE__STATE_UNSPECIFIED);
    }
    assert_true(env->result->bodies[1]->linear_velocity->x == 0);
    for (int j = 0; j < NJ; j++) {
        const Contactd__V1__JointForce *jf = env->result->joints[j];
        assert_true(jf->force->x == 0 && jf->force->y == 0 && jf->force->z == 0);
        assert_true(jf->torque->x == 0 && jf->torque->y == 0 && jf->torque->z == 0);
    }
    assert_int_equal(env->result->timing->solve_ns, 0);

    // More contacts than the holder was sized for: refused, not overrun.
    r.nc = NC + 1;
    assert_null(cd_codec_result_build(&m, &r, &t, 1, NULL));
    r.nc = NC;
    r.nj = NJ + 1;
    assert_null(cd_codec_result_build(&m, &r, &t, 1, NULL));
    cd_codec_result_msg_fini(&m);
    cd_codec_result_msg_fini(&m); // idempotent
    free(mem);
}

static void frame_holder_refuses_oversize(void **state) {
    (void)state;
    cs_scene s;
    cs_body b[NB];
    cs_contact c[NC];
    make_scene(&s, b, c);
    const cs_limits small = {.max_bodies = NB, .max_contacts = NC - 1, .max_dirs = 8};
    cd_frame_msg fm;
    assert_int_equal(cd_codec_frame_msg_init(&fm, &small), 0);
    assert_null(cd_codec_frame_build(&fm, &s));
    s.nc = NC - 1;
    assert_non_null(cd_codec_frame_build(&fm, &s));
    cd_codec_frame_msg_fini(&fm);
    assert_null(cd_codec_frame_build(&fm, &s)); // no storage after fini
}

static void error_message(void **state) {
    (void)state;
    cd_error_msg e;
    char long_text[1000];
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    const Contactd__V1__ServerMessage *env =
        cd_codec_error_build(&e, CONTACTD__V1__ERROR_CODE__ERROR_INVALID, 17, "dt: bad");
    assert_int_equal(env->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR);
    assert_int_equal(env->error->code, CONTACTD__V1__ERROR_CODE__ERROR_INVALID);
    assert_int_equal(env->error->seq, 17);
    assert_string_equal(env->error->message, "dt: bad");
    env = cd_codec_error_build(&e, CONTACTD__V1__ERROR_CODE__ERROR_DECODE, 0, long_text);
    assert_int_equal(strlen(env->error->message), sizeof e.text - 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scene_round_trip),
        cmocka_unit_test(joint_round_trip),
        cmocka_unit_test(kinematic_round_trip),
        cmocka_unit_test(absent_fields_take_defaults),
        cmocka_unit_test(invalid_frames_name_the_field),
        cmocka_unit_test(conversion_leaves_physics_to_validation),
        cmocka_unit_test(limits_name_count_and_limit),
        cmocka_unit_test(solver_name_wins_over_enum),
        cmocka_unit_test(status_mapping),
        cmocka_unit_test(result_holder_bytes_cover_its_arrays),
        cmocka_unit_test(result_carries_everything),
        cmocka_unit_test(frame_holder_refuses_oversize),
        cmocka_unit_test(error_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
