/* SPDX-License-Identifier: MIT */
/* The frictional contact LCP of Lloyd 2005 (eq. 6), velocity level (eq. 2):
 *
 *     nu    = N^T v - bias          >= 0  perp  theta  >= 0   (non-penetration)
 *     sigma = D^T v + E lambda      >= 0  perp  phi    >= 0   (friction opposes slip)
 *     gamma = mu theta - E^T phi    >= 0  perp  lambda >= 0   (friction pyramid)
 *
 * with v = v* + M^-1 (N theta + D phi). N holds one Jacobian row per contact (the normal), D
 * holds d rows per contact (unit directions d_j = cos(2 pi j/d) t1 + sin(2 pi j/d) t2), E sums
 * a contact's d directions, and lambda is the sliding speed along the best pyramid direction.
 * Eliminating v gives w = M z + q with z = (theta, phi, lambda) of size n (2 + d):
 *
 *     M = [ N^T M^-1 N   N^T M^-1 D   0 ]      q = [ N^T v* - bias ]
 *         [ D^T M^-1 N   D^T M^-1 D   E ]          [ D^T v*        ]
 *         [ mu           -E^T         0 ]          [ 0             ]
 *
 * The blocks come from the 3x3-per-contact-pair Delassus operator W (normal, t1, t2): a
 * pyramid row is a fixed combination p = (1, 0, 0) or (0, cos, sin) of its contact's frame
 * rows, so each entry is p_a^T W_ij p_b, formed column by column as p_a^T (W_:j p_b). Forming
 * M is O(N^2) (170 MB at 256 contacts and 16 directions), so a meter reads the deadline per
 * column (deadline.h).
 *
 * SCALED (lemke's run for a scene with joints, cs__lemke_standard_run_scaled). Contact i's rows
 * are scaled by s_i = cs_lemke_contact_scale() (its own-mass Delassus block about 1): nu_i,
 * sigma_ij and q's rows by s_i, theta_i and phi_ij by 1/s_i, gamma_i and lambda_i the other way,
 * so mu, E and -E^T stay as they are, and Lemke runs with covering vector 1 in these units. Then
 * its column-relative tests compare rows of one magnitude, also when the masses and inertias of a
 * scene span 1e-3 to 1e3 (fuzz_step's corpus, 262 steps with joints: 134 -> 198 answers, 64 -> 0
 * steps at the work budget). lemke-standard itself stays unscaled with covering vector 1: it is
 * the explicit baseline and follows ArtiSynth's pivot path (test_artisynth.c), which another
 * covering vector leaves where the LCP has many answers. */
#include "solver/lemke_contact.h"

#include <math.h>
#include <string.h>

#include "solver/deadline.h"
#include "solver/lemke.h"
#include "solver/workspace.h"

void cs_lemke_direction(int d, int j, double *ret_c, double *ret_s) {
    const double a = 2 * M_PI * j / d;
    *ret_c = cos(a);
    *ret_s = sin(a);
}

/* tr W_ii over the bodies' own masses is frame-free: per moving side (mass m, world inverse
 * inertia A, lever r), 3/m + sum_k (r x e_k)^T A (r x e_k) = 3/m + |r|^2 tr A - r^T A r. */
double cs_lemke_contact_scale(const cs_model *m, int i) {
    double tr = 0;
    for (int side = 0; side < 2; side++) {
        const int b = side ? m->ib[i] : m->ia[i];
        if (b < 0 || cs_model_is_kinematic(m, b))
            continue;
        const double *A = m->iw_inv + 9 * b, *r = (side ? m->rb : m->ra) + 3 * i;
        double rAr = 0;
        for (int k = 0; k < 3; k++)
            for (int l = 0; l < 3; l++)
                rAr += r[k] * A[3 * k + l] * r[l];
        tr += 3 / m->mass[b] + (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]) * (A[0] + A[4] + A[8]) -
              rAr;
    }
    const double s = 1 / sqrt(tr / 3);
    return tr > 0 && isfinite(s) ? s : 1;
}

/* The pyramid's directions, (cos, sin) of direction j at dir[2 j]: [2 max_dirs]. */
static size_t dir_size(const cs_limits *lim) {
    return cs__ws_bytes(2 * (size_t)lim->max_dirs * sizeof(double));
}

static void directions(int d, double *dir) {
    for (int j = 0; j < d; j++)
        cs_lemke_direction(d, j, &dir[2 * j], &dir[2 * j + 1]);
}

/* Scratch of form_model(): W3, the contact-frame velocities and one column's W3 p_b per contact,
 * then the Delassus scratch while forming W3. */
static size_t form_size(const cs_limits *lim) {
    const size_t n = (size_t)lim->max_contacts;
    return cs__ws_bytes(9 * n * n * sizeof(double)) + 2 * cs__ws_bytes(3 * n * sizeof(double)) +
           cs_model_delassus_size(lim);
}

size_t cs_lemke_contact_lcp_size(const cs_limits *lim) {
    return dir_size(lim) + form_size(lim);
}

/* M, q, z of the LCP of n contacts and d directions, the directions and the contacts' scales. */
static size_t lcp_arrays_size(size_t n, size_t d) {
    const size_t N = n * (2 + d);
    return cs__ws_bytes(N * N * sizeof(double)) + 2 * cs__ws_bytes(N * sizeof(double)) +
           cs__ws_bytes(2 * d * sizeof(double)) + cs__ws_bytes(n * sizeof(double));
}

size_t cs_lemke_standard_size(const cs_limits *lim) {
    const size_t n = (size_t)lim->max_contacts, N = n * (2 + (size_t)lim->max_dirs);
    // M, q, z and the directions; then forming's scratch or Lemke's (while solving).
    const size_t form = form_size(lim), lcp = cs_lemke_lcp_size((int)N);
    return lcp_arrays_size(n, (size_t)lim->max_dirs) + (form > lcp ? form : lcp);
}

size_t cs_lemke_standard_delassus_size(int nc, int d) {
    const size_t n = (size_t)nc, N = n * (2 + (size_t)d);
    const size_t wp = cs__ws_bytes(3 * n * sizeof(double)), lcp = cs_lemke_lcp_size((int)N);
    return lcp_arrays_size(n, (size_t)d) + (wp > lcp ? wp : lcp);
}

/* Frame-row combination of pyramid row a: row a < n is contact a's normal; row n + i d + j is
 * direction j of contact i. Writes the contact index and the 3 coefficients. */
static int row_combination(int n, int d, const double *dir, int a, double p[3]) {
    if (a < n) {
        p[0] = 1, p[1] = 0, p[2] = 0;
        return a;
    }
    const int i = (a - n) / d, j = (a - n) % d;
    p[0] = 0, p[1] = dir[2 * j], p[2] = dir[2 * j + 1];
    return i;
}

/* Eq. (6) of the Delassus form into M and q (see cs_lemke_contact_lcp): W [3n x 3n] (ld 3n) and
 * the free velocities u [3n] in the contact frames, each normal velocity bounded below by bias
 * [n] (NULL: 0), mu [n]; dir the directions, wp [3n] scratch; scale [n] the contacts' s_i
 * (SCALED; NULL: none). O(N^2), so the meter is read per column. Returns 0 or CS_DEADLINE (M
 * partly formed). */
static cs_status form(int n, int d, const double *W, const double *u, const double *bias,
                      const double *mu, const double *dir, double *wp, const double *scale,
                      double *M, double *q, cs__meter *meter) {
    const int N = n * (2 + d), nr = n * (1 + d);
    for (int b = 0; b < N; b++) {
        double *Mb = M + (size_t)b * N;
        memset(Mb, 0, (size_t)N * sizeof(double));
        if (b < nr) {
            // Column b: wp_i = W_i,jb p_b per contact i (3 x 3 blocks), then p_a . wp_ia.
            double pb[3];
            const int jb = row_combination(n, d, dir, b, pb);
            const double *Wb = W + (size_t)3 * jb * 3 * n;
            for (int k = 0; k < 3 * n; k++)
                wp[k] = Wb[k] * pb[0] + Wb[3 * n + k] * pb[1] + Wb[6 * n + k] * pb[2];
            const double sb = scale ? scale[jb] : 1;
            for (int a = 0; a < n; a++)
                Mb[a] = wp[3 * a] * sb * (scale ? scale[a] : 1);
            for (int i = 0; i < n; i++) {
                double *Mi = Mb + n + (size_t)i * d;
                const double si = sb * (scale ? scale[i] : 1);
                for (int j = 0; j < d; j++)
                    Mi[j] = (dir[2 * j] * wp[3 * i + 1] + dir[2 * j + 1] * wp[3 * i + 2]) * si;
            }
            q[b] = (pb[0] * u[3 * jb] + pb[1] * u[3 * jb + 1] + pb[2] * u[3 * jb + 2] -
                    (b < n && bias ? bias[b] : 0)) * sb;
        }
        if (cs__meter_add(meter, 9 * (int64_t)n + N))
            return CS_DEADLINE;
    }
    for (int i = 0; i < n; i++) {
        const int gi = nr + i; // gamma_i / lambda_i
        M[(size_t)i * N + gi] = mu[i];
        for (int j = 0; j < d; j++) {
            const int sj = n + i * d + j;
            M[(size_t)gi * N + sj] = 1;  // E: sigma_ij += lambda_i
            M[(size_t)sj * N + gi] = -1; // -E^T: gamma_i -= phi_ij
        }
        q[gi] = 0;
    }
    return CS_CONVERGED;
}

/* Eq. (6) of m: its Delassus form (cs_model_delassus, J v*), then form() (scale as there).
 * Returns 0, CS_ENOSPACE or CS_DEADLINE. */
static cs_status form_model(cs_workspace *ws, const cs_model *m, const double *dir,
                            const double *scale, double *M, double *q, cs__meter *meter) {
    const int n = m->nc;
    const size_t mark = cs__ws_mark(ws);
    double *W = cs__ws_alloc(ws, 9 * (size_t)n * n * sizeof(double));
    double *u = cs__ws_alloc(ws, 3 * (size_t)n * sizeof(double));
    double *wp = cs__ws_alloc(ws, 3 * (size_t)n * sizeof(double));
    cs_status status = n > 0 && (!W || !u || !wp) ? CS_ENOSPACE : CS_CONVERGED;
    if (status == CS_CONVERGED)
        status = cs_model_delassus(m, ws, 3, W, 3 * n, meter);
    if (status == CS_CONVERGED) {
        cs_model_free_velocity(m, 3, u);
        status = form(n, m->nd, W, u, m->bias, m->mu, dir, wp, scale, M, q, meter);
    }
    cs__ws_release(ws, mark);
    return status;
}

cs_status cs_lemke_contact_lcp(cs_workspace *ws, const cs_model *m, double *M, double *q) {
    const size_t mark = cs__ws_mark(ws);
    double *dir = cs__ws_alloc(ws, 2 * (size_t)m->nd * sizeof(double));
    cs_status status = CS_ENOSPACE;
    if (dir) {
        directions(m->nd, dir);
        // No deadline: a meter without options never stops.
        cs__meter meter = cs__meter_start(NULL);
        status = form_model(ws, m, dir, NULL, M, q, &meter);
    }
    cs__ws_release(ws, mark);
    return status;
}

/* Solves the LCP (M, q) of n contacts and d directions (dir), scaled by scale [n] (NULL: none),
 * and gathers the contact-frame impulses s_i (theta, sum_j phi_j d_j) into lambda [3n]. */
static cs_status solve_lcp(cs_workspace *ws, int n, int d, const double *dir, const double *scale,
                           const double *M, const double *q, double *z, const cs_options *opt,
                           double *lambda, cs_stats *st) {
    const int N = n * (2 + d);
    const cs_status status = cs_lemke_lcp(ws, N, M, N, q, NULL, opt, z, st);
    for (int i = 0; i < n; i++) {
        double *l = lambda + 3 * i;
        l[0] = z[i];
        l[1] = l[2] = 0;
        for (int j = 0; j < d; j++) {
            l[1] += z[n + i * d + j] * dir[2 * j];
            l[2] += z[n + i * d + j] * dir[2 * j + 1];
        }
        for (int k = 0; scale && k < 3; k++)
            l[k] *= scale[i];
    }
    return status;
}

/* Solves eq. (6) of the Delassus form (W, u, bias, mu) or, when m is given, of m; scaled (SCALED,
 * m only) or as it is. */
static cs_status standard_solve(cs_workspace *ws, const cs_model *m, int n, int d,
                                const double *W, const double *u, const double *mu, bool scaled,
                                const cs_options *opt, double *lambda, cs_stats *st) {
    const int N = n * (2 + d);
    const size_t mark = cs__ws_mark(ws);
    *st = (cs_stats){0};
    double *M = cs__ws_alloc(ws, (size_t)N * N * sizeof(double));
    double *q = cs__ws_alloc(ws, (size_t)N * sizeof(double));
    double *z = cs__ws_alloc(ws, (size_t)N * sizeof(double));
    double *dir = cs__ws_alloc(ws, 2 * (size_t)d * sizeof(double));
    double *scale = m && scaled ? cs__ws_alloc(ws, (size_t)n * sizeof(double)) : NULL;
    if (n > 0 && (!M || !q || !z || !dir || (m && scaled && !scale))) {
        cs__ws_release(ws, mark);
        return CS_ENOSPACE;
    }
    for (int i = 0; scale && i < n; i++)
        scale[i] = cs_lemke_contact_scale(m, i);
    directions(d, dir);
    cs__meter meter = cs__meter_start(opt);
    cs_status status;
    if (m) {
        status = form_model(ws, m, dir, scale, M, q, &meter);
    } else {
        double *wp = cs__ws_alloc(ws, 3 * (size_t)n * sizeof(double));
        status = n > 0 && !wp ? CS_ENOSPACE
                              : form(n, d, W, u, NULL, mu, dir, wp, NULL, M, q, &meter);
    }
    if (status == CS_CONVERGED)
        status = solve_lcp(ws, n, d, dir, scale, M, q, z, opt, lambda, st);
    st->peak_bytes = cs__ws_peak(ws);
    cs__ws_release(ws, mark);
    return status;
}

cs_status cs_lemke_standard_solve(cs_workspace *ws, const cs_model *m, const cs_options *opt,
                                  double *lambda, cs_stats *st) {
    return standard_solve(ws, m, m->nc, m->nd, NULL, NULL, NULL, false, opt, lambda, st);
}

cs_status cs_lemke_standard_delassus(cs_workspace *ws, int nc, int d, const double *W,
                                     const double *b, const double *mu, const cs_options *opt,
                                     double *lambda, cs_stats *st) {
    return standard_solve(ws, NULL, nc, d, W, b, mu, false, opt, lambda, st);
}

cs_status cs__lemke_standard_run(cs_workspace *ws, const cs__solve_in *in, cs__solve_out *out) {
    return cs_lemke_standard_solve(ws, in->m, in->opt, out->lambda, out->st);
}

cs_status cs__lemke_standard_run_scaled(cs_workspace *ws, const cs__solve_in *in,
                                        cs__solve_out *out) {
    const cs_model *m = in->m;
    return standard_solve(ws, m, m->nc, m->nd, NULL, NULL, NULL, true, in->opt, out->lambda,
                          out->st);
}
