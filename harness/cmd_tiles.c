/* ggemm tiles: a schedule's work list as CSV, from the functions the kernels run, no GPU.
 *
 * --pass wgrad (the default): k5_wgrad's work list (common/gg_wgrad.h); --kernel NAME of a wgrad
 * kernel: that kernel's, with its tile (k5_wgrad_m256: 256 rows of k) and its deal. One row per item, in
 * list order: the CTA that takes it (the round robin: item t on CTA t % grid; the dynamic deal: the
 * CTA free first if every CTA reduces a block in the same time, write_list), the
 * expert, the output tile as K and N block, the split, the reduction rows, the fp32 slot and
 * ticket of a split tile, and where the item sits in its CTA's sequence measured in 64-row
 * reduction blocks (start, end: work, not time). The fix-up of a split tile is done by whichever
 * split draws the last ticket; fixup_cta is the CTA that does it when every CTA reduces a block
 * in the same time, a tie going to the later split (the sum is the same bits whoever adds it).
 *
 * --kernel NAME (a persistent forward configuration of k3_wgmma, or the entry point, which
 * lists what its cost model picks for this shape on N SMs; or a dgrad configuration k5_dgrad_*,
 * or k5_dgrad, whose tiles are k3's over dA: K = n, N = k, the columns those of k): the device
 * schedule's tiles (common/gg_schedule.h), tile t on CTA t % grid with the grid of
 * gg_persistent_clusters. One row per tile: the CTA, the expert, its rows (row0, valid rows, rows
 * computed), its columns (col0, valid width), the CTA's B stream before and after it in columns of
 * B loaded (start, end: every tile loads K rows of its valid columns; the cost model's B share is
 * the largest end over the mean) and its k-blocks (kb0, kb1). A kernel that splits its last wave
 * (k5_dgrad_tail_*: gg_tail_item) lists the full waves' tiles, then each tail tile's `splits`
 * pieces, item w on CTA w % grid, a piece's columns counted for its share of the k-blocks.
 *
 * The first line, '# key=value,...', gives the list's parameters; plots/diagrams.py and
 * plots/k3_grid.py read it. */
#include <stdlib.h>
#include <string.h>

#include "gg_commands.h"
#include "gg_launch.h"
#include "gg_schedule.h"
#include "gg_wgrad.h"
#include "k5_backward/k5_backward.h"

/* The SMs of the GPUs the results come from (H100 SXM, H200): the grid when --sms is not given. */
#define TILES_DEFAULT_SMS 132
/* The H200's L2 (results/h200/sweep.csv's l2_bytes) in MiB: a wgrad list's tile order when
 * --l2-mib is not given. */
#define TILES_DEFAULT_L2_MIB 60

/* The deal: gg_wgrad_deal's model, the round robin or (dynamic_deal) the dynamic deal; chunk > 0
 * replaces gg_wgrad_chunk's (--chunk: what a different split rule would list). */
static int write_list(const GgProblem *pr, int sms, long l2_bytes, int tile_m, int tile_n, int dynamic_deal,
                      int chunk) {
    GgWgradParams p = gg_wgrad_params(pr->experts, pr->tokens, pr->k, pr->n, tile_m, tile_n, sms, l2_bytes);
    if (chunk > 0) p.chunk = chunk;
    const int grid = gg_wgrad_grid(&p, sms);
    int *item_start = malloc(sizeof(int) * (size_t)(pr->experts + 1));
    int *slot_start = malloc(sizeof(int) * (size_t)(pr->experts + 1));
    int *deal_state = calloc(3 * (size_t)(grid > 0 ? grid : 1), sizeof(int)); /* gg_wgrad_deal's three arrays */
    if (!item_start || !slot_start || !deal_state) {
        free(item_start), free(slot_start), free(deal_state);
        return 1;
    }
    GgWgradDeal deal = {grid, dynamic_deal, deal_state, deal_state + grid, deal_state + 2 * grid};
    gg_wgrad_tables(&p, pr->m, item_start, slot_start); /* the kernel's two prefix sums */
    int split_tiles = 0, k_first_experts = 0;
    for (int e = 0; e < pr->experts; ++e) {
        split_tiles += gg_wgrad_splits(&p, pr->m[e]) > 1 ? p.tiles : 0;
        k_first_experts += gg_wgrad_k_first(&p, pr->m[e]);
    }
    const int items = item_start[pr->experts];
    GgWgradItem *list = malloc(sizeof(GgWgradItem) * (size_t)(items > 0 ? items : 1));
    int *start = malloc(sizeof(int) * (size_t)(items > 0 ? items : 1));
    int *cta = malloc(sizeof(int) * (size_t)(items > 0 ? items : 1));
    if (!list || !start || !cta) {
        free(item_start), free(slot_start), free(deal_state), free(list), free(start), free(cta);
        return 1;
    }
    for (int t = 0; t < items; ++t) {
        list[t] = gg_wgrad_at(&p, item_start, slot_start, pr->offsets, t);
        cta[t] = gg_wgrad_deal(&deal, t, gg_wgrad_cdiv(list[t].rows, GG_WGRAD_BLOCK_R), &start[t]);
    }
    printf("# pass=wgrad,tokens=%d,experts=%d,k=%d,n=%d,tile_m=%d,tile_n=%d,block_r=%d,sms=%d,grid=%d,chunk=%d,"
           "items=%d,split_tiles=%d,slots=%d,workspace_bytes=%ld,deal=%s,l2_bytes=%ld,dc_stays_rows=%d,"
           "a_stays_rows=%d,k_first_experts=%d,m_e=",
           pr->tokens, pr->experts, pr->k, pr->n, p.tile_m, p.tile_n, GG_WGRAD_BLOCK_R, sms, grid, p.chunk, items,
           split_tiles, slot_start[pr->experts], items > 0 ? gg_wgrad_workspace_bytes(&p) : 0L,
           dynamic_deal ? "dynamic" : "round_robin", l2_bytes, p.dc_stays_rows, p.a_stays_rows, k_first_experts);
    for (int e = 0; e < pr->experts; ++e) printf("%s%d", e ? " " : "", pr->m[e]);
    puts("\nitem,cta,expert,tile,k_block,n_block,split,splits,row0,rows,start,end,slot,ticket,fixup_cta");
    for (int t = 0; t < items; ++t) {
        const GgWgradItem *it = &list[t];
        const int blocks = gg_wgrad_cdiv(it->rows, GG_WGRAD_BLOCK_R);
        int fixup = -1;
        if (it->splits > 1) { /* the tile's splits are adjacent: items t - split .. */
            const int first = t - it->split;
            for (int s = 0, last = -1; s < it->splits; ++s) {
                const int u = first + s, end = start[u] + gg_wgrad_cdiv(list[u].rows, GG_WGRAD_BLOCK_R);
                if (end >= last) last = end, fixup = cta[u];
            }
        }
        printf("%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d\n", t, cta[t], it->expert, it->tile,
               it->m0 / p.tile_m, it->col0 / p.tile_n, it->split, it->splits, it->row0, it->rows, start[t],
               start[t] + blocks, it->slot, it->ticket, fixup);
    }
    free(item_start), free(slot_start), free(deal_state), free(list), free(start), free(cta);
    return 0;
}

/* The device schedule's tiles for impl's configuration (persistent, no cluster) over the GEMM pr
 * (dgrad: k and n swapped); the header names the pass and the problem's own k and n. */
static int write_tiles(const GgProblem *pr, const GgImpl *impl, int sms, const char *pass, int k, int n) {
    enum { TILE_M = 128 }; /* k3's schedule: 128-row tiles, 64-row remainders when adaptive */
    const GgKernelInfo *info = &impl->info;
    const GgSchedParams p = gg_sched_params(pr->experts, pr->tokens, pr->n, info->block_n, info->block_m == 0,
                                            GG_PAIR_NONE, GG_SCHED_MAX_GROUPS);
    const int grid = (int)gg_persistent_clusters(sms, pr->tokens, pr->experts, pr->n, TILE_M, info->block_n);
    int *row_start = malloc(sizeof(int) * (size_t)(p.groups + 1));
    int *entry_start = malloc(sizeof(int) * (size_t)(p.groups + 1));
    double *stream = calloc((size_t)grid, sizeof(double));
    if (!row_start || !entry_start || !stream) {
        free(row_start), free(entry_start), free(stream);
        return 1;
    }
    entry_start[0] = 0; /* what TileSchedule::build puts in shared memory */
    for (int g = 0; g <= p.groups; ++g) {
        row_start[g] = gg_sched_group_row(pr->offsets, &p, g);
        if (g < p.groups)
            entry_start[g + 1] = entry_start[g] + gg_sched_group_entries(pr->offsets, &p, g, TILE_M, GG_SCHED_MAX_SPAN);
    }
    const int tiles = entry_start[p.groups], k_blocks = (pr->k + 63) / 64;
    /* a kernel that splits its last wave (k5_dgrad_tail_*) lists items: whole tiles, then pieces */
    const int splits = info->tail_split ? gg_tail_splits(tiles, grid, k_blocks) : 1;
    const int items = gg_tail_items(tiles, grid, splits);
    printf("# pass=%s,kernel=%s,tokens=%d,experts=%d,k=%d,n=%d,tile_m=%d,block_n=%d,adaptive=%d,sms=%d,grid=%d,"
           "tiles=%d,splits=%d,m_e=",
           pass, impl->kernel->name, pr->tokens, pr->experts, k, n, TILE_M, info->block_n, info->block_m == 0, sms,
           grid, tiles, splits);
    for (int e = 0; e < pr->experts; ++e) printf("%s%d", e ? " " : "", pr->m[e]);
    /* start, end: the CTA's columns so far, a piece counting its share of the k-blocks */
    puts("\ntile,cta,expert,row0,rows,height,col0,width,start,end,kb0,kb1");
    for (int w = 0; w < items; ++w) {
        const GgTailItem it = gg_tail_item(tiles, grid, splits, k_blocks, w);
        const GgSchedTile tile =
            gg_sched_at(row_start, entry_start, pr->offsets, &p, it.tile, 0, TILE_M, GG_SCHED_MAX_SPAN);
        const int width = pr->n - tile.col0 < info->block_n ? pr->n - tile.col0 : info->block_n;
        const double start = stream[w % grid];
        stream[w % grid] += (double)width * (it.kb1 - it.kb0) / k_blocks;
        printf("%d,%d,%d,%d,%d,%d,%d,%d,%.10g,%.10g,%d,%d\n", it.tile, w % grid, tile.expert, tile.row0, tile.rows,
               tile.height, tile.col0, width, start, stream[w % grid], it.kb0, it.kb1);
    }
    free(row_start), free(entry_start), free(stream);
    return 0;
}

/* The tiles of --kernel NAME: a persistent configuration of one CTA per cluster that schedules
 * on the device, k3's or dgrad's (an entry point: the one it picks here). */
static int forward_tiles(const GgOptions *o, const GgShape *shape, int sms) {
    GgImpl impl;
    if (gg_impl_find(o->kernel, &impl)) {
        fprintf(stderr, "ggemm: %s\n", gg_error());
        return GG_EXIT_USAGE;
    }
    if (impl.kernel && impl.kernel->choose_on) {
        const GgGpu gpu = {sms, NULL, 0}; /* on `sms` SMs, no GPU asked */
        char why[1024];
        const char *name = impl.kernel->choose_on(shape, &gpu, why, sizeof why);
        if (!name) {
            fprintf(stderr, "ggemm: %s chose nothing: %s\n", impl.kernel->name, why);
            return GG_EXIT_USAGE;
        }
        if (gg_impl_find(name, &impl)) {
            fprintf(stderr, "ggemm: %s\n", gg_error());
            return GG_EXIT_USAGE;
        }
    }
    const GgKernelInfo *info = &impl.info;
    const int dgrad = impl.kernel && info->pass == GG_PASS_DGRAD && !strncmp(impl.kernel->name, "k5_dgrad_", 9);
    if (!impl.kernel || (info->pass != GG_PASS_FORWARD && !dgrad) || info->host_tiles || info->cluster > 1 ||
        (strncmp(impl.kernel->name, "k3_wgmma", 8) != 0 && !dgrad)) {
        fprintf(stderr, "ggemm: tiles --kernel lists the device schedule of k3_wgmma's persistent configurations "
                        "without clusters (and dgrad's), or a wgrad kernel's work list; %s is neither ('ggemm list')\n",
                o->kernel);
        return GG_EXIT_USAGE;
    }
    char why[256];
    if (!impl.kernel->can_implement(shape, why, sizeof why)) {
        fprintf(stderr, "ggemm: %s\n", why);
        return GG_EXIT_USAGE;
    }
    GgProblem p;
    if (gg_options_problem(o, &p)) {
        fprintf(stderr, "ggemm: %s\n", gg_error());
        return GG_EXIT_USAGE;
    }
    GgProblem gemm = p; /* the GEMM the kernel computes: dgrad's reduction is n, its output k wide */
    if (dgrad) gemm.k = p.n, gemm.n = p.k;
    const int rc = write_tiles(&gemm, &impl, sms, dgrad ? "dgrad" : "forward", p.k, p.n);
    gg_problem_free(&p);
    if (rc) fprintf(stderr, "ggemm: out of host memory for the tile list\n");
    return rc ? GG_EXIT_USAGE : GG_EXIT_OK;
}

int gg_cmd_tiles(const GgOptions *o) {
    const GgShape shape = {o->tokens.v[0], o->experts.v[0], o->k.v[0], o->n.v[0]};
    const int sms = o->sms > 0 ? o->sms : TILES_DEFAULT_SMS;
    /* A wgrad kernel named with --kernel: its own tile (k5_wgrad_m256's 256 rows of k). */
    GgImpl wgrad = {0};
    if (o->kernel && gg_impl_find(o->kernel, &wgrad)) {
        fprintf(stderr, "ggemm: %s\n", gg_error());
        return GG_EXIT_USAGE;
    }
    if (o->kernel && wgrad.kernel && wgrad.info.pass == GG_PASS_WGRAD) {
        if (o->passes && o->passes != 1u << GG_PASS_WGRAD) {
            fprintf(stderr, "ggemm: %s is a wgrad kernel; drop --pass or give --pass wgrad\n", o->kernel);
            return GG_EXIT_USAGE;
        }
    } else if (o->kernel) {
        if (o->passes && o->passes != 1u << (wgrad.kernel ? wgrad.info.pass : GG_PASS_FORWARD)) {
            fprintf(stderr, "ggemm: tiles --kernel lists a forward or dgrad schedule or a wgrad kernel's work list; "
                            "drop --pass or give the kernel's pass\n");
            return GG_EXIT_USAGE;
        }
        if (o->chunk || o->l2_mib) {
            fprintf(stderr, "ggemm: tiles %s a wgrad list; %s is not a wgrad kernel\n",
                    o->chunk ? "--chunk cuts" : "--l2-mib orders", o->kernel);
            return GG_EXIT_USAGE;
        }
        return forward_tiles(o, &shape, sms);
    } else if (o->passes && o->passes != 1u << GG_PASS_WGRAD) {
        fprintf(stderr, "ggemm: tiles lists k5_wgrad's work list (--pass wgrad), or with --kernel NAME a forward "
                        "or dgrad configuration's tiles or a wgrad kernel's list\n");
        return GG_EXIT_USAGE;
    }
    char why[256];
    if (!(wgrad.kernel ? wgrad.kernel->can_implement : k5_wgrad_can_implement)(&shape, why, sizeof why)) {
        fprintf(stderr, "ggemm: %s\n", why);
        return GG_EXIT_USAGE;
    }
    GgProblem p;
    if (gg_options_problem(o, &p)) {
        fprintf(stderr, "ggemm: %s\n", gg_error());
        return GG_EXIT_USAGE;
    }
    const long l2_bytes = (long)(o->l2_mib > 0 ? o->l2_mib : TILES_DEFAULT_L2_MIB) << 20;
    const int rc = write_list(&p, sms, l2_bytes, wgrad.kernel ? wgrad.info.block_m : K5_WGRAD_TILE_M,
                              wgrad.kernel ? wgrad.info.block_n : K5_WGRAD_TILE_N,
                              wgrad.kernel && wgrad.info.dynamic_deal, o->chunk);
    gg_problem_free(&p);
    if (rc) fprintf(stderr, "ggemm: out of host memory for the work list\n");
    return rc ? GG_EXIT_USAGE : GG_EXIT_OK;
}
