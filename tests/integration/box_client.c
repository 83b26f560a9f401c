/* SPDX-License-Identifier: MIT */
/* The smallest complete libcontactd-client program (README "Use it from C" shows it), built by
 * it_pkgconfig.sh outside meson with `pkg-config --cflags --libs libcontactd-client` only: a
 * 2 kg box resting on a plane, one frame, its Result. Prints the normal force and exits 0 when
 * the answer is certified and carries the weight. Usage: box_client [SOCKET] (default: the
 * default socket; "-" makes no connection and only asks for the default path). */
#include <contactd/client.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    char path[256], err[256];
    if (cdc_default_socket(path, sizeof path) < 0)
        return 1;
    if (argc > 1 && strcmp(argv[1], "-") == 0)
        return printf("default socket: %s\n", path) < 0;
    const cdc_hello hello = {.request_mode = true, .limits = {.max_bodies = 1, .max_contacts = 1}};
    cdc_conn *c;
    if (cdc_conn_open_unix(argc > 1 ? argv[1] : path, &hello, 2000000000, &c, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    const cdc_body box = {.id = 1, .mass = 2, .inertia = {0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01},
                          .pos = {0, 0, 0.1}, .quat = {1, 0, 0, 0}};
    const cdc_contact floor = {.id = 1, .body_a = 1, .normal = {0, 0, 1}, .mu = 0.5};
    const cdc_frame f = {.seq = 1, .dt = 1e-3, .gravity = {0, 0, -9.81}, .nb = 1, .nc = 1,
                         .bodies = &box, .contacts = &floor};
    cdc_msg m;
    int ok = cdc_frame_send(c, &f) == 0 && cdc_msg_recv(c, 2000000000, &m) == 1 &&
             m.kind == CDC_MSG_RESULT && m.result.status == CDC_STATUS_OK;
    if (ok) {
        printf("normal force %.3f N (%s)\n", m.result.contacts[0].force[2],
               cdc_status_name(m.result.status));
        ok = fabs(m.result.contacts[0].force[2] - 2 * 9.81) < 1e-3;
    }
    cdc_conn_close(c);
    return ok ? 0 : 1;
}
