/* SPDX-License-Identifier: MIT */
/* The one place that decides where the daemon listens by default; contactd, contactctl, the demo
 * and the client library all ask here. */
#include "sys/paths.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int cd_paths_default_socket(char *buf, size_t len) {
    int n;
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    if (geteuid() == 0) {
        n = snprintf(buf, len, "/run/contactd/contactd.sock");
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
