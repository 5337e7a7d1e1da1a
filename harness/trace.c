/* Traces decoded and summarised (gg_harness.h, common/gg_trace.h). Plain C, no GPU: the CPU test
 * (tests/suite_trace.c) feeds it synthetic events. Times are %globaltimer nanoseconds; every
 * output counts them from the first CTA's entry. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "gg_harness.h"
#include "gg_wgrad.h"

/* The most CTAs one SM holds at once (Hopper: 32); a CTA slot is below it. */
#define MAX_SLOTS 32

long gg_trace_capacity(const GgKernelInfo *info, const GgLaunch *l) {
    long tiles, ctas;
    if (info->host_tiles) {
        tiles = ctas = l->num_tiles;  /* one CTA per tile of the host list */
    } else if (info->pass == GG_PASS_WGRAD) {
        /* k5_wgrad: one event per role and work item (the count: the tiles' order, hence L2, aside). */
        const GgWgradParams w =
            gg_wgrad_params(l->experts, l->tokens, l->k, l->n, info->block_m, info->block_n, l->num_sms, 0);
        tiles = gg_wgrad_max_items(&w);
        ctas = l->num_sms;
    } else {
        /* The adaptive policy has ceil(m / 128) row tiles too; a row pair rounds an expert's
         * row tiles up to even (+ experts), a column pair its column blocks (+ 1). */
        const int tile_m = info->block_m > 0 ? info->block_m : 128;
        const int cols = info->pass == GG_PASS_DGRAD ? l->k : l->n; /* the output's row length */
        long rows = (long)l->tokens / tile_m + l->experts;
        if (rows > l->tokens) rows = l->tokens;
        tiles = (rows + l->experts) * ((cols + info->block_n - 1) / info->block_n + 1);
        ctas = l->num_sms;  /* a persistent grid: at most one CTA per SM */
        /* k5_dgrad_tail_*, which the entry point k5_dgrad may run: at most a grid of pieces more */
        if (info->pass == GG_PASS_DGRAD) tiles += ctas;
    }
    return tiles * GG_TRACE_ROLES + ctas;
}

const char *gg_trace_role_name(int role, char *buf, size_t len) {
    if (role == GG_TRACE_SETUP) snprintf(buf, len, "setup");
    else if (role == GG_TRACE_PRODUCER) snprintf(buf, len, "producer");
    else snprintf(buf, len, "consumer%d", role - GG_TRACE_CONSUMER);
    return buf;
}

static uint64_t first_start(const GgTraceEvent *ev, long n) {
    uint64_t t0 = UINT64_MAX;
    for (long i = 0; i < n; ++i)
        if (ev[i].start < t0) t0 = ev[i].start;
    return t0;
}

typedef struct {
    int sm;
    uint64_t start, end;
    int id; /* CTA (lanes) or unused (busy intervals) */
} Span;

static int by_sm_then_start(const void *x, const void *y) {
    const Span *a = x, *b = y;
    if (a->sm != b->sm) return a->sm < b->sm ? -1 : 1;
    return (a->start > b->start) - (a->start < b->start);
}

int gg_trace_lanes(const GgTraceEvent *ev, long n, int *lane) {
    int ctas = 0;
    for (long i = 0; i < n; ++i)
        if (ev[i].cta >= ctas) ctas = ev[i].cta + 1;
    Span *cta = malloc(sizeof(Span) * (size_t)(ctas + 1));
    int *slot = malloc(sizeof(int) * (size_t)(ctas + 1));
    if (!cta || !slot) {
        free(cta);
        free(slot);
        gg_error_set("out of host memory for %d CTAs", ctas);
        return GG_EXIT_USAGE;
    }
    for (int c = 0; c < ctas; ++c) cta[c] = (Span){INT_MAX, UINT64_MAX, 0, c};
    for (long i = 0; i < n; ++i) { /* a CTA's span: its first start to its last end */
        Span *c = &cta[ev[i].cta];
        c->sm = ev[i].sm;
        if (ev[i].start < c->start) c->start = ev[i].start;
        if (ev[i].end > c->end) c->end = ev[i].end;
    }
    qsort(cta, (size_t)ctas, sizeof(Span), by_sm_then_start);
    uint64_t free_at[MAX_SLOTS];
    for (int c = 0; c < ctas; ++c) {
        if (c == 0 || cta[c].sm != cta[c - 1].sm) memset(free_at, 0, sizeof free_at);
        int s = 0;
        while (s < MAX_SLOTS - 1 && free_at[s] > cta[c].start) ++s;
        free_at[s] = cta[c].end;
        slot[cta[c].id] = s;
    }
    for (long i = 0; i < n; ++i) lane[i] = slot[ev[i].cta];
    free(cta);
    free(slot);
    return GG_EXIT_OK;
}

int gg_trace_summarize(const GgTraceEvent *ev, long n, int sms, GgTraceSummary *s) {
    memset(s, 0, sizeof *s);
    if (n <= 0) {
        gg_error_set("the trace has no events");
        return GG_EXIT_USAGE;
    }
    const uint64_t t0 = first_start(ev, n);
    uint64_t t1 = 0;
    int max_sm = 0;
    long busy_n = 0;
    for (long i = 0; i < n; ++i) {
        if (ev[i].end > t1) t1 = ev[i].end;
        if (ev[i].sm > max_sm) max_sm = ev[i].sm;
        busy_n += ev[i].role >= GG_TRACE_CONSUMER && ev[i].computed;
    }
    /* Busy: an SM with at least one consumer computing a tile, the union over its consumers. */
    Span *busy = malloc(sizeof(Span) * (size_t)(busy_n + 1));
    double *sm_busy = calloc((size_t)max_sm + 1, sizeof(double));
    uint64_t *sm_last = calloc((size_t)max_sm + 1, sizeof(uint64_t));
    char *present = calloc((size_t)max_sm + 1, 1);
    if (!busy || !sm_busy || !sm_last || !present) {
        free(busy);
        free(sm_busy);
        free(sm_last);
        free(present);
        gg_error_set("out of host memory for %ld events", n);
        return GG_EXIT_USAGE;
    }
    long b = 0;
    for (long i = 0; i < n; ++i)
        if (ev[i].role >= GG_TRACE_CONSUMER && ev[i].computed)
            busy[b++] = (Span){ev[i].sm, ev[i].start, ev[i].end, 0};
    qsort(busy, (size_t)b, sizeof(Span), by_sm_then_start);
    int cur = -1; /* the SM whose merged run [lo, hi] is open */
    uint64_t lo = 0, hi = 0;
    for (long i = 0; i <= b; ++i) {
        if (i < b && busy[i].sm == cur && busy[i].start <= hi) {
            if (busy[i].end > hi) hi = busy[i].end;
            continue;
        }
        if (cur >= 0) {
            sm_busy[cur] += (double)(hi - lo);
            if (hi > sm_last[cur]) sm_last[cur] = hi;
        }
        if (i == b) break;
        cur = busy[i].sm;
        lo = busy[i].start;
        hi = busy[i].end;
    }
    int seen = 0, used = 0;
    double total = 0, most = 0;
    uint64_t first_idle = UINT64_MAX;
    for (int sm = 0; sm <= max_sm; ++sm) {
        if (sm_busy[sm] <= 0) continue;
        ++used;
        total += sm_busy[sm];
        if (sm_busy[sm] > most) most = sm_busy[sm];
        if (sm_last[sm] < first_idle) first_idle = sm_last[sm];
    }
    for (long i = 0; i < n; ++i) /* distinct SM ids, in case they outnumber the device's SMs */
        if (!present[ev[i].sm]) {
            present[ev[i].sm] = 1;
            ++seen;
        }
    s->sms = sms > seen ? sms : seen;
    s->sms_idle = s->sms - used;
    s->tiles = b;
    s->kernel_us = (double)(t1 - t0) / 1e3;
    if (used > 0) {
        const double span = (double)(t1 - t0);
        s->busy_fraction = span > 0 ? total / (span * s->sms) : 0;
        s->first_idle_us = (double)(first_idle - t0) / 1e3;
        s->tail_us = (double)(t1 - first_idle) / 1e3;
        s->imbalance = most / (total / s->sms);
    }
    free(busy);
    free(sm_busy);
    free(sm_last);
    free(present);
    return GG_EXIT_OK;
}

/* trace.csv's columns, in order: the writer's header and the reader's check come from here. */
enum { CSV_FIELDS = 13 };
static const char *const csv_columns[CSV_FIELDS] = {"sm",   "lane", "cta",      "role",     "tile",    "expert", "row0",
                                                    "rows", "col0", "computed", "start_ns", "mark_ns", "end_ns"};
/* The largest %smid the reader takes: the JSON writer keeps a flag per SM, slot and role. */
#define MAX_SM 65535

int gg_trace_write_csv(FILE *f, const GgTraceEvent *ev, long n) {
    int *lane = malloc(sizeof(int) * (size_t)(n + 1));
    if (!lane || gg_trace_lanes(ev, n, lane)) {
        if (!lane) gg_error_set("out of host memory for %ld events", n);
        free(lane);
        return GG_EXIT_USAGE;
    }
    const uint64_t t0 = first_start(ev, n);
    for (int c = 0; c < CSV_FIELDS; ++c) fprintf(f, "%s%s", c ? "," : "", csv_columns[c]);
    fputc('\n', f);
    for (long i = 0; i < n; ++i) {
        const GgTraceEvent *e = &ev[i];
        char role[32];
        fprintf(f, "%d,%d,%d,%s,%d,%d,%d,%d,%d,%d,%llu,%llu,%llu\n", e->sm, lane[i], e->cta,
                gg_trace_role_name(e->role, role, sizeof role), e->tile, e->expert, e->row0, e->rows, e->col0,
                e->computed, (unsigned long long)(e->start - t0), (unsigned long long)(e->mark - t0),
                (unsigned long long)(e->end - t0));
    }
    free(lane);
    return GG_EXIT_OK;
}

/* gg_trace_role_name backwards; 0, or -1 for a name it never writes. */
static int role_from_name(const char *s, int *role) {
    if (!strcmp(s, "setup")) *role = GG_TRACE_SETUP;
    else if (!strcmp(s, "producer")) *role = GG_TRACE_PRODUCER;
    else if (!strncmp(s, "consumer", 8) && s[8] >= '0' && s[8] < '0' + GG_TRACE_ROLES - 1 && !s[9])
        *role = GG_TRACE_CONSUMER + (s[8] - '0');
    else return -1;
    return 0;
}

/* A whole field as a decimal integer in [lo, hi]: digits, a '-' only in front (no blanks, no '+'). */
static int field_int(const char *s, long long lo, long long hi, long long *v) {
    const char *d = *s == '-' ? s + 1 : s;
    if (*d < '0' || *d > '9') return -1;
    errno = 0;
    char *end;
    *v = strtoll(s, &end, 10);
    return errno || *end || *v < lo || *v > hi ? -1 : 0;
}

/* One row of trace.csv into e and *lane; 0, or -1 with one line in gg_error(). */
static int parse_row(char *line, const char *path, long line_no, GgTraceEvent *e, int *lane) {
    char *field[CSV_FIELDS];
    int count = 0;
    for (char *p = line;; ++p) {
        if (count < CSV_FIELDS) field[count] = p;
        ++count;
        p += strcspn(p, ",");
        if (!*p) break;
        *p = '\0';
    }
    if (count != CSV_FIELDS) {
        gg_error_set("%s:%ld: %d fields, a trace.csv row has %d", path, line_no, count, CSV_FIELDS);
        return -1;
    }
    /* The tile's fields are whatever int32 the kernel stored; times are ns from the first entry,
     * and 2^62 ns is 146 years. */
    static const long long lo[CSV_FIELDS] = {0, 0, 0, 0, INT_MIN, INT_MIN, INT_MIN, INT_MIN, INT_MIN, 0, 0, 0, 0};
    static const long long hi[CSV_FIELDS] = {MAX_SM,  MAX_SLOTS - 1, INT_MAX,   0,         INT_MAX,  INT_MAX, INT_MAX,
                                             INT_MAX, INT_MAX,       1,         1LL << 62, 1LL << 62, 1LL << 62};
    long long v[CSV_FIELDS] = {0};
    for (int c = 0; c < CSV_FIELDS; ++c) {
        if (c == 3) {
            int role;
            if (role_from_name(field[c], &role)) {
                gg_error_set("%s:%ld: role '%s' is not setup, producer or consumer0..consumer%d", path, line_no,
                             field[c], GG_TRACE_ROLES - 2);
                return -1;
            }
            v[c] = role;
        } else if (field_int(field[c], lo[c], hi[c], &v[c])) {
            if (c >= 10) gg_error_set("%s:%ld: %s '%s' is not a time in ns (an integer >= 0)", path, line_no,
                                      csv_columns[c], field[c]);
            else gg_error_set("%s:%ld: %s '%s' is not an integer in [%lld, %lld]", path, line_no, csv_columns[c],
                              field[c], lo[c], hi[c]);
            return -1;
        }
    }
    if (!(v[10] <= v[11] && v[11] <= v[12])) {
        gg_error_set("%s:%ld: start_ns %lld, mark_ns %lld, end_ns %lld are not in order", path, line_no, v[10], v[11],
                     v[12]);
        return -1;
    }
    memset(e, 0, sizeof *e);
    e->sm = (int32_t)v[0];
    *lane = (int)v[1];
    e->cta = (int32_t)v[2];
    e->role = (int32_t)v[3];
    e->tile = (int32_t)v[4];
    e->expert = (int32_t)v[5];
    e->row0 = (int32_t)v[6];
    e->rows = (int32_t)v[7];
    e->col0 = (int32_t)v[8];
    e->computed = (int32_t)v[9];
    e->start = (uint64_t)v[10];
    e->mark = (uint64_t)v[11];
    e->end = (uint64_t)v[12];
    return 0;
}

int gg_trace_read_csv(const char *path, GgTraceEvent **events, int **lanes, long *count) {
    *events = NULL;
    *lanes = NULL;
    *count = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        gg_error_set("cannot read %s: %s", path, strerror(errno));
        return GG_EXIT_USAGE;
    }
    GgTraceEvent *ev = NULL;
    int *lane = NULL;
    long n = 0, room = 0, line_no = 0;
    char line[512];
    int rc = GG_EXIT_OK;
    while (!rc && fgets(line, sizeof line, f)) {
        ++line_no;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n') line[--len] = '\0';
        else if (!feof(f)) {
            gg_error_set("%s:%ld: longer than %zu characters, not a trace.csv row", path, line_no, sizeof line - 2);
            rc = GG_EXIT_USAGE;
            break;
        }
        if (len && line[len - 1] == '\r') line[--len] = '\0'; /* a CRLF checkout */
        if (line_no == 1) { /* the header, column by column */
            char *p = line;
            for (int c = 0; !rc && c < CSV_FIELDS; ++c) {
                const size_t w = strlen(csv_columns[c]);
                if (strncmp(p, csv_columns[c], w) || p[w] != (c == CSV_FIELDS - 1 ? '\0' : ',')) rc = GG_EXIT_USAGE;
                p += w + 1;
            }
            if (rc) gg_error_set("%s:1: not a ggemm trace.csv (its header is sm,lane,cta,role,...,end_ns)", path);
            continue;
        }
        if (!len) continue; /* a blank line, as an editor leaves at the end */
        if (n == room) {
            room = room ? 2 * room : 4096;
            GgTraceEvent *e2 = realloc(ev, sizeof *ev * (size_t)room);
            int *l2 = e2 ? realloc(lane, sizeof *lane * (size_t)room) : NULL;
            if (e2) ev = e2;
            if (l2) lane = l2;
            if (!e2 || !l2) {
                gg_error_set("out of host memory for %ld events of %s", room, path);
                rc = GG_EXIT_USAGE;
                break;
            }
        }
        if (parse_row(line, path, line_no, &ev[n], &lane[n])) rc = GG_EXIT_USAGE;
        else ++n;
    }
    if (!rc && ferror(f)) {
        gg_error_set("cannot read %s: %s", path, strerror(errno));
        rc = GG_EXIT_USAGE;
    }
    if (!rc && line_no == 0) {
        gg_error_set("%s: empty, not a ggemm trace.csv", path);
        rc = GG_EXIT_USAGE;
    }
    if (!rc && n == 0) {
        gg_error_set("%s: a header and no events", path);
        rc = GG_EXIT_USAGE;
    }
    fclose(f);
    if (rc) {
        free(ev);
        free(lane);
        return rc;
    }
    *events = ev;
    *lanes = lane;
    *count = n;
    return GG_EXIT_OK;
}

/* s as a JSON string, quoted (a title may be a path). */
static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; ++s) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

/* Chrome's trace-event format, which Perfetto and chrome://tracing open: "X" (complete) events
 * in microseconds; a tile's wait for its first stage (consumers) or for a free stage up to its
 * first load (producer) nests inside the tile as its own slice. What Perfetto's importer reads
 * differently from the format's text is avoided: no displayTimeUnit (some versions took "ns" as
 * the unit of ts), traceEvents before any other key (some skipped the rest after one they did
 * not know), no id 0 (pid 0 is the kernel's idle task, tid 0 was merged with tid 1): SM s is
 * pid 1000 + s, named "SM s", and a slot's role is tid 1 + slot x 4 + role. */
int gg_trace_write_json(FILE *f, const GgTraceEvent *ev, const int *lane_in, long n, const char *title) {
    enum { ROLE_SLOTS = GG_TRACE_ROLES + 1, PID0 = 1000 }; /* setup, producer, consumers */
    int max_sm = 0;
    for (long i = 0; i < n; ++i) {
        if (ev[i].sm < 0 || ev[i].sm > MAX_SM || ev[i].role < GG_TRACE_SETUP ||
            ev[i].role >= GG_TRACE_SETUP + ROLE_SLOTS || (lane_in && (lane_in[i] < 0 || lane_in[i] >= MAX_SLOTS))) {
            gg_error_set("event %ld: SM %d, role %d%s: outside what a trace holds", i, ev[i].sm, ev[i].role,
                         lane_in ? ", or its lane" : "");
            return GG_EXIT_USAGE;
        }
        if (ev[i].sm > max_sm) max_sm = ev[i].sm;
    }
    int *lane = lane_in ? NULL : malloc(sizeof(int) * (size_t)(n + 1));
    unsigned char *named = calloc((size_t)(max_sm + 1) * (MAX_SLOTS * ROLE_SLOTS + 1), 1);
    if ((!lane_in && !lane) || !named || (lane && gg_trace_lanes(ev, n, lane))) {
        if ((!lane_in && !lane) || !named) gg_error_set("out of host memory for %ld events", n);
        free(lane);
        free(named);
        return GG_EXIT_USAGE;
    }
    const int *slot = lane_in ? lane_in : lane;
    const uint64_t t0 = first_start(ev, n);
    fputs("{\"traceEvents\": [\n", f);
    const char *sep = "";
    for (long i = 0; i < n; ++i) {
        const GgTraceEvent *e = &ev[i];
        const int r = e->role - GG_TRACE_SETUP, pid = PID0 + e->sm, tid = 1 + slot[i] * ROLE_SLOTS + r;
        char role[32];
        gg_trace_role_name(e->role, role, sizeof role);
        unsigned char *seen = &named[(size_t)e->sm * (MAX_SLOTS * ROLE_SLOTS + 1)]; /* [0]: the SM's process */
        if (!seen[0]) {
            seen[0] = 1;
            fprintf(f, "%s{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"args\": {\"name\": \"SM %d\"}},\n",
                    sep, pid, e->sm);
            fprintf(f, "{\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": %d, \"args\": {\"sort_index\": %d}}",
                    pid, e->sm);
            sep = ",\n";
        }
        if (!seen[tid]) {
            seen[tid] = 1;
            fprintf(f, "%s{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %d, "
                       "\"args\": {\"name\": \"slot %d %s\"}},\n",
                    sep, pid, tid, slot[i], role);
            fprintf(f, "{\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": %d, \"tid\": %d, "
                       "\"args\": {\"sort_index\": %d}}",
                    pid, tid, tid);
            sep = ",\n";
        }
        const double ts = (double)(e->start - t0) / 1e3, mark = (double)(e->mark - t0) / 1e3;
        const double end = (double)(e->end - t0) / 1e3;
        char name[96];
        if (e->role == GG_TRACE_SETUP) snprintf(name, sizeof name, "setup (CTA %d)", e->cta);
        else snprintf(name, sizeof name, "%stile %d: expert %d", e->computed ? "" : "idle ", e->tile, e->expert);
        fprintf(f, "%s{\"ph\": \"X\", \"name\": \"%s\", \"cat\": \"%s\", \"pid\": %d, \"tid\": %d, "
                   "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"cta\": %d, \"tile\": %d, \"expert\": %d, "
                   "\"row0\": %d, \"rows\": %d, \"col0\": %d}}",
                sep, name, role, pid, tid, ts, end - ts, e->cta, e->tile, e->expert, e->row0, e->rows, e->col0);
        sep = ",\n";
        if (e->role != GG_TRACE_SETUP && e->mark > e->start)
            fprintf(f, ",\n{\"ph\": \"X\", \"name\": \"%s\", \"cat\": \"%s\", \"pid\": %d, \"tid\": %d, "
                       "\"ts\": %.3f, \"dur\": %.3f}",
                    e->role == GG_TRACE_PRODUCER ? "to first TMA" : "first full wait", role, pid, tid, ts,
                    mark - ts);
    }
    fputs("\n], \"otherData\": {\"title\": ", f);
    json_string(f, title);
    fputs("}}\n", f);
    free(lane);
    free(named);
    return GG_EXIT_OK;
}
