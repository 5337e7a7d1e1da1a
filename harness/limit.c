/* A time limit per case, for the commands that run many cases (fuzz, grade): a hung kernel
 * cannot be taken back from inside the process, so past the limit the process ends with one
 * line and exit code 1. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "gg_harness.h"

static char message[200];
static size_t message_len;

static void on_alarm(int sig) {
    (void)sig;
    (void)!write(2, message, message_len); /* async-signal-safe, unlike stdio */
    _exit(GG_EXIT_CHECK);
}

void gg_case_limit(const char *text) {
    const int n = snprintf(message, sizeof message, "\n%s\n", text);
    message_len = n < 0 ? 0 : (size_t)n < sizeof message ? (size_t)n : sizeof message - 1;
    signal(SIGALRM, on_alarm);
}

int gg_run_case_limited(int seconds, const GgImpl *impl, const GgProblem *p, const GgDeviceInfo *d,
                        const GgRunOpts *ro, GgCheck *chk, GgTiming *tm, char *why, size_t why_len) {
    alarm((unsigned)seconds);
    const int rc = gg_run_case(impl, p, d, ro, chk, tm, why, why_len);
    alarm(0);
    return rc;
}
