/* The routing check's tolerance (harness/moe.c), derived; tests/suite_moe.c tests it on the CPU.
 *
 * What is compared. The layer's logit l = fl(sum_{i<K} x_i w_i), K = d, x and w bf16: k4_router
 * sums with wgmma into fp32 accumulators, per k-split, and k4_route adds the splits' partial
 * sums in fp32. The reference is the same sum in fp64 (gg_moe_ref_logits, or the CPU for small
 * shapes), with S = sum_i |x_i w_i| beside it. A bf16 has 8 significant bits, so a product of
 * two has at most 16: exact in fp64, and in fp32 too unless it falls below fp32's normal range.
 *
 * The fp64 reference. Recursive summation of K exact terms, in any order, errs by at most
 * gamma_{K-1}(2^-53) S (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed.,
 * section 3.1: |fl(sum) - sum| <= gamma_{n-1} sum |terms|, gamma_n(u) = n u / (1 - n u)). For
 * K <= 2^20 that is below 2^-32 S: it is the exact value as far as the bound below can tell
 * (the bound is at least 2^-22 S, over a thousand times more).
 *
 * The layer's fp32 sum. Take any order of its K - 1 additions and charge each a relative error
 * of at most u: the same lemma gives |l - sum| <= gamma_{K-1}(u) S. With IEEE fp32 rounding to
 * nearest u = 2^-24; the route kernel's split additions are such. The tensor cores' own
 * additions are not IEEE: measured on earlier NVIDIA tensor cores (Fasi, Higham, Mikaitis and
 * Pranesh, "Numerical behavior of NVIDIA tensor cores", PeerJ Comput. Sci. 2021), a block of b
 * products and the accumulator is added after aligning every term to the largest exponent and
 * truncating (round toward zero), then truncated once more when normalised. Each of the b + 1
 * aligned terms loses less than one unit in the last place of the largest, 2^-23 relative, and
 * the normalisation one more: at most (b + 2) 2^-23 times the largest term, which is at most the
 * block's share of S plus the accumulator's (its own |sum| <= S so far). Over the K / b blocks
 * that is at most (b + 2) / b x 2^-23 per term of S, and for b >= 2 at most 2^-22. So
 *     u = 2^-22  (4 times round-to-nearest: truncation 2x, block alignment up to 2x),
 * and the bound charges K additions (K - 1 plus the split additions, which are far fewer than
 * the slack between K - 1 and what each block really costs).
 * Underflow: a product below fp32's normal range loses at most 2^-126 (flushed to zero): K of
 * them add K 2^-126.
 *
 *     |l - ref| <= gamma_K(2^-22) S + K 2^-126                   (gg_moe_logit_bound)
 *
 * How tight. It is a worst case: a correct router is far inside it (random rounding errors
 * grow like sqrt(K), not K). At the layer's input scale (harness/moe.c: x uniform in [-1, 1], w
 * in [-s, s] with s near 4 / sqrt(K)) S is about K s / 4 and a logit's spread about
 * sqrt(K / 9) s: at d = 7168 (s = 1/16) S is near 112, the bound near 0.19 and the logits
 * spread over about +-1.8. A router bug is not inside it: a wrong tile, box or swizzle moves
 * logits by their own size, and even one lost k-block (64 of the K terms) moves each by about
 * sqrt(64 / 9) s = 0.17 at d = 7168, past the bound in about a quarter of the T x E logits, of
 * which the check tests every one. The DeepSeek-V3-like failure this replaces compared a bf16
 * logit (2^-9 relative rounding) with an fp32 reference, under a bound that ignored the K-long
 * sum; now the layer is fp32 and the bound is the sum's.
 *
 * The choice. The experts are checked exactly against the layer's own fp32 logits: the chosen
 * k are distinct and are the k largest, best first, ties to the lower expert, NaN below every
 * number (gg_moe_topk_exact). With the per-logit bound, a disagreement with the exact top-k
 * is then accepted only where the competing exact logits lie within the two logits' bounds of
 * each other: exact_u - exact_c <= bound_u + bound_c whenever the layer chose c over u. */
#ifndef GG_MOE_BOUND_H
#define GG_MOE_BOUND_H
#include <math.h>
#include <stdio.h>
#include <string.h>

#define GG_MOE_LOGIT_U 0x1p-22         /* unit roundoff charged to each addition of the router's sum */
#define GG_MOE_PRODUCT_UNDERFLOW 0x1p-126 /* the most an fp32 product loses below the normal range */

/* gamma_n(u) = n u / (1 - n u); infinite once n u >= 1 (no bound). */
static inline double gg_moe_gamma(double n) {
    const double nu = n * GG_MOE_LOGIT_U;
    return nu < 1 ? nu / (1 - nu) : INFINITY;
}

/* The most |layer's logit - exact| may be for a K-term sum with sum |x_i w_i| = abs_dot. */
static inline double gg_moe_logit_bound(double abs_dot, int k) {
    return gg_moe_gamma(k) * abs_dot + k * GG_MOE_PRODUCT_UNDERFLOW;
}

/* The routing order: expert a before b when its logit is larger, or equal with a < b; NaN
 * counts as -infinity. */
static inline int gg_moe_route_before(const float *logits, int a, int b) {
    const float la = isnan(logits[a]) ? -INFINITY : logits[a], lb = isnan(logits[b]) ? -INFINITY : logits[b];
    return la > lb || (la == lb && a < b);
}

/* 1 if chosen[0..k) is exactly the top k of logits[0..experts) in the routing order, best
 * first; else 0 and one line in why. mark: experts bytes of scratch. */
static inline int gg_moe_topk_exact(const float *logits, int experts, const int *chosen, int k, unsigned char *mark,
                                    char *why, size_t len) {
    if (experts < 1 || k < 1 || k > experts) {
        snprintf(why, len, "top-%d of %d experts", k, experts);
        return 0;
    }
    memset(mark, 0, (size_t)experts);
    for (int j = 0; j < k; ++j) {
        if (chosen[j] < 0 || chosen[j] >= experts || mark[chosen[j]]) {
            snprintf(why, len, "slot %d chose expert %d (twice or out of range)", j, chosen[j]);
            return 0;
        }
        mark[chosen[j]] = 1;
        if (j > 0 && !gg_moe_route_before(logits, chosen[j - 1], chosen[j])) {
            snprintf(why, len, "slot %d (expert %d, logit %.9g) ranks above slot %d (expert %d, logit %.9g)", j,
                     chosen[j], logits[chosen[j]], j - 1, chosen[j - 1], logits[chosen[j - 1]]);
            return 0;
        }
    }
    for (int e = 0; e < experts; ++e)
        if (!mark[e] && gg_moe_route_before(logits, e, chosen[k - 1])) {
            snprintf(why, len, "expert %d (logit %.9g) unchosen over expert %d (logit %.9g)", e, logits[e],
                     chosen[k - 1], logits[chosen[k - 1]]);
            return 0;
        }
    return 1;
}
#endif
