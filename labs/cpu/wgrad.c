/* Exercise: write lab_wgrad_splits, lab_wgrad_fixups and lab_wgrad_item, the work list of the
 * weight gradient dB_e = A_e^T dC_e (k5_backward), whose reduction runs over each expert's rows,
 * lab_wgrad_busiest, how two deals hand that list to the CTAs, and lab_wgrad_k_first, the order
 * of an expert's tiles that reads the fewest DRAM bytes.
 *
 * Expert e owns m[e] consecutive rows (0 allowed), expert 0 from row 0. Its k x n output dB_e is
 * `tiles` tiles, the same count for every expert. The reduction is in 64-row blocks; an expert
 * of more than `chunk` blocks (64 chunk rows) is split: each tile becomes S = ceil(m / (64 chunk))
 * items of whole blocks, as equal as whole blocks allow (of the expert's B = ceil(m / 64) blocks,
 * split s takes blocks floor(s B / S) .. floor((s + 1) B / S), so only the last one can end in a
 * partial block), which write fp32 partials that one of them adds (the fix-up). Every other
 * expert, empty ones too, is one item per tile.
 *   lab_wgrad_splits  items per tile of an expert of m rows
 *   lab_wgrad_fixups  fix-ups over all experts: one per tile of a split expert
 *   lab_wgrad_item    item `index` of the list: expert-major, and inside an expert the splits of
 *                     one tile adjacent (local item j is split j % splits of tile j / splits);
 *                     its expert, tile, split, first reduction row and rows (0 for an empty expert)
 *   lab_wgrad_busiest the most blocks any of `grid` CTAs reduces when the items (blocks[t] each,
 *                     in list order) are dealt round-robin (dynamic 0: item t to CTA t % grid) or
 *                     dynamically (1: from a counter, each CTA holding one item ahead: it draws
 *                     two at launch, then one when it starts an item; the next item goes to the
 *                     CTA whose draw comes first, counted in blocks, on a tie the one that has
 *                     drawn fewer, then the lowest-numbered); at most 256 CTAs
 *   lab_wgrad_k_first 1 if an expert of m rows walks its tiles k block first, 0 if n block first.
 *                     The tiles are tile_m rows of k by tile_n columns of n: k_blocks =
 *                     ceil(k / tile_m), n_blocks = ceil(n / tile_n); every operand and output
 *                     is bf16 (2 bytes). n block first sweeps dC_e (m x n) once per block of k
 *                     beside one panel of A_e (m x tile_m); k block first sweeps A_e (m x k) once
 *                     per block of n beside a panel of dC_e (m x tile_n). A sweep "stays" when
 *                     the swept operand, the other's panel and one block of outputs (tile_m x n,
 *                     or tile_n x k) fit in half of l2_bytes; then it is read from DRAM once,
 *                     else once per block of the other dimension. Price each order's DRAM bytes
 *                     per row of m (n block first: 2k + 2n x (1 if dC_e stays, else k_blocks);
 *                     k block first: 2n + 2k x (1 if A_e stays, else n_blocks)) and go k block
 *                     first only where it is strictly cheaper. An empty expert is n block first,
 *                     and so is every expert where half of l2_bytes (rounded down) is 0 or less
 *                     (no L2 known). The byte counts pass 2^31 on real shapes: use long
 * Repository: gg_wgrad_splits, gg_wgrad_items, gg_wgrad_at, gg_wgrad_deal, gg_wgrad_k_first (common/gg_wgrad.h),
 * which k5_wgrad runs on the GPU; `build/bin/ggemm tiles --m-list ... --k K --n N` prints the list it
 * builds (`--kernel k5_wgrad_m256_dyn`: dealt dynamically). Which deal has the lower busiest CTA on
 * the list sorted long-first, and on the same list reversed? For the Mixtral-like wgrad shape (k
 * 4096, n 14336) on 256 x 192 tiles, from which m up to which m does an expert go k block first
 * on an H100's 50 MiB of L2, and on an H200's 60 MiB (`ggemm tiles --kernel k5_wgrad_m256_dyn
 * --l2-mib L` prints the two row bounds, dc_stays_rows and a_stays_rows; k5_backward/EXERCISES.md,
 * exercise 6)?
 * Grade (rebuilds first): cmake --build build --target lab_cpu && build/bin/lab_cpu wgrad */
#include "lab_cpu.h"

int lab_wgrad_splits(int m, int chunk) {
    (void)m;
    (void)chunk;
    return 0; /* your code here */
}

long lab_wgrad_fixups(const int *m, int experts, int tiles, int chunk) {
    (void)m;
    (void)experts;
    (void)tiles;
    (void)chunk;
    return 0; /* your code here */
}

void lab_wgrad_item(const int *m, int experts, int tiles, int chunk, int index, int *expert, int *tile, int *split,
                    int *row0, int *rows) {
    (void)m;
    (void)experts;
    (void)tiles;
    (void)chunk;
    (void)index;
    *expert = *tile = *split = *row0 = *rows = -1; /* your code here */
}

long lab_wgrad_busiest(const int *blocks, int items, int grid, int dynamic) {
    (void)blocks;
    (void)items;
    (void)grid;
    (void)dynamic;
    return 0; /* your code here */
}

int lab_wgrad_k_first(long l2_bytes, int k, int n, int tile_m, int tile_n, int m) {
    (void)l2_bytes;
    (void)k;
    (void)n;
    (void)tile_m;
    (void)tile_n;
    (void)m;
    return 0; /* your code here */
}
