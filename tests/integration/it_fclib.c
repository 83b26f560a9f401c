/* SPDX-License-Identifier: MIT */
/* End to end: the contactctl binary on FCLIB files (no daemon: `fclib` solves in-process).
 * `contactctl fclib FILE --json --write-solution OUT` prints every field with the values of the
 * problem, and the residual it prints is the one of the (v, r) it wrote, read back with
 * libfclib; `--solver ncp` solves a local-form file; a slightly asymmetric local W is solved with
 * a note, one far from symmetric is refused as a data error (exit 1); a missing file, a file that
 * is not FCLIB, ncp on a global-form file and an unwritable output are refused with a message
 * naming them and exit status 2.
 * Argument: the contactctl executable. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <fclib.h>

#include "fclib_io.h"
#include "solver/coulomb.h"
#include "testlib.h"

static const char *contactctl;
static char tmpdir[64];
static char out[1 << 16], err[1 << 14];

/* Runs `contactctl ARGS` (ARGS already quoted for the shell), capturing stdout and stderr into
 * out and err. Returns the exit status. */
static int run(const char *args) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' %s >'%s/out' 2>'%s/err'", contactctl, args, tmpdir, tmpdir);
    const int st = system(cmd);
    assert_true(st != -1 && WIFEXITED(st));
    const char *names[2] = {"out", "err"};
    char *bufs[2] = {out, err};
    const size_t lens[2] = {sizeof out, sizeof err};
    for (int k = 0; k < 2; k++) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s", tmpdir, names[k]);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        const size_t n = fread(bufs[k], 1, lens[k] - 1, f);
        bufs[k][n] = '\0';
        fclose(f);
    }
    return WEXITSTATUS(st);
}

static int setup(void **state) {
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/it_fclib.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void json_fields_and_written_solution(void **state) {
    (void)state;
    const char *in = t_shared_path("fclib/TwoRods/GFC3D_TwoRods1.hdf5");
    char args[1024], sol[128];
    snprintf(sol, sizeof sol, "%s/sol.hdf5", tmpdir);
    snprintf(args, sizeof args, "fclib '%s' --json --solver sap --write-solution '%s'", in, sol);
    const int st = run(args);
    if (st != 0) {
        fail_msg("exit %d: %s", st, err);
    }
    cJSON *j = cJSON_Parse(out);
    if (!j) {
        fail_msg("contactctl printed no JSON: %s", out);
    }
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "problem")),
                        "GFC3D_TwoRods1.hdf5");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "form")), "global");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "solver")), "sap");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "status")), "converged");
    // TwoRods: 3 contacts, 54 dofs (shared/fclib/README.md).
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(j, "contacts")), 3);
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(j, "dofs")), 54);
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "iterations")) >= 1);
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "solveNs")) > 0);
    const double residual = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "residual"));
    const double mom = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "residualMomentum"));
    const double coul = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "residualCoulomb"));
    assert_near(residual, mom + coul, 1e-15 * residual);
    cJSON_Delete(j);

    // The file holds the problem and the answer: its (v, r) give the printed residual.
    struct fclib_solution *s = fclib_read_solution(sol);
    assert_non_null(s);
    fclib_io_problem p;
    char why[512];
    if (fclib_io_load(sol, &p, why, sizeof why) < 0) {
        fail_msg("%s", why);
    }
    assert_int_equal(p.nc, 3);
    double *work = malloc((2 * (size_t)p.nv + 3 * (size_t)p.nc) * sizeof *work);
    assert_non_null(work);
    cs_coulomb_error e;
    cs_coulomb_global_residual(&p.g, s->v, s->r, work, work + 2 * p.nv, &e);
    assert_near(e.total, residual, 1e-15 * residual);
    assert_near(e.momentum, mom, 1e-15 * mom);
    free(work);
    fclib_io_free(&p);
    fclib_delete_solutions(s, 1);

    // The same output again: refused before solving, the file untouched.
    assert_int_equal(run(args), 2);
    assert_non_null(strstr(err, sol));
    assert_non_null(strstr(err, "exists"));
}

static void text_output_is_one_row(void **state) {
    (void)state;
    char args[1024];
    snprintf(args, sizeof args, "fclib '%s'", t_shared_path("fclib/LMGC_CubeH8/CubeH8.hdf5"));
    assert_int_equal(run(args), 0);
    assert_non_null(strstr(out, "residual"));
    const char *row = strchr(out, '\n');
    assert_non_null(row);
    assert_non_null(strstr(row, "CubeH8.hdf5"));
    assert_non_null(strstr(row, "global"));
    assert_non_null(strstr(row, "converged"));
}

/* ncp on a local file: the JSON names it, converged to Siconos' residual at rounding (the
 * BoxesStack1 W is symmetric), with the residual of eq. 15. */
// BoxesStack1 on its local form, by a solver of it, to the residual it promises there.
static void on_local_form(const char *solver, double residual) {
    char args[1024];
    snprintf(args, sizeof args, "fclib '%s' --solver %s --json",
             t_shared_path("fclib/BoxesStack/BoxesStack1-i100000-32.hdf5"), solver);
    const int st = run(args);
    if (st != 0) {
        fail_msg("exit %d: %s", st, err);
    }
    cJSON *j = cJSON_Parse(out);
    if (!j) {
        fail_msg("contactctl printed no JSON: %s", out);
    }
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "solver")), solver);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "form")), "local");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "status")), "converged");
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(j, "contacts")), 52);
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "residual")) < residual);
    if (strcmp(solver, "ncp") == 0)
        assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "residualNcp")) <= 1e-10);
    assert_string_equal(err, "");
    cJSON_Delete(j);
}

static void ncp_on_local_form(void **state) {
    (void)state;
    on_local_form("ncp", 1e-12);
}

// dantzig's friction is the 8-sided pyramid; on this stack nothing slides, so the pyramid's
// answer is the cone's.
static void dantzig_on_local_form(void **state) {
    (void)state;
    on_local_form("dantzig", 1e-12);
}

// A solve that would pivot for hours stops at --timeout, labelled: dantzig on KaplasTower's
// 1710 rows (no limit: still pivoting after 15 minutes), given 200 ms. How far it got in them
// is the machine's: not asserted.
static void timeout_bounds_the_solve(void **state) {
    (void)state;
    char args[1024];
    snprintf(args, sizeof args, "fclib '%s' --solver dantzig --timeout 200 --json",
             t_shared_path("fclib/KaplasTower/KaplasTower-i1061-4.hdf5"));
    assert_int_equal(run(args), 1);
    cJSON *j = cJSON_Parse(out);
    if (!j) {
        fail_msg("contactctl printed no JSON: %s", out);
    }
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "status")), "deadline");
    cJSON_Delete(j);
}

static void refusals(void **state) {
    (void)state;
    char args[1024];
    // Rover's W is 2e-5 from symmetric: solved as its symmetric part, with a note.
    const char *rover = t_shared_path("fclib/Rover/Rover4609.hdf5");
    snprintf(args, sizeof args, "fclib '%s' --json", rover);
    assert_int_equal(run(args), 0);
    assert_non_null(strstr(err, rover));
    assert_non_null(strstr(err, "note"));
    assert_non_null(strstr(err, "(W + W^T) / 2"));
    // One far from symmetric (W_10 = 0.01, W_01 = 0: 2.4e-3 of |W|_F): a data error, exit 3.
    static int wp[4] = {0, 2, 4, 5}, wi[5] = {0, 1, 0, 1, 2};
    static double wx[5] = {2, 0.01, 0, 2, 1};
    double q[3] = {-1, 0, 0}, mu = 0.5;
    struct fclib_matrix W = {.nzmax = 5, .m = 3, .n = 3, .p = wp, .i = wi, .x = wx, .nz = -1};
    struct fclib_local l = {.W = &W, .mu = &mu, .q = q, .spacedim = 3};
    char asym[128];
    snprintf(asym, sizeof asym, "%s/asymmetric.hdf5", tmpdir);
    assert_int_equal(fclib_write_local(&l, asym), 1);
    snprintf(args, sizeof args, "fclib '%s' --solver ncp", asym);
    assert_int_equal(run(args), 3);
    assert_non_null(strstr(err, asym));
    assert_non_null(strstr(err, "W is not symmetric"));
    assert_string_equal(out, "");
    // ncp takes the local form only.
    snprintf(args, sizeof args, "fclib '%s' --solver ncp",
             t_shared_path("fclib/LMGC_CubeH8/CubeH8.hdf5"));
    assert_int_equal(run(args), 2);
    assert_non_null(strstr(err, "local form"));
    // Missing file, not FCLIB (data errors, 3), missing output directory (usage, 2).
    snprintf(args, sizeof args, "fclib '%s/none.hdf5'", tmpdir);
    assert_int_equal(run(args), 3);
    assert_non_null(strstr(err, "none.hdf5: No such file or directory"));
    snprintf(args, sizeof args, "fclib '%s'", t_data_path("box_on_plane.json"));
    assert_int_equal(run(args), 3);
    assert_non_null(strstr(err, "box_on_plane.json: not an HDF5 file"));
    snprintf(args, sizeof args, "fclib '%s' --write-solution '%s/no/dir/sol.hdf5'",
             t_shared_path("fclib/LMGC_CubeH8/CubeH8.hdf5"), tmpdir);
    assert_int_equal(run(args), 2);
    assert_non_null(strstr(err, "/no/dir does not exist"));
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s CONTACTCTL\n", argv[0]);
        return 2;
    }
    contactctl = argv[1];
    t_require_shared("fclib");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_fields_and_written_solution),
        cmocka_unit_test(text_output_is_one_row),
        cmocka_unit_test(ncp_on_local_form),
        cmocka_unit_test(dantzig_on_local_form),
        cmocka_unit_test(timeout_bounds_the_solve),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
