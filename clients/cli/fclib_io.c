/* SPDX-License-Identifier: MIT */
/* FCLIB files (see fclib_io.h). libfclib (fclib.h) reads and writes the files but calls exit(1)
 * on any HDF5 failure and trusts every length it finds, so a file is first checked here with
 * plain HDF5 calls: the groups and datasets libfclib will open exist, have the right type, and
 * hold no more elements than libfclib allocates for them. Only then does libfclib read it.
 *
 * Matrix storage (fclib_matrix, CSparse's layout): nz >= 0 is a triplet list of nz entries with
 * p = column indices and i = row indices (fclib.h's comment calls p the rows, but the files and
 * fclib's own casts to CSparse's cs use columns: CubeH8's H, 162 x 3, has p in [0, 2]); nz = -1
 * is compressed columns (p: n + 1 column pointers, i: row indices), nz = -2 compressed rows.
 * Files store M either whole (TwoRods) or as one triangle (the LMGC CubeH8 files hold only the
 * upper one); SAP needs both, so a one-triangle M is mirrored. A local problem becomes the
 * global one of fclib_io.h through a dense pivoted Cholesky of W (LAPACK dpstrf), and ncp
 * (Todorov 2010, solver/ncp.h) solves its dense W directly. A local W that is not symmetric to
 * rounding (Siconos' Bullet-built files) is replaced by its symmetric part when the relative
 * asymmetry |W - W^T|_F / |W|_F is at most FCLIB_IO_ASYMMETRY_MAX, and refused above it. */
#include "fclib_io.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fclib.h>
#include <hdf5.h>

#include "service/clock.h"
#include "solver/dantzig.h"
#include "solver/lemke_contact.h"
#include "solver/linalg.h"
#include "solver/ncp.h"

/* Largest dimension or entry count accepted: libfclib allocates what a file declares, so a
 * corrupt size must not turn into a huge allocation (2^26 doubles = 512 MiB). */
#define SIZE_MAX_ACCEPTED (1 << 26)
/* |M_ij - M_ji| above this fraction of max |M| means M is not symmetric (rounding of a
 * symmetric matrix written in text and read back stays near 1e-16). */
#define SYMMETRY_TOL 1e-10
/* Pivots of W below this fraction of its largest diagonal end the factorization: W's rank
 * (LMGC's PerioBox W has rank 72 of 180, README of ../shared/fclib). */
#define RANK_TOL 1e-12
/* Asymmetry below this is the rounding of a symmetric W written and read back: symmetrized
 * without a note. */
#define ASYMMETRY_ROUNDING 1e-12
/* The local form is factored densely: at most this many rows of W (288 MB). */
#define LOCAL_ROWS_MAX 6000

const char *fclib_io_form_name(fclib_io_form form) {
    return form == FCLIB_IO_GLOBAL ? "global" : form == FCLIB_IO_LOCAL ? "local" : "?";
}

/* ---- layout checks with plain HDF5 ---- */

/* True when every component of the absolute path exists (H5Lexists fails on a missing
 * intermediate group, so each prefix is tested in turn). */
static bool has_path(hid_t file, const char *path) {
    char buf[256];
    const size_t n = strlen(path);
    if (n >= sizeof buf) {
        return false;
    }
    memcpy(buf, path, n + 1);
    for (size_t k = 1; k <= n; k++) {
        if (buf[k] == '/' || buf[k] == '\0') {
            const char c = buf[k];
            buf[k] = '\0';
            const bool ok = H5Lexists(file, buf, H5P_DEFAULT) > 0;
            buf[k] = c;
            if (!ok) {
                return false;
            }
        }
    }
    return true;
}

typedef enum kind { K_INT, K_REAL, K_STRING } kind;

/* Elements in dataset path when it is a dataset of the given kind (K_REAL accepts integers
 * too: HDF5 converts them on reading; K_STRING must be fixed-length, which libfclib's string
 * reader assumes). Returns -1 when missing or of another kind. */
static long long dataset_len(hid_t file, const char *path, kind k) {
    if (!has_path(file, path)) {
        return -1;
    }
    const hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
    if (d < 0) {
        return -1;
    }
    const hid_t t = H5Dget_type(d), s = H5Dget_space(d);
    const H5T_class_t c = t < 0 ? H5T_NO_CLASS : H5Tget_class(t);
    const bool ok = k == K_INT      ? c == H5T_INTEGER
                    : k == K_REAL   ? c == H5T_INTEGER || c == H5T_FLOAT
                                    : c == H5T_STRING && H5Tis_variable_str(t) == 0;
    const long long n = s < 0 ? -1 : (long long)H5Sget_simple_extent_npoints(s);
    if (s >= 0) {
        H5Sclose(s);
    }
    if (t >= 0) {
        H5Tclose(t);
    }
    H5Dclose(d);
    return ok ? n : -1;
}

/* Reads the one-element integer dataset path. Returns 0 or -1. */
static int read_int(hid_t file, const char *path, int *ret) {
    if (dataset_len(file, path, K_INT) != 1) {
        return -1;
    }
    const hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
    const herr_t e = H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, ret);
    H5Dclose(d);
    return e < 0 ? -1 : 0;
}

/* Declared shape of a stored matrix and the stored entry count (what the arrays hold). */
typedef struct shape {
    int m, n, nz, nzmax;
    long long stored;
} shape;

#define FAIL(...) (snprintf(why, whylen, __VA_ARGS__), -1)
/* The file is readable FCLIB, but its data is refused. */
#define DATA_FAIL(...) (snprintf(why, whylen, __VA_ARGS__), -2)

/* Checks the matrix group grp ("/fclib_global/M") against what libfclib's read_matrix does:
 * reads nzmax, m, n, nz; allocates p (nz, or n + 1 / m + 1 compressed), i and x (nzmax) and reads
 * whole datasets into them. */
static int check_matrix(hid_t file, const char *grp, shape *ret, char *why, size_t whylen) {
    char path[128];
    static const char *const scalars[] = {"nzmax", "m", "n", "nz"};
    int val[4];
    for (int k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%s/%s", grp, scalars[k]);
        if (read_int(file, path, &val[k]) < 0) {
            return FAIL("%s: missing or not one integer", path);
        }
    }
    const shape s = {.nzmax = val[0], .m = val[1], .n = val[2], .nz = val[3]};
    if (s.m < 0 || s.n < 0 || s.nzmax < 0 || s.m > SIZE_MAX_ACCEPTED || s.n > SIZE_MAX_ACCEPTED ||
        s.nzmax > SIZE_MAX_ACCEPTED) {
        return FAIL("%s: sizes m = %d, n = %d, nzmax = %d out of range [0, %d]", grp, s.m, s.n,
                    s.nzmax, SIZE_MAX_ACCEPTED);
    }
    if (s.nz < -2 || s.nz > s.nzmax) {
        return FAIL("%s: nz = %d is neither a triplet count in [0, nzmax = %d] nor -1 (CSC) or "
                    "-2 (CSR)", grp, s.nz, s.nzmax);
    }
    long long len[3];
    static const char *const arrays[] = {"p", "i", "x"};
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/%s", grp, arrays[k]);
        len[k] = dataset_len(file, path, k == 2 ? K_REAL : K_INT);
        if (len[k] < 0) {
            return FAIL("%s: missing or not %s", path, k == 2 ? "numbers" : "integers");
        }
    }
    const long long want_p = s.nz >= 0    ? s.nz
                             : s.nz == -1 ? (long long)s.n + 1
                                          : (long long)s.m + 1;
    const long long cap_i = s.nz >= 0 ? s.nz : s.nzmax;
    if (len[0] != want_p) {
        return FAIL("%s/p: %lld entries, expected %lld", grp, len[0], want_p);
    }
    if (len[1] > cap_i || len[2] > s.nzmax) {
        return FAIL("%s: i or x longer than nzmax = %d", grp, s.nzmax);
    }
    *ret = s;
    ret->stored = len[1] < len[2] ? len[1] : len[2];
    if (s.nz >= 0 && ret->stored < s.nz) {
        return FAIL("%s: %d triplets declared, %lld stored", grp, s.nz, ret->stored);
    }
    return 0;
}

/* The info strings libfclib reads when present must be fixed-length strings. */
static int check_info(hid_t file, const char *root, char *why, size_t whylen) {
    static const char *const names[] = {"title", "description", "math_info"};
    char path[128];
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/info/%s", root, names[k]);
        if (has_path(file, path) && dataset_len(file, path, K_STRING) != 1) {
            return FAIL("%s: not a fixed-length string", path);
        }
    }
    return 0;
}

/* Everything libfclib's fclib_read_global touches, and the sizes that must agree. */
static int check_global(hid_t file, shape *M, shape *H, char *why, size_t whylen) {
    int dim;
    if (read_int(file, "/fclib_global/spacedim", &dim) < 0) {
        return FAIL("/fclib_global/spacedim: missing or not one integer");
    }
    if (dim != 3) {
        return FAIL("spacedim = %d: only 3-D contact problems are supported", dim);
    }
    if (has_path(file, "/fclib_global/G")) {
        return FAIL("equality constraints (/fclib_global/G) are not supported");
    }
    if (check_matrix(file, "/fclib_global/M", M, why, whylen) < 0 ||
        check_matrix(file, "/fclib_global/H", H, why, whylen) < 0) {
        return -1;
    }
    if (M->m != M->n || H->m != M->m || H->n % 3) {
        return FAIL("M is %d x %d and H %d x %d: expected M n x n and H n x 3 nc", M->m, M->n,
                    H->m, H->n);
    }
    const struct {
        const char *path;
        long long len;
    } vec[] = {{"/fclib_global/vectors/f", M->m},
               {"/fclib_global/vectors/w", H->n},
               {"/fclib_global/vectors/mu", H->n / 3}};
    for (size_t k = 0; k < sizeof vec / sizeof vec[0]; k++) {
        const long long n = dataset_len(file, vec[k].path, K_REAL);
        if (n != vec[k].len) {
            return FAIL("%s: %s, expected %lld numbers", vec[k].path,
                        n < 0 ? "missing or not numbers" : "wrong length", vec[k].len);
        }
    }
    return check_info(file, "/fclib_global", why, whylen);
}

/* Everything libfclib's fclib_read_local touches, and the sizes that must agree. */
static int check_local(hid_t file, shape *W, char *why, size_t whylen) {
    int dim;
    if (read_int(file, "/fclib_local/spacedim", &dim) < 0) {
        return FAIL("/fclib_local/spacedim: missing or not one integer");
    }
    if (dim != 3) {
        return FAIL("spacedim = %d: only 3-D contact problems are supported", dim);
    }
    if (has_path(file, "/fclib_local/V") || has_path(file, "/fclib_local/R")) {
        return FAIL("mixed constraints (/fclib_local/V, R) are not supported");
    }
    if (check_matrix(file, "/fclib_local/W", W, why, whylen) < 0) {
        return -1;
    }
    if (W->m != W->n || W->m % 3) {
        return FAIL("W is %d x %d: expected 3 nc x 3 nc", W->m, W->n);
    }
    if (W->m > LOCAL_ROWS_MAX) {
        return FAIL("W has %d rows: the local form is factored densely, at most %d", W->m,
                    LOCAL_ROWS_MAX);
    }
    const struct {
        const char *path;
        long long len;
    } vec[] = {{"/fclib_local/vectors/q", W->m}, {"/fclib_local/vectors/mu", W->m / 3}};
    for (size_t k = 0; k < sizeof vec / sizeof vec[0]; k++) {
        const long long n = dataset_len(file, vec[k].path, K_REAL);
        if (n != vec[k].len) {
            return FAIL("%s: %s, expected %lld numbers", vec[k].path,
                        n < 0 ? "missing or not numbers" : "wrong length", vec[k].len);
        }
    }
    return check_info(file, "/fclib_local", why, whylen);
}

/* Opens path, finds its form and checks its layout; sets form, nc and nv (global).
 * Returns 0 or -1 with why set. */
static int probe(const char *path, fclib_io_problem *p, shape *M, shape *H, shape *W, char *why,
                 size_t whylen) {
    struct stat st;
    if (stat(path, &st) < 0) {
        return FAIL("%s", strerror(errno));
    }
    if (S_ISDIR(st.st_mode)) {
        return FAIL("is a directory");
    }
    if (access(path, R_OK) < 0) {
        return FAIL("%s", strerror(errno));
    }
    if (H5Fis_hdf5(path) <= 0) {
        return FAIL("not an HDF5 file");
    }
    const hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) {
        return FAIL("HDF5 cannot open it");
    }
    int r;
    if (has_path(file, "/fclib_global")) {
        p->form = FCLIB_IO_GLOBAL;
        r = check_global(file, M, H, why, whylen);
        p->nc = r == 0 ? H->n / 3 : 0;
        p->nv = r == 0 ? M->n : 0;
    } else if (has_path(file, "/fclib_local")) {
        p->form = FCLIB_IO_LOCAL;
        r = check_local(file, W, why, whylen);
        p->nc = r == 0 ? W->m / 3 : 0;
    } else {
        r = FAIL("not an FCLIB problem (no /fclib_global or /fclib_local group)");
    }
    H5Fclose(file);
    return r;
}

/* ---- matrices to CSC ---- */

typedef struct entry {
    int row;
    double val;
} entry;

static int cmp_entry(const void *a, const void *b) {
    const int x = ((const entry *)a)->row, y = ((const entry *)b)->row;
    return (x > y) - (x < y);
}

/* An m x n matrix in CSC, rows sorted within each column, duplicates summed. */
typedef struct csc {
    int m, n;
    int *colptr, *rowind;
    double *val;
} csc;

/* Entries stored in A (checked). */
static int entry_count(const struct fclib_matrix *A) {
    return A->nz >= 0 ? A->nz : A->nz == -1 ? A->p[A->n] : A->p[A->m];
}

/* Row and column of entry k of A, for k = 0, 1, ... in order: *outer carries the current column
 * (CSC) or row (CSR) from one call to the next and starts at 0. */
static void entry_at(const struct fclib_matrix *A, int k, int *outer, int *ret_r, int *ret_c) {
    if (A->nz >= 0) {
        *ret_r = A->i[k], *ret_c = A->p[k];
        return;
    }
    while (A->p[*outer + 1] <= k) {
        ++*outer;
    }
    *ret_r = A->nz == -1 ? A->i[k] : *outer;
    *ret_c = A->nz == -1 ? *outer : A->i[k];
}

/* Validates the stored arrays of A (pointers monotone and within the stored entries, indices
 * in range, values finite). Returns 0 or -2 with why set. */
static int check_entries(const char *name, const struct fclib_matrix *A, const shape *s,
                         char *why, size_t whylen) {
    if (A->nz < 0) {
        const int outer = A->nz == -1 ? A->n : A->m;
        if (A->p[0] != 0) {
            return DATA_FAIL("%s: first pointer %d, expected 0", name, A->p[0]);
        }
        for (int j = 0; j < outer; j++) {
            if (A->p[j + 1] < A->p[j]) {
                return DATA_FAIL("%s: pointers decrease at %d", name, j);
            }
        }
        if (A->p[outer] > s->stored) {
            return DATA_FAIL("%s: pointers reach %d, only %lld entries stored", name, A->p[outer],
                        s->stored);
        }
    }
    const int cnt = entry_count(A);
    const int inner = A->nz == -2 ? A->n : A->m; // bound of i[]
    for (int k = 0; k < cnt; k++) {
        if (A->i[k] < 0 || A->i[k] >= inner || (A->nz >= 0 && (A->p[k] < 0 || A->p[k] >= A->n))) {
            return DATA_FAIL("%s: entry %d has an index outside %d x %d", name, k, A->m, A->n);
        }
        if (!isfinite(A->x[k])) {
            return DATA_FAIL("%s: entry %d is not finite", name, k);
        }
    }
    return 0;
}

/* Converts A (checked) to CSC; mirror adds (j, i) for every off-diagonal (i, j). Returns 0, or -1
 * when memory is short. */
static int to_csc(const struct fclib_matrix *A, bool mirror, csc *ret) {
    const int cnt = entry_count(A), n = A->n;
    const size_t total = (size_t)cnt * (mirror ? 2 : 1);
    int *row = malloc((total + 1) * sizeof *row), *col = malloc((total + 1) * sizeof *col);
    double *val = malloc((total + 1) * sizeof *val);
    entry *e = malloc((total + 1) * sizeof *e);
    int *ptr = calloc((size_t)n + 1, sizeof *ptr);
    size_t t = 0;
    if (!row || !col || !val || !e || !ptr) {
        goto out_free;
    }
    // Expand every form to (row, col, val) triplets.
    for (int k = 0, outer = 0; k < cnt; k++) {
        int r, c;
        entry_at(A, k, &outer, &r, &c);
        row[t] = r, col[t] = c, val[t++] = A->x[k];
        if (mirror && r != c) {
            row[t] = c, col[t] = r, val[t++] = A->x[k];
        }
    }
    // Bucket by column, then sort each column by row and sum duplicates in place.
    for (size_t k = 0; k < t; k++) {
        ptr[col[k] + 1]++;
    }
    for (int j = 0; j < n; j++) {
        ptr[j + 1] += ptr[j];
    }
    int *fill = malloc((size_t)n * sizeof *fill);
    if (!fill) {
        goto out_free;
    }
    memcpy(fill, ptr, (size_t)n * sizeof *fill);
    for (size_t k = 0; k < t; k++) {
        e[fill[col[k]]++] = (entry){.row = row[k], .val = val[k]};
    }
    free(fill);
    int out = 0;
    for (int j = 0; j < n; j++) {
        const int lo = ptr[j], hi = ptr[j + 1];
        qsort(e + lo, (size_t)(hi - lo), sizeof *e, cmp_entry);
        ptr[j] = out;
        for (int k = lo; k < hi; k++) {
            if (out > ptr[j] && e[out - 1].row == e[k].row) {
                e[out - 1].val += e[k].val;
            } else {
                e[out++] = e[k];
            }
        }
    }
    ptr[n] = out;
    for (int k = 0; k < out; k++) {
        row[k] = e[k].row;
        val[k] = e[k].val;
    }
    free(col);
    free(e);
    *ret = (csc){.m = A->m, .n = n, .colptr = ptr, .rowind = row, .val = val};
    return 0;
out_free:
    free(row);
    free(col);
    free(val);
    free(e);
    free(ptr);
    return -1;
}

/* True when A (checked) stores entries strictly on one side of the diagonal only. */
static bool one_triangle(const struct fclib_matrix *A) {
    bool upper = false, lower = false;
    const int cnt = entry_count(A);
    for (int k = 0, outer = 0; k < cnt; k++) {
        int r, c;
        entry_at(A, k, &outer, &r, &c);
        upper |= r < c;
        lower |= r > c;
    }
    return upper != lower;
}

/* Value of M(i, j) from a sorted CSC, 0 when not stored. */
static double csc_at(const csc *M, int i, int j) {
    int lo = M->colptr[j], hi = M->colptr[j + 1];
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (M->rowind[mid] < i) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < M->colptr[j + 1] && M->rowind[lo] == i ? M->val[lo] : 0;
}

/* Largest |M_ij - M_ji| relative to max |M_ij|. */
static double asymmetry(const csc *M) {
    double amax = 0, dmax = 0;
    for (int j = 0; j < M->n; j++) {
        for (int k = M->colptr[j]; k < M->colptr[j + 1]; k++) {
            amax = fmax(amax, fabs(M->val[k]));
            dmax = fmax(dmax, fabs(M->val[k] - csc_at(M, j, M->rowind[k])));
        }
    }
    return amax > 0 ? dmax / amax : 0;
}

static int check_vector(const char *name, int n, const double *x, bool nonneg, char *why,
                        size_t whylen) {
    for (int k = 0; k < n; k++) {
        if (!isfinite(x[k]) || (nonneg && x[k] < 0)) {
            return DATA_FAIL("%s[%d] = %g: expected a finite number%s", name, k, x[k],
                        nonneg ? " >= 0" : "");
        }
    }
    return 0;
}

/* The global problem as read (checked by probe). Returns 0, -1 (unreadable) or -2 (data
 * refused) with why set. */
static int load_global(const char *path, fclib_io_problem *p, const shape *M, const shape *H,
                       char *why, size_t whylen) {
    p->raw = fclib_read_global(path);
    if (!p->raw) {
        return FAIL("libfclib could not read the global problem");
    }
    const struct fclib_global *g = p->raw;
    if (check_entries("M", g->M, M, why, whylen) < 0 ||
        check_entries("H", g->H, H, why, whylen) < 0 ||
        check_vector("f", p->nv, g->f, false, why, whylen) < 0 ||
        check_vector("w", 3 * p->nc, g->w, false, why, whylen) < 0 ||
        check_vector("mu", p->nc, g->mu, true, why, whylen) < 0) {
        return -2;
    }
    csc m, h;
    p->m_mirrored = one_triangle(g->M);
    if (to_csc(g->M, p->m_mirrored, &m) < 0) {
        return FAIL("out of memory");
    }
    p->m_colptr = m.colptr, p->m_rowind = m.rowind, p->m_val = m.val;
    if (to_csc(g->H, false, &h) < 0) {
        return FAIL("out of memory");
    }
    p->h_colptr = h.colptr, p->h_rowind = h.rowind, p->h_val = h.val;
    const double asym = asymmetry(&m);
    if (asym > SYMMETRY_TOL) {
        return DATA_FAIL("M is not symmetric (max |M_ij - M_ji| = %.3g of max |M|)", asym);
    }
    p->g = (cs_sap_global){.nv = p->nv, .nc = p->nc,
                           .m_colptr = p->m_colptr, .m_rowind = p->m_rowind, .m_val = p->m_val,
                           .h_colptr = p->h_colptr, .h_rowind = p->h_rowind, .h_val = p->h_val,
                           .f = g->f, .w = g->w, .mu = g->mu};
    return 0;
}

/* |W x - H^T H x| / |x| for a fixed x with entries of both signs and varied sizes, W the dense
 * (symmetrized) copy. x, y: [3 nc], z: [k] scratch. */
static double factor_error(const fclib_io_problem *p, double *x, double *y, double *z) {
    const int n = 3 * p->nc, k = p->nv;
    for (int i = 0; i < n; i++) {
        x[i] = (i % 2 ? -1.0 : 1.0) / (1 + i % 7);
        y[i] = 0;
    }
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < n; i++) {
            y[i] += p->w_dense[(size_t)j * n + i] * x[j];
        }
    }
    // z = H x (k), then y -= H^T z.
    for (int c = 0; c < k; c++) {
        z[c] = 0;
    }
    for (int j = 0; j < n; j++) {
        for (int q = p->h_colptr[j]; q < p->h_colptr[j + 1]; q++) {
            z[p->h_rowind[q]] += p->h_val[q] * x[j];
        }
    }
    double e = 0;
    for (int j = 0; j < n; j++) {
        double s = y[j];
        for (int q = p->h_colptr[j]; q < p->h_colptr[j + 1]; q++) {
            s -= p->h_val[q] * z[p->h_rowind[q]];
        }
        e += s * s;
    }
    double xx = 0;
    for (int i = 0; i < n; i++) {
        xx += x[i] * x[i];
    }
    return sqrt(e / xx);
}

/* The local problem as read (checked by probe): W dense and symmetric (its symmetric part when
 * the file's is slightly asymmetric), and its global form (fclib_io.h): M = I_k, H = (P L)^T from
 * the pivoted Cholesky P^T W P = L L^T, f = 0, w = q. Returns 0, -1 or -2 (data refused). */
static int load_local(const char *path, fclib_io_problem *p, const shape *W, char *why,
                      size_t whylen) {
    p->raw_local = fclib_read_local(path);
    if (!p->raw_local) {
        return FAIL("libfclib could not read the local problem");
    }
    const struct fclib_local *l = p->raw_local;
    const int n = 3 * p->nc;
    if (check_entries("W", l->W, W, why, whylen) < 0 ||
        check_vector("q", n, l->q, false, why, whylen) < 0 ||
        check_vector("mu", p->nc, l->mu, true, why, whylen) < 0) {
        return -2;
    }
    csc w;
    p->m_mirrored = one_triangle(l->W);
    if (to_csc(l->W, p->m_mirrored, &w) < 0) {
        return FAIL("out of memory");
    }
    p->w_colptr = w.colptr, p->w_rowind = w.rowind, p->w_val = w.val;
    // Dense W, column-major: kept (symmetrized) for ncp, and copied to be factored in place
    // (L in the lower triangle, rank k).
    const size_t nn = (size_t)n;
    p->w_dense = calloc(nn * nn + 1, sizeof *p->w_dense);
    double *A = malloc((nn * nn + 1) * sizeof *A);
    double *work = malloc((cs_psd_work(n) + 3 * nn + 1) * sizeof *work);
    int *piv = malloc((nn + 1) * sizeof *piv), *pos = malloc((nn + 1) * sizeof *pos);
    int r = -1, k = 0;
    if (!p->w_dense || !A || !work || !piv || !pos) {
        snprintf(why, whylen, "out of memory for W (%d x %d, dense)", n, n);
        goto out;
    }
    double *D = p->w_dense;
    for (int j = 0; j < n; j++) {
        for (int q = w.colptr[j]; q < w.colptr[j + 1]; q++) {
            D[(size_t)j * nn + w.rowind[q]] = w.val[q];
        }
    }
    double asym = 0, norm = 0;
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < n; i++) {
            const double d = D[(size_t)j * nn + i] - D[(size_t)i * nn + j];
            asym += d * d;
            norm += D[(size_t)j * nn + i] * D[(size_t)j * nn + i];
        }
    }
    p->asymmetry = norm > 0 ? sqrt(asym / norm) : 0;
    if (p->asymmetry > FCLIB_IO_ASYMMETRY_MAX) {
        r = DATA_FAIL("W is not symmetric (|W - W^T|_F = %.3g of |W|_F, above %.0e): it is the "
                      "Delassus matrix of no mechanical system", p->asymmetry,
                      FCLIB_IO_ASYMMETRY_MAX);
        goto out;
    }
    if (p->asymmetry > 0) {
        // The symmetric part: the nearest symmetric matrix in the Frobenius norm.
        for (int j = 0; j < n; j++) {
            for (int i = j + 1; i < n; i++) {
                const double s = (D[(size_t)j * nn + i] + D[(size_t)i * nn + j]) / 2;
                D[(size_t)j * nn + i] = D[(size_t)i * nn + j] = s;
            }
        }
        p->symmetrized = p->asymmetry > ASYMMETRY_ROUNDING;
    }
    memcpy(A, D, nn * nn * sizeof *A);
    double dmax = 0;
    for (int i = 0; i < n; i++) {
        dmax = fmax(dmax, A[(size_t)i * nn + i]);
    }
    if (cs_psd_factor(n, A, n, piv, &k, RANK_TOL, work) < 0) {
        r = DATA_FAIL("W is not positive semidefinite (a diagonal entry is negative)");
        goto out;
    }
    // Column j of H is row a of L, where piv[a] = j; row a of L has entries in columns
    // c <= min(a, k - 1).
    p->nv = k;
    p->h_colptr = malloc((nn + 1) * sizeof *p->h_colptr);
    p->h_rowind = malloc((nn * (size_t)k + 1) * sizeof *p->h_rowind);
    p->h_val = malloc((nn * (size_t)k + 1) * sizeof *p->h_val);
    p->m_colptr = malloc(((size_t)k + 1) * sizeof *p->m_colptr);
    p->m_rowind = malloc(((size_t)k + 1) * sizeof *p->m_rowind);
    p->m_val = malloc(((size_t)k + 1) * sizeof *p->m_val);
    p->zero = calloc((size_t)k + 1, sizeof *p->zero);
    if (!p->h_colptr || !p->h_rowind || !p->h_val || !p->m_colptr || !p->m_rowind ||
        !p->m_val || !p->zero) {
        snprintf(why, whylen, "out of memory");
        goto out;
    }
    for (int a = 0; a < n; a++) {
        pos[piv[a]] = a;
    }
    int nz = 0;
    for (int j = 0; j < n; j++) {
        p->h_colptr[j] = nz;
        const int a = pos[j];
        for (int c = 0; c <= a && c < k; c++) {
            const double v = A[(size_t)c * nn + a];
            if (v != 0) {
                p->h_rowind[nz] = c;
                p->h_val[nz++] = v;
            }
        }
    }
    p->h_colptr[n] = nz;
    for (int c = 0; c <= k; c++) {
        p->m_colptr[c] = c;
    }
    for (int c = 0; c < k; c++) {
        p->m_rowind[c] = c;
        p->m_val[c] = 1;
    }
    // A positive semidefinite W leaves at most n RANK_TOL max diag(W) unfactored; an indefinite
    // one leaves its negative part.
    const double e = factor_error(p, work, work + nn, work + 2 * nn);
    if (e > 10 * (n * RANK_TOL + 1e-13) * dmax) {
        r = DATA_FAIL("W is not positive semidefinite (|W - L L^T| = %.3g of max diag W at rank "
                      "%d)", e / dmax, k);
        goto out;
    }
    p->g = (cs_sap_global){.nv = k, .nc = p->nc,
                           .m_colptr = p->m_colptr, .m_rowind = p->m_rowind, .m_val = p->m_val,
                           .h_colptr = p->h_colptr, .h_rowind = p->h_rowind, .h_val = p->h_val,
                           .f = p->zero, .w = l->q, .mu = l->mu};
    r = 0;
out:
    free(A);
    free(work);
    free(piv);
    free(pos);
    return r;
}

#undef FAIL
#undef DATA_FAIL

int fclib_io_load(const char *path, fclib_io_problem *ret, char *err, size_t errlen) {
    fclib_io_problem p = {0};
    char why[256];
    shape M, H, W;
    // Our own messages name the file and the problem; HDF5's error stack would only add noise.
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    int r = probe(path, &p, &M, &H, &W, why, sizeof why);
    if (r == 0) {
        r = p.form == FCLIB_IO_GLOBAL ? load_global(path, &p, &M, &H, why, sizeof why)
                                      : load_local(path, &p, &W, why, sizeof why);
    }
    if (r < 0) {
        snprintf(err, errlen, "%s: %s", path, why);
        fclib_io_free(&p);
        return r;
    }
    *ret = p;
    return 0;
}

void fclib_io_free(fclib_io_problem *p) {
    if (p->raw) {
        fclib_delete_global(p->raw);
        free(p->raw);
    }
    if (p->raw_local) {
        fclib_delete_local(p->raw_local);
        free(p->raw_local);
    }
    free(p->w_dense);
    free(p->w_colptr);
    free(p->w_rowind);
    free(p->w_val);
    free(p->zero);
    free(p->m_colptr);
    free(p->m_rowind);
    free(p->m_val);
    free(p->h_colptr);
    free(p->h_rowind);
    free(p->h_val);
    *p = (fclib_io_problem){0};
}

void fclib_io_local_score(const fclib_io_problem *p, const double *r, double *u,
                          cs_coulomb_error *ret) {
    const size_t m = 3 * (size_t)p->nc;
    const double *q = p->raw_local->q;
    double qq = 0;
    for (size_t i = 0; i < m; i++) {
        u[i] = q[i];
        qq += q[i] * q[i];
    }
    for (size_t j = 0; j < m; j++) {
        for (int k = p->w_colptr[j]; k < p->w_colptr[j + 1]; k++) {
            u[p->w_rowind[k]] += p->w_val[k] * r[j];
        }
    }
    const double e = cs_coulomb_residual(p->nc, p->raw_local->mu, r, u, sqrt(qq));
    *ret = (cs_coulomb_error){.momentum = 0, .coulomb = e, .total = e};
}

int fclib_io_solve(const fclib_io_problem *p, const cs_options *opt, fclib_io_result *ret,
                   char *err, size_t errlen) {
    const size_t nv = (size_t)p->nv, m = 3 * (size_t)p->nc;
    fclib_io_result res = {0};
    res.v = calloc(nv + 1, sizeof *res.v);
    res.r = calloc(m + 1, sizeof *res.r);
    res.u = calloc(m + 1, sizeof *res.u);
    double *work = malloc((2 * nv + m + 1) * sizeof *work);
    if (!res.v || !res.r || !res.u || !work) {
        free(work);
        fclib_io_result_free(&res);
        snprintf(err, errlen, "out of memory for a problem with %zu dofs", nv);
        return -1;
    }
    const int64_t t0 = cd_clock_ns();
    res.status = cs_sap_global_solve(&p->g, opt, res.v, res.r, res.u, &res.stats);
    res.solve_ns = cd_clock_ns() - t0;
    if (p->form == FCLIB_IO_GLOBAL) {
        // Scored on (v, r) alone, with u recomputed as H^T v + w (Siconos' definition).
        cs_coulomb_global_residual(&p->g, res.v, res.r, work, work + 2 * nv, &res.error);
    } else {
        fclib_io_local_score(p, res.r, work, &res.error);
    }
    free(work);
    *ret = res;
    return 0;
}

/* The pyramid's directions lemke-standard and dantzig solve a local problem on (the daemon's
 * default d). */
#define FCLIB_PYRAMID_DIRS 8

/* lemke-standard on the local problem p through the d-sided pyramid: impulses into r [3 nc]. */
static cs_status solve_pyramid(const fclib_io_problem *p, const cs_options *opt, double *r,
                               cs_stats *st) {
    const cs_limits lim = {.max_bodies = 1, .max_contacts = p->nc, .max_dirs = FCLIB_PYRAMID_DIRS,
                           .solvers = 1u << CS_SOLVER_LEMKE_STANDARD};
    cs_workspace *ws = cs_workspace_new(&lim);
    if (!ws)
        return CS_ENOSPACE;
    const cs_status status =
        cs_lemke_standard_delassus(ws, p->nc, FCLIB_PYRAMID_DIRS, p->w_dense, p->raw_local->q,
                                   p->raw_local->mu, opt, r, st);
    cs_workspace_free(ws);
    return status;
}

/* dantzig on the local problem p: Baraff's bounded problem on W itself, each contact a NORMAL row
 * and a PAIR on the d-sided pyramid bounded by mu times it (what cs_dantzig_solve poses from a
 * model): impulses into r [3 nc]. */
static cs_status solve_bounded(const fclib_io_problem *p, const cs_options *opt, double *r,
                               cs_stats *st) {
    const int n = 3 * p->nc;
    const cs_limits lim = {.max_bodies = 1, .max_contacts = p->nc, .max_dirs = FCLIB_PYRAMID_DIRS,
                           .solvers = 1u << CS_SOLVER_DANTZIG};
    cs_workspace *ws = cs_workspace_new(&lim);
    uint8_t *kind = malloc((size_t)n + 1);
    int *normal = malloc(((size_t)n + 1) * sizeof *normal);
    double *bound = malloc(((size_t)n + 1) * sizeof *bound);
    cs_status status = CS_ENOSPACE;
    if (ws && kind && normal && bound) {
        for (int c = 0; c < p->nc; c++) {
            for (int k = 0; k < 3; k++) {
                kind[3 * c + k] = k == 0 ? CS_DANTZIG_NORMAL : CS_DANTZIG_PAIR;
                normal[3 * c + k] = k == 0 ? -1 : 3 * c;
                bound[3 * c + k] = k == 0 ? 0 : p->raw_local->mu[c];
            }
        }
        const cs_dantzig_problem dp = {.n = n, .A = p->w_dense, .lda = n,
                                       .b = p->raw_local->q, .kind = kind, .normal = normal,
                                       .bound = bound, .nd = FCLIB_PYRAMID_DIRS};
        status = cs_dantzig_mlcp(ws, &dp, opt, r, st);
    }
    free(kind);
    free(normal);
    free(bound);
    cs_workspace_free(ws);
    return status;
}

int fclib_io_solve_local(const fclib_io_problem *p, const cs_options *opt, int max_iterations,
                         fclib_io_result *ret, char *err, size_t errlen) {
    if (p->form != FCLIB_IO_LOCAL) {
        snprintf(err, errlen, "%s takes the local form (W, q, mu) only",
                 cs_solver_name(opt->solver));
        return -1;
    }
    if (opt->solver != CS_SOLVER_NCP && opt->solver != CS_SOLVER_LEMKE_STANDARD &&
        opt->solver != CS_SOLVER_DANTZIG) {
        snprintf(err, errlen, "%s does not take the local form (ncp, lemke-standard, dantzig do)",
                 cs_solver_name(opt->solver));
        return -1;
    }
    const size_t m = 3 * (size_t)p->nc;
    fclib_io_result res = {0};
    res.r = calloc(m + 1, sizeof *res.r);
    res.u = calloc(m + 1, sizeof *res.u);
    const bool ncp = opt->solver == CS_SOLVER_NCP;
    void *scratch =
        ncp ? aligned_alloc(64, (cs_ncp_delassus_size(p->nc) + 64) & ~(size_t)63) : NULL;
    if (!res.r || !res.u || (ncp && !scratch)) {
        free(scratch);
        fclib_io_result_free(&res);
        snprintf(err, errlen, "out of memory for a problem with %d contacts", p->nc);
        return -1;
    }
    const int64_t t0 = cd_clock_ns();
    if (ncp) {
        const cs_ncp_params prm = {.max_iterations = max_iterations > 0 ? max_iterations
                                                                        : FCLIB_NCP_ITERATIONS};
        res.status = cs_ncp_delassus(p->nc, p->w_dense, 3 * p->nc, p->raw_local->q,
                                     p->raw_local->mu, NULL, &prm, opt, scratch, res.r, &res.ncp);
        res.stats.iterations = res.ncp.iterations;
    } else {
        res.status = opt->solver == CS_SOLVER_DANTZIG ? solve_bounded(p, opt, res.r, &res.stats)
                                                      : solve_pyramid(p, opt, res.r, &res.stats);
        res.stats.iterations = res.stats.pivots; // a pivoting solver's iterations
    }
    res.solve_ns = cd_clock_ns() - t0;
    free(scratch);
    fclib_io_local_score(p, res.r, res.u, &res.error);
    *ret = res;
    return 0;
}

void fclib_io_result_free(fclib_io_result *ret) {
    free(ret->v);
    free(ret->r);
    free(ret->u);
    *ret = (fclib_io_result){0};
}

int fclib_io_check_output(const char *out, char *err, size_t errlen) {
    struct stat st;
    if (stat(out, &st) == 0) {
        snprintf(err, errlen, "%s: exists; not overwritten", out);
        return -1;
    }
    const char *slash = strrchr(out, '/');
    char dir[4096];
    if (!slash) {
        snprintf(dir, sizeof dir, ".");
    } else if ((size_t)(slash - out) >= sizeof dir) {
        snprintf(err, errlen, "%s: path too long", out);
        return -1;
    } else {
        snprintf(dir, sizeof dir, "%.*s", slash == out ? 1 : (int)(slash - out), out);
    }
    if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: directory %s does not exist", out, dir);
        return -1;
    }
    if (access(dir, W_OK | X_OK) < 0) {
        snprintf(err, errlen, "%s: directory %s is not writable (%s)", out, dir, strerror(errno));
        return -1;
    }
    return 0;
}

int fclib_io_write_solution(const char *out, const fclib_io_problem *p,
                            const fclib_io_result *res, char *err, size_t errlen) {
    if (fclib_io_check_output(out, err, errlen) < 0) {
        return -1;
    }
    // libfclib keeps a solution only in a file that holds its problem: write both. The local
    // form has no v (libfclib reads the sizes from the problem it finds).
    if (p->form == FCLIB_IO_LOCAL ? !fclib_write_local(p->raw_local, out)
                                  : !fclib_write_global(p->raw, out)) {
        snprintf(err, errlen, "%s: libfclib could not write the problem", out);
        return -1;
    }
    struct fclib_solution sol = {.v = p->form == FCLIB_IO_LOCAL ? NULL : res->v, .r = res->r,
                                 .u = res->u};
    if (!fclib_write_solution(&sol, out)) {
        snprintf(err, errlen, "%s: libfclib could not write the solution", out);
        return -1;
    }
    return 0;
}
