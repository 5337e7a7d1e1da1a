/* The case list (harness/cases.csv): which problems a sweep measures, for which kernels. The C
 * harness is its only reader; the torch peer asks `ggemm cases` for the expanded list. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "gg_harness.h"

/* One entry of a --set/--kernels list against a name: equal, or NAME* for every name that starts with NAME. */
static int entry_matches(const char *entry, size_t len, const char *name) {
    if (len > 1 && entry[len - 1] == '*') return !strncmp(entry, name, len - 1);
    return strlen(name) == len && !strncmp(entry, name, len);
}

int gg_in_list(const char *list, const char *name) {
    if (!list) return 1;
    for (const char *p = list; *p;) {
        const size_t len = strcspn(p, ",");
        if (entry_matches(p, len, name)) return 1;
        p += len;
        if (*p) ++p;
    }
    return 0;
}

int gg_case_has(const GgCase *c, const char *name, const char *filter) {
    if (!gg_in_list(filter, name)) return 0;
    if (!strcmp(c->kernels, "all")) return gg_impl_pass(name) == GG_PASS_FORWARD;
    const size_t n = strlen(name);
    for (const char *p = c->kernels; *p;) {
        const size_t len = strcspn(p, " ");
        if (len == n && !strncmp(p, name, n)) return 1;
        if (len > 1 && p[len - 1] == '*' && !strncmp(p, name, len - 1)) return 1; /* a prefix */
        p += len;
        while (*p == ' ') ++p;
    }
    return 0;
}

void gg_cases_free(GgCaseList *l) {
    free(l->cases);
    free(l->text);
    memset(l, 0, sizeof *l);
}

static int push(GgCaseList *l, int *cap, const char *set, int t, int e, int k, int n, double s, const char *kernels) {
    if (l->count == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        GgCase *c = realloc(l->cases, sizeof(GgCase) * (size_t)*cap);
        if (!c) {
            gg_error_set("out of host memory for the case list");
            return GG_EXIT_USAGE;
        }
        l->cases = c;
    }
    GgCase *c = &l->cases[l->count++];
    snprintf(c->set, sizeof c->set, "%s", set);
    c->tokens = t, c->experts = e, c->k = k, c->n = n, c->skew = s;
    c->kernels = kernels;
    return GG_EXIT_OK;
}

/* Every combination of the lists, in the order tokens, k, skew (experts and n outermost). */
static int expand(GgCaseList *l, int *cap, const char *set, const GgIntList *t, const GgIntList *e, const GgIntList *k,
                  const GgIntList *n, const GgDoubleList *s, const char *kernels) {
    for (int ie = 0; ie < e->count; ++ie)
        for (int in = 0; in < n->count; ++in)
            for (int it = 0; it < t->count; ++it)
                for (int ik = 0; ik < k->count; ++ik)
                    for (int is = 0; is < s->count; ++is)
                        if (push(l, cap, set, t->v[it], e->v[ie], k->v[ik], n->v[in], s->v[is], kernels))
                            return GG_EXIT_USAGE;
    return GG_EXIT_OK;
}

/* A field of space-separated integers in [lo, hi], multiples of `align`. */
static int int_field(char *f, long lo, long hi, int align, GgIntList *out) {
    out->count = 0;
    for (char *tok = strtok(f, " "); tok; tok = strtok(NULL, " ")) {
        if (out->count == GG_MAX_LIST || gg_parse_int(tok, lo, hi, &out->v[out->count]) ||
            out->v[out->count] % align)
            return 1;
        out->count++;
    }
    return out->count == 0;
}

static char *trim(char *s) {
    while (isspace((unsigned char)*s)) ++s;
    char *end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1])) *--end = '\0';
    return s;
}

static int read_file(const GgOptions *o, GgCaseList *l, int *cap) {
    const char *path = gg_case_file();
    FILE *f = fopen(path, "r");
    if (!f) {
        gg_error_set("cannot read the case list %s", path);
        return GG_EXIT_USAGE;
    }
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    rewind(f);
    l->text = malloc((size_t)size + 1);
    if (!l->text || fread(l->text, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        gg_error_set("cannot read the case list %s", path);
        return GG_EXIT_USAGE;
    }
    fclose(f);
    l->text[size] = '\0';
    static const char columns[] = "set,tokens,experts,k,n,skews,kernels";
    int line_no = 0, header = 0, rows = 0, used_sets = 0;
    const char *seen[256]; /* the sets read, to check every name of --set against */
    for (char *next = l->text; *next;) {
        char *line = next, *nl = strchr(next, '\n');
        next = nl ? nl + 1 : next + strlen(next);
        if (nl) *nl = '\0';
        ++line_no;
        line = trim(line);
        if (!*line || *line == '#') continue;
        if (!header) { /* the column names: anything else here is not a case list */
            if (strcmp(line, columns)) {
                gg_error_set("%s:%d: expected the header line %s", path, line_no, columns);
                return GG_EXIT_USAGE;
            }
            header = 1;
            continue;
        }
        ++rows;
        char *field[8];
        int nf = 0;
        for (char *p = line; p && nf < 8; ++nf) { /* an eighth field means too many */
            field[nf] = p;
            if ((p = strchr(p, ','))) *p++ = '\0';
        }
        if (nf != 7) {
            gg_error_set("%s:%d: expected 7 comma-separated fields", path, line_no);
            return GG_EXIT_USAGE;
        }
        for (int i = 0; i < 7; ++i) field[i] = trim(field[i]);
        const char *set = field[0], *kernels = field[6];
        if (o->set && !gg_in_list(o->set, set)) continue;
        if (used_sets < (int)(sizeof seen / sizeof seen[0])) seen[used_sets] = set;
        used_sets++;
        GgIntList t, e, k, n;
        GgDoubleList s;
        char bad[96];
        for (char *c = field[5]; *c; ++c)
            if (*c == ' ') *c = ',';
        if (int_field(field[1], 0, GG_MAX_ROWS, 1, &t) || int_field(field[2], 1, GG_MAX_EXPERTS, 1, &e) ||
            int_field(field[3], 8, 1 << 20, 8, &k) || int_field(field[4], 8, 1 << 20, 8, &n) ||
            gg_parse_skews(field[5], &s)) {
            gg_error_set("%s:%d: a shape field is not a list of valid values (K, N multiples of 8)", path, line_no);
            return GG_EXIT_USAGE;
        }
        /* every name must exist: a typo must not silently drop a kernel */
        if (strcmp(kernels, "all") && gg_unknown_kernel(kernels, ' ', bad, sizeof bad)) {
            gg_error_set("%s:%d: unknown kernel '%s'", path, line_no, bad);
            return GG_EXIT_USAGE;
        }
        if (expand(l, cap, set, &t, &e, &k, &n, &s, kernels)) return GG_EXIT_USAGE;
    }
    if (!rows) {
        gg_error_set("%s: no cases (%s)", path,
                     header ? "only the header line" : size ? "only comments and blank lines" : "the file is empty");
        return GG_EXIT_USAGE;
    }
    /* Every name of --set must be a set of the file: a typo must not silently drop cases. */
    for (const char *p = o->set; p && *p;) {
        const size_t len = strcspn(p, ",");
        int found = 0;
        for (int i = 0; i < used_sets && i < (int)(sizeof seen / sizeof seen[0]) && !found; ++i)
            found = entry_matches(p, len, seen[i]);
        if (!found) {
            gg_error_set("--set: no set '%.*s' in %s", (int)(len < 64 ? len : 64), p, path);
            return GG_EXIT_USAGE;
        }
        p += len;
        if (*p) ++p;
    }
    return GG_EXIT_OK;
}

int gg_cases_select(const GgOptions *o, GgCaseList *out) {
    memset(out, 0, sizeof *out);
    int cap = 0, rc;
    if (o->given_tokens || o->given_experts || o->given_k || o->given_n || o->given_skew)
        rc = expand(out, &cap, "cli", &o->tokens, &o->experts, &o->k, &o->n, &o->skews, "all");
    else
        rc = read_file(o, out, &cap);
    if (rc) gg_cases_free(out);
    return rc;
}
