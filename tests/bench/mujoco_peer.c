/* SPDX-License-Identifier: MIT */
/* MuJoCo's mj_forward on a hinge chain as a peer of the benchmarks (see mujoco_peer.h). */
#include "mujoco_peer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CONTACTD_HAVE_MUJOCO
#include <mujoco/mujoco.h>

struct mujoco_peer {
    mjModel *m;
    mjData *d;
};

/* Bodies per MJCF file: MuJoCo's XML parser (tinyxml2) refuses elements nested deeper than
 * 100 in one file, so the chain is split into files that include the next inside their
 * innermost body (MuJoCo merges included files after parsing). */
#define PART 40

/* Adds a file of len bytes to vfs. */
static int vfs_add(mjVFS *vfs, const char *name, const char *text, size_t len) {
    if (mj_makeEmptyFileVFS(vfs, name, (int)len) != 0)
        return -1;
    memcpy(vfs->filedata[mj_findFileVFS(vfs, name)], text, len);
    return 0;
}

/* The MJCF of the chain as files chain.xml, p1.xml, p2.xml, ... in vfs: body i nested in body
 * i - 1, its frame at its joint. Returns 0, or -1 when memory or the VFS is short. */
static int chain_vfs(mjVFS *vfs, int n, const double *mass, const double *com,
                     const double *inertia, const double *axis, const double *tip,
                     const double g[3], double dt, bool loop) {
    const int parts = (n + PART - 1) / PART;
    for (int k = 0; k < parts; k++) {
        char *xml = NULL, name[32];
        size_t len;
        FILE *f = open_memstream(&xml, &len);
        if (!f)
            return -1;
        fputs("<mujoco model='chain'>\n", f);
        // Stack (mjtNum): dense n x n joint-space work (the loop's Newton solver needs some
        // 8 n^2 at n = 1000) plus slack; short of it MuJoCo refuses the model at compile time.
        if (k == 0)
            fprintf(f, "<compiler angle='radian' inertiafromgeom='false'/>\n<size nstack='%ld'/>\n"
                       "<option timestep='%.17g' gravity='%.17g %.17g %.17g'/>\n<worldbody>\n",
                    8L * n * n + 100000L, dt, g[0], g[1], g[2]);
        const int end = (k + 1) * PART < n ? (k + 1) * PART : n;
        for (int i = k * PART; i < end; i++) {
            const double *p = i ? tip + 3 * (i - 1) : (const double[3]){0, 0, 0};
            const double *c = com + 3 * i, *a = axis + 3 * i, *I = inertia + 9 * i;
            fprintf(f, "<body name='b%d' pos='%.17g %.17g %.17g'>\n"
                       "<joint type='hinge' pos='0 0 0' axis='%.17g %.17g %.17g'/>\n"
                       "<inertial pos='%.17g %.17g %.17g' mass='%.17g' "
                       "fullinertia='%.17g %.17g %.17g %.17g %.17g %.17g'/>\n",
                    i, p[0], p[1], p[2], a[0], a[1], a[2], c[0], c[1], c[2], mass[i], I[0],
                    I[4], I[8], I[1], I[2], I[5]);
        }
        if (k + 1 < parts)
            fprintf(f, "<include file='p%d.xml'/>\n", k + 1);
        for (int i = k * PART; i < end; i++)
            fputs("</body>\n", f);
        if (k == 0) {
            fputs("</worldbody>\n", f);
            if (loop) {
                const double *t = tip + 3 * (n - 1);
                fprintf(f, "<equality><connect body1='b%d' anchor='%.17g %.17g %.17g'/>"
                           "</equality>\n",
                        n - 1, t[0], t[1], t[2]);
            }
        }
        fputs("</mujoco>\n", f);
        if (k == 0)
            snprintf(name, sizeof name, "chain.xml");
        else
            snprintf(name, sizeof name, "p%d.xml", k);
        const int r = fclose(f) == 0 ? vfs_add(vfs, name, xml, len) : -1;
        free(xml);
        if (r < 0)
            return -1;
    }
    return 0;
}

static int warnings(const mjData *d) {
    int w = 0;
    for (int i = 0; i < mjNWARNING; i++)
        w += d->warning[i].number;
    return w;
}
#else
struct mujoco_peer {
    int unused;
};
#endif

bool mujoco_peer_is_built(void) {
#ifdef CONTACTD_HAVE_MUJOCO
    return true;
#else
    return false;
#endif
}

mujoco_peer *mujoco_peer_new(int n, const double *mass, const double *com, const double *inertia,
                             const double *axis, const double *tip, const double g[3], double dt,
                             bool loop, char *err, size_t len) {
#ifdef CONTACTD_HAVE_MUJOCO
    mjVFS *vfs = malloc(sizeof(*vfs));
    mujoco_peer *m = calloc(1, sizeof(*m));
    if (!vfs || !m) {
        snprintf(err, len, "out of memory");
        goto out;
    }
    mj_defaultVFS(vfs);
    if (chain_vfs(vfs, n, mass, com, inertia, axis, tip, g, dt, loop) == 0)
        m->m = mj_loadXML("chain.xml", vfs, err, (int)len);
    else
        snprintf(err, len, "out of memory for the MJCF");
    mj_deleteVFS(vfs);
    m->d = m->m ? mj_makeData(m->m) : NULL;
out:
    free(vfs);
    if (m && !m->d) {
        mujoco_peer_free(m);
        m = NULL;
    }
    return m;
#else
    (void)n, (void)mass, (void)com, (void)inertia, (void)axis, (void)tip, (void)g, (void)dt;
    (void)loop;
    snprintf(err, len, "not built with MuJoCo");
    return NULL;
#endif
}

void mujoco_peer_free(mujoco_peer *m) {
    if (!m)
        return;
#ifdef CONTACTD_HAVE_MUJOCO
    if (m->d)
        mj_deleteData(m->d);
    if (m->m)
        mj_deleteModel(m->m);
#endif
    free(m);
}

void mujoco_peer_load(mujoco_peer *m, const double *q, const double *qd) {
#ifdef CONTACTD_HAVE_MUJOCO
    memcpy(m->d->qpos, q, (size_t)m->m->nq * sizeof(double));
    memcpy(m->d->qvel, qd, (size_t)m->m->nv * sizeof(double));
#else
    (void)m, (void)q, (void)qd;
#endif
}

int mujoco_peer_forward(mujoco_peer *m, double *qdd) {
#ifdef CONTACTD_HAVE_MUJOCO
    const int w = warnings(m->d);
    mj_forward(m->m, m->d);
    memcpy(qdd, m->d->qacc, (size_t)m->m->nv * sizeof(double));
    return warnings(m->d) - w;
#else
    (void)m, (void)qdd;
    return 0;
#endif
}
