/* SPDX-License-Identifier: MIT */
/* Fuzz target: the varint-delimited framing (wire/framing.h), fed the way a socket delivers bytes:
 * in chunks whose sizes the input's first bytes choose, never more than the framer says it has
 * room for. Every message handed out must lie inside what was fed and within max_msg; after an
 * error the stream is abandoned, as the server does. */
#include <stdlib.h>

#include "fuzz.h"
#include "wire/framing.h"

/* Small enough that oversized prefixes and buffer growth both happen. */
#define MAX_MSG 5000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) {
        return 0;
    }
    const size_t chunk = 1 + data[0] % 64 * (1 + data[1] % 128);
    data += 2;
    size -= 2;
    cd_framer f;
    if (cd_framer_init(&f, MAX_MSG) < 0) {
        return 0;
    }
    size_t fed = 0, taken = 0;
    int r = 0;
    while (fed < size && r >= 0) {
        size_t n = cd_framer_space(&f);
        n = n < chunk ? n : chunk;
        n = n < size - fed ? n : size - fed;
        if (n == 0 || cd_framer_feed(&f, data + fed, n) < 0) {
            abort(); // the framer promised room and has none
        }
        fed += n;
        const uint8_t *msg;
        size_t len;
        while ((r = cd_framer_next(&f, &msg, &len)) == 1) {
            taken += len + 1;
            if (len > MAX_MSG || taken > fed) {
                abort();
            }
        }
    }
    cd_framer_fini(&f);
    return 0;
}
