/* SPDX-License-Identifier: MIT */
/* Shared test helpers (see testlib.h). */
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "wire/framing.h"

void t_assert_near(double a, double b, double tol, const char *as, const char *bs,
                   const char *file, int line) {
    if (fabs(a - b) <= tol)
        return;
    print_error("%s = %.17g, %s = %.17g, |diff| = %.3g > tol %.3g\n", as, a, bs, b, fabs(a - b),
                   tol);
    _fail(file, line);
}

t_rng t_rng_seed(uint64_t seed) {
    return (t_rng){.s = seed};
}

uint64_t t_rng_next(t_rng *r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double t_rng_unit(t_rng *r) {
    return (double)(t_rng_next(r) >> 11) * 0x1.0p-53;
}

double t_rng_range(t_rng *r, double lo, double hi) {
    return lo + (hi - lo) * t_rng_unit(r);
}

int t_rng_below(t_rng *r, int n) {
    return (int)(t_rng_next(r) % (uint64_t)n);
}

size_t t_mutate(t_rng *r, uint8_t *buf, size_t len) {
    const int edits = 1 + t_rng_below(r, 3);
    for (int e = 0; e < edits && len > 1; e++) {
        const size_t at = (size_t)t_rng_below(r, (int)len);
        switch (t_rng_below(r, 4)) {
        case 0:
            buf[at] = (uint8_t)t_rng_next(r);
            break;
        case 1:
            memmove(buf + at, buf + at + 1, len - at - 1);
            len--;
            break;
        case 2:
            memmove(buf + at + 1, buf + at, len - at);
            buf[at] = (uint8_t)t_rng_next(r);
            len++;
            break;
        default:
            len = at + 1;
            break;
        }
    }
    return len;
}

size_t t_envelope_plus(const uint8_t *env, size_t len, const uint8_t *extra, size_t n,
                       uint8_t *out) {
    uint64_t body;
    const int k = cd_varint_decode(env + 1, len - 1, &body);
    assert_true(env[0] == 0x12 && k > 0 && 1 + (size_t)k + body == len);
    size_t o = 0;
    out[o++] = 0x12;
    o += cd_varint_encode(body + n, out + o);
    memcpy(out + o, env + 1 + k, body);
    memcpy(out + o + body, extra, n);
    return o + body + n;
}

void t_gram(int n, int k, const double *G, double *A) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int l = 0; l < k; l++)
                s += G[i * k + l] * G[j * k + l];
            A[j * n + i] = s;
        }
}

long t_clock_reads;

int64_t t_clock_counting(void) {
    t_clock_reads++;
    return 0;
}

void t_lcp_random_psd(t_rng *r, int n, int k, bool in_range, double *A, double *b) {
    double G[144];
    for (int i = 0; i < n * k; i++)
        G[i] = t_rng_range(r, -1, 1);
    t_gram(n, k, G, A);
    for (int i = 0; i < n; i++)
        b[i] = t_rng_range(r, -1, 1);
    if (in_range) {
        double x[12];
        for (int i = 0; i < n; i++)
            x[i] = t_rng_range(r, -1, 1);
        for (int i = 0; i < n; i++) {
            b[i] = 0;
            for (int j = 0; j < n; j++)
                b[i] += A[j * n + i] * x[j];
        }
    }
}

/* Least-squares solve of the m x m PSD system S y = c by Gauss-Jordan with full pivoting,
 * dropping pivots below tol (a pseudo-inverse good enough for n <= 12 test data). */
static void solve_psd_small(int m, double *S, double *c, double *y, double tol) {
    int perm[12], used[12] = {0};
    int rank = 0;
    for (int step = 0; step < m; step++) {
        int pr = -1;
        double best = tol;
        for (int i = 0; i < m; i++)
            if (!used[i] && fabs(S[i * m + i]) > best) {
                best = fabs(S[i * m + i]);
                pr = i;
            }
        if (pr < 0)
            break;
        used[pr] = 1;
        perm[rank++] = pr;
        const double piv = S[pr * m + pr];
        for (int i = 0; i < m; i++) {
            if (i == pr)
                continue;
            const double f = S[i * m + pr] / piv;
            if (f == 0)
                continue;
            for (int j = 0; j < m; j++)
                S[i * m + j] -= f * S[pr * m + j];
            c[i] -= f * c[pr];
        }
    }
    for (int i = 0; i < m; i++)
        y[i] = 0;
    for (int k = 0; k < rank; k++)
        y[perm[k]] = c[perm[k]] / S[perm[k] * m + perm[k]];
}

double t_lcp_residual(int n, const double *A, const double *b, const double *f) {
    double res = 0;
    for (int i = 0; i < n; i++) {
        double w = b[i];
        for (int j = 0; j < n; j++)
            w += A[j * n + i] * f[j];
        res = fmax(res, fmax(fmax(-f[i], -w), fabs(f[i] * w)));
    }
    return res;
}

void t_lcp_assert_same_w(int n, const double *A, const double *b, const double *f,
                         const double *fe, double tol) {
    for (int i = 0; i < n; i++) {
        double w = b[i], we = b[i];
        for (int j = 0; j < n; j++) {
            w += A[j * n + i] * f[j];
            we += A[j * n + i] * fe[j];
        }
        assert_near(w, we, tol);
    }
}

double t_lcp_scale(int n, const double *f) {
    double m = 0;
    for (int i = 0; i < n; i++)
        m = fmax(m, fabs(f[i]));
    return 1 + m;
}

bool t_lcp_enumerate(int n, const double *A, const double *b, double tol, double *f) {
    double scale = 0;
    for (int i = 0; i < n * n; i++)
        scale = fmax(scale, fabs(A[i]));
    for (int i = 0; i < n; i++)
        scale = fmax(scale, fabs(b[i]));
    for (unsigned mask = 0; mask < (1u << n); mask++) {
        int idx[12], m = 0;
        for (int i = 0; i < n; i++)
            if (mask & (1u << i))
                idx[m++] = i;
        double S[144], c[12], y[12], x[12] = {0};
        for (int p = 0; p < m; p++) {
            for (int q = 0; q < m; q++)
                S[p * m + q] = A[idx[q] * n + idx[p]];
            c[p] = -b[idx[p]];
        }
        solve_psd_small(m, S, c, y, 1e-10 * (scale > 0 ? scale : 1));
        for (int p = 0; p < m; p++)
            x[idx[p]] = y[p];
        // Accept only if the subset system really holds (a dropped direction may not). Rounding
        // grows with the size of the solution on ill-conditioned subsets.
        double xmax = 0;
        for (int i = 0; i < n; i++)
            xmax = fmax(xmax, fabs(x[i]));
        const double t = tol * scale * (1 + xmax);
        bool ok = true;
        for (int i = 0; i < n && ok; i++) {
            double w = b[i];
            for (int j = 0; j < n; j++)
                w += A[j * n + i] * x[j];
            if (x[i] < -t || w < -t || ((mask & (1u << i)) && fabs(w) > t))
                ok = false;
        }
        if (ok) {
            if (f)
                memcpy(f, x, (size_t)n * sizeof(double));
            return true;
        }
    }
    return false;
}

static const char *join(const char *env, const char *fallback, const char *name) {
    static char buf[4][1024];
    static int k;
    const char *dir = getenv(env);
    char *out = buf[k++ % 4];
    snprintf(out, sizeof buf[0], "%s/%s", dir ? dir : fallback, name);
    return out;
}

const char *t_data_path(const char *name) {
    return join("CONTACTD_DATA", "tests/data", name);
}

const char *t_shared_path(const char *name) {
    // A user's CONTACTD_TEST_DATA wins over the ../shared beside the source tree that meson
    // passes as CONTACTD_SHARED (meson's test environment overrides a variable of that name).
    return join(getenv("CONTACTD_TEST_DATA") ? "CONTACTD_TEST_DATA" : "CONTACTD_SHARED",
                "../shared", name);
}

bool t_dense_solve(int n, double *A, double *x, double tiny) {
#define AT(i, j) A[(size_t)(j) * (size_t)n + (size_t)(i)]
    for (int k = 0; k < n; k++) {
        int p = k;
        for (int i = k + 1; i < n; i++)
            p = fabs(AT(i, k)) > fabs(AT(p, k)) ? i : p;
        if (!(fabs(AT(p, k)) > tiny))
            return false;
        for (int j = 0; j < n; j++) {
            const double t = AT(k, j);
            AT(k, j) = AT(p, j);
            AT(p, j) = t;
        }
        const double t = x[k];
        x[k] = x[p];
        x[p] = t;
        for (int i = k + 1; i < n; i++) {
            const double l = AT(i, k) / AT(k, k);
            for (int j = k; j < n; j++)
                AT(i, j) -= l * AT(k, j);
            x[i] -= l * x[k];
        }
    }
    for (int k = n - 1; k >= 0; k--) {
        for (int j = k + 1; j < n; j++)
            x[k] -= AT(k, j) * x[j];
        x[k] /= AT(k, k);
    }
#undef AT
    return true;
}

bool t_shared_present(const char *dir) {
    struct stat st;
    return stat(t_shared_path(dir), &st) == 0 && S_ISDIR(st.st_mode);
}

void t_require_shared(const char *dir) {
    const char *path = t_shared_path(dir);
    if (t_shared_present(dir))
        return;
    const char *tap = getenv("CMOCKA_MESSAGE_OUTPUT");
    if (tap && strcmp(tap, "TAP") == 0) {
        printf("1..0 # SKIP %s is absent (the shared test data; set CONTACTD_TEST_DATA)\n", path);
        exit(0);
    }
    printf("skipped: %s is absent (the shared test data; set CONTACTD_TEST_DATA)\n", path);
    exit(77);
}

void t_scene_copy(cs_scene *dst, const cs_scene *src, uint64_t seq) {
    cs_body *bodies = dst->bodies;
    cs_contact *contacts = dst->contacts;
    *dst = *src;
    dst->bodies = bodies;
    dst->contacts = contacts;
    dst->seq = seq;
    memcpy(bodies, src->bodies, (size_t)src->nb * sizeof *bodies);
    memcpy(contacts, src->contacts, (size_t)src->nc * sizeof *contacts);
}
