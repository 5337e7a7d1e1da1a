/* The harness's error line: the first thing that went wrong, kept until it is cleared, so the
 * caller several frames up can print one line that names the failing call. */
#include <stdarg.h>
#include <stdio.h>

#include "gg_harness.h"

static char message[512];

void gg_error_set(const char *fmt, ...) {
    if (message[0]) return; /* keep the first: later failures are usually its consequences */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
}

const char *gg_error(void) { return message[0] ? message : "unknown error"; }

void gg_error_clear(void) { message[0] = '\0'; }
