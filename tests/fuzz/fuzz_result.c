/* SPDX-License-Identifier: MIT */
/* Fuzz target: the client library reading one ServerMessage's bytes (clients/c/result.h). The fast
 * way must take only what protobuf-c's unpack and the general conversion read as a Result, and
 * give the same cdc_result; nothing may crash, leak or read out of bounds whatever the bytes (a
 * daemon of another version, or anything that answers on its port). */
#include <stdbool.h>
#include <stdlib.h>

#include "contactd.pb-c.h"
#include "fuzz.h"
#include "result.h"
#include "result_same.h"

// The arrays of a session granted 8 bodies, 32 contacts and 4 joints.
enum { BODIES = 8, CONTACTS = 32, JOINTS = 4 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static cdc_result_store fast_st, general_st;
    if (cdc_result_store_grow(&fast_st, BODIES, CONTACTS, JOINTS) < 0) {
        return 0;
    }
    cdc_result fast, general;
    const bool taken = cdc_result_decode(&fast_st, data, size, &fast) == 1;
    Contactd__V1__ServerMessage *m = contactd__v1__server_message__unpack(NULL, size, data);
    const bool read = m && m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT &&
                      cdc_result_from_message(&general_st, m->result, &general) == 0;
    if (taken && (!read || !t_result_same(&fast, &general))) {
        abort();
    }
    if (m) {
        contactd__v1__server_message__free_unpacked(m, NULL);
    }
    return 0;
}
