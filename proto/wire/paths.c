/* SPDX-License-Identifier: MIT */
/* The one place that decides where the daemon listens by default; contactd, contactctl and the
 * client library (cdc_default_socket) all ask here. */
#include "wire/paths.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cd_paths_default_socket(char *buf, size_t len) {
    int n;
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    // systemd's RuntimeDirectory= (a colon-separated list; the first is the unit's own).
    const char *rt = getenv("RUNTIME_DIRECTORY");
    if (rt && rt[0] != '\0' && rt[0] != ':') {
        const size_t dir = strcspn(rt, ":");
        n = snprintf(buf, len, "%.*s/contactd.sock", (int)dir, rt);
    } else if (geteuid() == 0) {
        n = snprintf(buf, len, "%s", CD_SYSTEM_SOCKET);
    } else if (xdg && xdg[0] != '\0') {
        n = snprintf(buf, len, "%s/contactd.sock", xdg);
    } else {
        // No per-user runtime directory (a plain ssh or container shell): fall back to a name
        // that cannot collide with another user's daemon.
        n = snprintf(buf, len, "/tmp/contactd-%u.sock", (unsigned)getuid());
    }
    if (n < 0 || (size_t)n >= len) {
        return -ENAMETOOLONG;
    }
    return 0;
}

int cd_paths_client_socket(char *buf, size_t len) {
    if (access(CD_SYSTEM_SOCKET, F_OK) == 0) {
        const int n = snprintf(buf, len, "%s", CD_SYSTEM_SOCKET);
        return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
    }
    return cd_paths_default_socket(buf, len);
}
