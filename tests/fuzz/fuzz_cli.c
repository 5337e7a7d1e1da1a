/* libFuzzer target: the ggemm command line and the problem model behind `ggemm problem`.
 * An input is an argument vector, one argument per line (an empty line is an empty argument;
 * a NUL ends its argument early, as it would in a real argv). For every input:
 *   - a refusal carries exactly one non-empty line;
 *   - an accepted `problem` command builds its problem, and the model's properties hold
 *     (tests/model_props.c: rows partitioned, no tile across an expert, closed forms).
 * Anything else (a crash, a sanitizer report, a broken property) aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gg_harness.h"
#include "model_props.h"

#define MAX_ARGS 48

static GgOptions options; /* 16 KiB of --m-list: static, not on libFuzzer's stack */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *argv[MAX_ARGS + 1] = {"ggemm"};
    int argc = 1;
    for (char *line = text; argc < MAX_ARGS;) {
        char *end = memchr(line, '\n', (size_t)(text + size - line));
        argv[argc++] = line;
        if (!end) break;
        *end = '\0';
        line = end + 1;
    }
    char err[256] = "";
    const int rc = gg_parse_args(argc, argv, &options, err, sizeof err);
    if (rc) {
        if (!err[0] || strchr(err, '\n')) {
            fprintf(stderr, "refusal is not one line: '%s'\n", err);
            abort();
        }
    } else if (options.command == GG_CMD_PROBLEM) {
        GgProblem p;
        if (gg_options_problem(&options, &p) == 0) {
            char why[256];
            /* building tile lists is linear in rows: only for small problems, closed forms always */
            if (gg_model_props(&p, p.tokens <= (1 << 16) ? 4096 : 0, why, sizeof why)) {
                fprintf(stderr, "model property broken: %s\n", why);
                abort();
            }
            gg_problem_free(&p);
        }
    }
    free(text);
    return 0;
}
