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
 * rows, so each entry is p_a^T W_ij p_b. */
#include "solver/lemke_contact.h"

#include <math.h>
#include <string.h>

#include "solver/lemke.h"
#include "solver/workspace.h"

void cs_lemke_direction(int d, int j, double *ret_c, double *ret_s) {
    const double a = 2 * M_PI * j / d;
    *ret_c = cos(a);
    *ret_s = sin(a);
}

size_t cs_lemke_contact_lcp_size(const cs_limits *lim) {
    const size_t n = (size_t)lim->max_contacts, N = n * (2 + (size_t)lim->max_dirs);
    // W3 and the contact-frame velocities, then the Delassus scratch while forming W3.
    return cs__ws_bytes(9 * n * n * sizeof(double)) + cs__ws_bytes(N * sizeof(double)) +
           cs_model_delassus_size(lim);
}

size_t cs_lemke_standard_size(const cs_limits *lim) {
    const size_t n = (size_t)lim->max_contacts, N = n * (2 + (size_t)lim->max_dirs);
    // M, q, z; then forming's scratch or Lemke's (while solving).
    const size_t form = cs_lemke_contact_lcp_size(lim), lcp = cs_lemke_lcp_size((int)N);
    return cs__ws_bytes(N * N * sizeof(double)) + 2 * cs__ws_bytes(N * sizeof(double)) +
           (form > lcp ? form : lcp);
}

/* Frame-row combination of pyramid row a: row a < n is contact a's normal; row n + i d + j is
 * direction j of contact i. Writes the contact index and the 3 coefficients. */
static int row_combination(int n, int d, int a, double p[3]) {
    if (a < n) {
        p[0] = 1, p[1] = 0, p[2] = 0;
        return a;
    }
    const int i = (a - n) / d, j = (a - n) % d;
    p[0] = 0;
    cs_lemke_direction(d, j, &p[1], &p[2]);
    return i;
}

cs_status cs_lemke_contact_lcp(cs_workspace *ws, const cs_model *m, double *M, double *q) {
    const int n = m->nc, d = m->nd, N = n * (2 + d), nr = n * (1 + d);
    const size_t mark = cs__ws_mark(ws);
    double *W = cs__ws_alloc(ws, 9 * (size_t)n * n * sizeof(double));
    double *u = cs__ws_alloc(ws, (size_t)N * sizeof(double));
    if (n > 0 && (!W || !u)) {
        cs__ws_release(ws, mark);
        return CS_ENOSPACE;
    }
    cs_status status = cs_model_delassus(m, ws, 3, W, 3 * n);
    if (status != CS_CONVERGED) {
        cs__ws_release(ws, mark);
        return status;
    }
    memset(M, 0, (size_t)N * N * sizeof(double));
    // Contact-frame velocities at v*: q's nu and sigma rows are combinations of them.
    cs_model_jv(m, m->vstar, u);
    for (int b = 0; b < nr; b++) {
        double pb[3];
        const int jb = row_combination(n, d, b, pb);
        for (int a = 0; a < nr; a++) {
            double pa[3];
            const int ia = row_combination(n, d, a, pa);
            double s = 0;
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++)
                    s += pa[r] * W[(size_t)(3 * jb + c) * 3 * n + 3 * ia + r] * pb[c];
            M[(size_t)b * N + a] = s;
        }
        q[b] = pb[0] * u[3 * jb] + pb[1] * u[3 * jb + 1] + pb[2] * u[3 * jb + 2] -
               (b < n ? m->bias[b] : 0);
    }
    for (int i = 0; i < n; i++) {
        const int gi = nr + i; // gamma_i / lambda_i
        M[(size_t)i * N + gi] = m->mu[i];
        for (int j = 0; j < d; j++) {
            const int sj = n + i * d + j;
            M[(size_t)gi * N + sj] = 1;  // E: sigma_ij += lambda_i
            M[(size_t)sj * N + gi] = -1; // -E^T: gamma_i -= phi_ij
        }
        q[gi] = 0;
    }
    cs__ws_release(ws, mark);
    return CS_CONVERGED;
}

cs_status cs_lemke_standard_solve(cs_workspace *ws, const cs_model *m, const cs_options *opt,
                                  double *lambda, cs_stats *st) {
    const int n = m->nc, d = m->nd, N = n * (2 + d);
    const size_t mark = cs__ws_mark(ws);
    *st = (cs_stats){0};
    double *M = cs__ws_alloc(ws, (size_t)N * N * sizeof(double));
    double *q = cs__ws_alloc(ws, (size_t)N * sizeof(double));
    double *z = cs__ws_alloc(ws, (size_t)N * sizeof(double));
    if (n > 0 && (!M || !q || !z)) {
        cs__ws_release(ws, mark);
        return CS_ENOSPACE;
    }
    cs_status status = cs_lemke_contact_lcp(ws, m, M, q);
    if (status != CS_CONVERGED) {
        cs__ws_release(ws, mark);
        return status;
    }
    status = cs_lemke_lcp(ws, N, M, N, q, NULL, opt, z, st);
    for (int i = 0; i < n; i++) {
        double *l = lambda + 3 * i;
        l[0] = z[i];
        l[1] = l[2] = 0;
        for (int j = 0; j < d; j++) {
            double c, s;
            cs_lemke_direction(d, j, &c, &s);
            l[1] += z[n + i * d + j] * c;
            l[2] += z[n + i * d + j] * s;
        }
    }
    st->peak_bytes = cs__ws_peak(ws);
    cs__ws_release(ws, mark);
    return status;
}
