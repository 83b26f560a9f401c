/* SPDX-License-Identifier: MIT */
/* Fuzz target: the scene-file reader (wire/scene_json.h) on arbitrary text. It parses or refuses
 * with a message; a parsed scene is freed. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "solver/contact.h"
#include "wire/scene_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) {
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    cs_scene s;
    char err[256] = "";
    if (cd_scene_json_parse(text, cs_scene_validate, &s, err, sizeof err) == 0) {
        cd_scene_json_free(&s);
    } else if (err[0] == '\0') {
        abort(); // a refusal always says why
    }
    free(text);
    return 0;
}
