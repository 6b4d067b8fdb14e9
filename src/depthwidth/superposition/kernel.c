/* The superposition trainer's compiled kernel: the features route's fused elementwise pass over a batch's
   active rows (fused_step), the gradients of every cell of a width group in one call with the dense
   products through torch's own BLAS (group_grads, after set_sgemm), and the optimiser step of a width
   group (adam_group). Plain C99 with the GCC/Clang vector extension; no torch headers.

   Built and loaded by depthwidth/superposition/fused.py, which keys a per-machine build cache on this
   file, the flags and the compiler, and checks every argument (shape, dtype, contiguity, device) before
   each call: nothing here checks its arguments. fused.py's docstring says which flags make the rounding
   depend on the CPU. Format: clang-format (.clang-format at the repository root). */

#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <time.h>

/* 8 floats, loaded and stored unaligned (GCC/Clang vector extension; a machine without 256-bit
   registers runs it as two halves) */
typedef float v8 __attribute__((vector_size(32), aligned(4), may_alias));
typedef int32_t v8i __attribute__((vector_size(32), aligned(4), may_alias));

static inline v8 relu8(v8 p)
{ /* max(p, 0) with NaN kept (p < 0 is false for NaN): a diverged run shows in the loss */
    const v8 zero = {0.0f};
    return (v8)(~(p < zero) & (v8i)p);
}

/* Rows with one active feature j, values v[0..cnt), over the 16 columns at g, bb, gbq, dq:
   pre = v*g + b, y = ReLU(pre), summed over the rows in registers into dL/db (gbq, the sum of y) and
   D's row (dq, the sum of v*y), and the squared error (returned). With many rows (sq_closed) the
   squared error is not summed row by row: where y > 0, y = v*g + b, so the sum of y^2 is
   g * sum(v*y) + b * sum(y), formed in double once per column. The feature's own column, where x = v,
   is fixed up by the caller. */
static inline double singles16(const float *restrict g, const float *restrict bb, const float *restrict v,
                               int64_t cnt, float *restrict gbq, float *restrict dq, int sq_closed,
                               v8 *restrict sqv)
{
    const v8 g0 = *(const v8 *)g, g1 = *(const v8 *)(g + 8);
    const v8 b0 = *(const v8 *)bb, b1 = *(const v8 *)(bb + 8);
    v8 s00 = {0.0f}, s01 = {0.0f}, s10 = {0.0f}, s11 = {0.0f}, s20 = {0.0f}, s21 = {0.0f};
    for (int64_t r = 0; r < cnt; r++) { /* -O3 unswitches the loop on sq_closed */
        const float vr = v[r];
        const v8 y0 = relu8(vr * g0 + b0), y1 = relu8(vr * g1 + b1);
        s00 += y0;
        s01 += y1;
        s10 += vr * y0;
        s11 += vr * y1;
        if (!sq_closed) {
            s20 += y0 * y0;
            s21 += y1 * y1;
        }
    }
    *(v8 *)gbq += s00;
    *(v8 *)(gbq + 8) += s01;
    *(v8 *)dq = s10; /* the first contribution to D's row: the caller did not zero it */
    *(v8 *)(dq + 8) = s11;
    double acc = 0.0;
    if (sq_closed)
        for (int l = 0; l < 8; l++)
            acc += ((double)g[l] * (double)s10[l] + (double)bb[l] * (double)s00[l]) +
                   ((double)g[l + 8] * (double)s11[l] + (double)bb[l + 8] * (double)s01[l]);
    else
        *sqv += s20 + s21; /* summed over the feature's columns in 8 float lanes by the caller */
    return acc;
}

/* The same over one column (the last n mod 16 columns) */
static inline double singles1(float g, float bb, const float *restrict v, int64_t cnt, float *restrict gbq,
                              float *restrict dq)
{
    float s0 = 0.0f, s1 = 0.0f;
    double acc = 0.0;
    for (int64_t r = 0; r < cnt; r++) {
        const float p = v[r] * g + bb;
        const float y = p < 0.0f ? 0.0f : p;
        s0 += y;
        s1 += v[r] * y;
        acc += (double)y * (double)y;
    }
    *gbq += s0;
    *dq = s1;
    return acc;
}

/* The fused pass (fused.py's docstring). GA (a x n): rows of W W^T of the batch's distinct active features;
   act[j]: the column of feature j. n_empty rows have no active feature (pre = b). The rows with one active
   feature come grouped by it: feature j's values are s_vals[s_off[j] .. s_off[j+1]). The other
   n_multi rows are visited in the order m_rows, their entries [starts[r], ends[r]) given by inv, feats
   and vals. Writes gb (n) and D (a x n); buf (n) and pre_act
   (4 x max entries per row) are scratch. Returns the batch's summed squared error. */
double fused_step(int64_t n, int64_t a, int64_t n_empty, const int64_t *restrict act,
                  const int64_t *restrict s_off, const float *restrict s_vals, int64_t n_multi,
                  const int64_t *restrict m_rows, const int64_t *restrict starts,
                  const int64_t *restrict ends, const int64_t *restrict inv, const int64_t *restrict feats,
                  const float *restrict vals, const float *restrict GA, const float *restrict b,
                  float *restrict D, float *restrict gb, float *restrict buf, float *restrict pre_act)
{
    double sq = 0.0;
    { /* the empty rows in closed form: each contributes ||ReLU(b)||^2 and ReLU(b) */
        float lane[32] = {0.0f};
        const float ne = (float)n_empty;
        for (int64_t i = 0; i < n; i++) {
            const float y = b[i] < 0.0f ? 0.0f : b[i];
            gb[i] = ne * y;
            lane[i & 31] += y * y;
        }
        double acc = 0.0;
        for (int j = 0; j < 32; j++) acc += (double)lane[j];
        sq = (double)n_empty * acc;
    }
    /* the rows with one active feature, a feature at a time, 16 columns at a time */
    for (int64_t j = 0; j < a; j++) {
        const int64_t cnt = s_off[j + 1] - s_off[j];
        float *restrict d = D + j * n;
        if (!cnt) {
            for (int64_t i = 0; i < n; i++) d[i] = 0.0f;
            continue;
        }
        const float *restrict v = s_vals + s_off[j];
        const float *restrict g = GA + j * n;
        int64_t q = 0;
        v8 sqv = {0.0f};
        if (cnt >= 16)
            for (; q + 16 <= n; q += 16) sq += singles16(g + q, b + q, v, cnt, gb + q, d + q, 1, &sqv);
        else
            for (; q + 16 <= n; q += 16) sq += singles16(g + q, b + q, v, cnt, gb + q, d + q, 0, &sqv);
        for (int l = 0; l < 8; l++) sq += (double)sqv[l];
        for (; q < n; q++) sq += singles1(g[q], b[q], v, cnt, gb + q, d + q);
        /* the feature's own column c: the residual y - v in the loss, its gradient only where
           pre > 0; the same pre as above, so its ReLU terms are replaced */
        const int64_t c = act[j];
        float f0 = 0.0f, f1 = 0.0f;
        for (int64_t r = 0; r < cnt; r++) {
            const float vr = v[r];
            const float p = vr * g[c] + b[c];
            const float y = p < 0.0f ? 0.0f : p;
            const float res = y - vr;
            const float R = p > 0.0f ? res : (p == p ? 0.0f : p);
            f0 += R - y;
            f1 += vr * R - vr * y;
            sq += (double)res * (double)res - (double)y * (double)y;
        }
        gb[c] += f0;
        d[c] += f1;
    }
    /* the rows with several active features, one at a time in a row buffer */
    for (int64_t rr = 0; rr < n_multi; rr++) {
        const int64_t r = m_rows[rr];
        const int64_t k0 = starts[r], k1 = ends[r];
        const float v0 = vals[k0];
        const float *restrict g0 = GA + inv[k0] * n;
        /* pre-activations at the row's own columns, before the ReLU overwrites them */
        for (int64_t k = k0; k < k1; k++) {
            const int64_t c = feats[k];
            float p = v0 * g0[c];
            for (int64_t e = k0 + 1; e < k1; e++) p = p + vals[e] * GA[inv[e] * n + c];
            pre_act[k - k0] = p + b[c];
        }
        /* rows of three or more entries: all but the last summed into buf first */
        const int64_t kk = k1 - k0;
        if (kk > 2) {
            for (int64_t i = 0; i < n; i++) buf[i] = v0 * g0[i];
            for (int64_t k = k0 + 1; k < k1 - 1; k++) {
                const float v = vals[k];
                const float *restrict g = GA + inv[k] * n;
                for (int64_t i = 0; i < n; i++) buf[i] = buf[i] + v * g[i];
            }
        }
        /* one pass: the last entry, + b, ReLU, the squared error in 32 float lanes, and y summed into
           dL/db and the first and last entries' rows of D (y stands in for R off the row's own columns;
           those columns are put right below from the values saved here) */
        const float vl = vals[k1 - 1];
        const float *restrict gl = GA + inv[k1 - 1] * n;
        float *restrict d0 = D + inv[k0] * n;
        float *restrict dl = D + inv[k1 - 1] * n;
        float *restrict s_gb = pre_act + kk, *restrict s_d0 = pre_act + 2 * kk,
                        *restrict s_dl = pre_act + 3 * kk;
        for (int64_t k = k0; k < k1; k++) {
            const int64_t c = feats[k];
            s_gb[k - k0] = gb[c];
            s_d0[k - k0] = d0[c];
            s_dl[k - k0] = dl[c];
        }
        float lane[32] = {0.0f};
        int64_t q = 0;
        if (kk == 2) {
            for (; q + 32 <= n; q += 32)
                for (int j = 0; j < 32; j++) {
                    const float p = (v0 * g0[q + j] + vl * gl[q + j]) + b[q + j];
                    const float y = p < 0.0f ? 0.0f : p;
                    lane[j] += y * y;
                    gb[q + j] += y;
                    d0[q + j] += v0 * y;
                    dl[q + j] += vl * y;
                }
            for (; q < n; q++) {
                const float p = (v0 * g0[q] + vl * gl[q]) + b[q];
                const float y = p < 0.0f ? 0.0f : p;
                lane[q & 31] += y * y;
                gb[q] += y;
                d0[q] += v0 * y;
                dl[q] += vl * y;
            }
        } else {
            for (; q + 32 <= n; q += 32)
                for (int j = 0; j < 32; j++) {
                    const float p = (buf[q + j] + vl * gl[q + j]) + b[q + j];
                    const float y = p < 0.0f ? 0.0f : p;
                    buf[q + j] = y;
                    lane[j] += y * y;
                    gb[q + j] += y;
                    d0[q + j] += v0 * y;
                    dl[q + j] += vl * y;
                }
            for (; q < n; q++) {
                const float p = (buf[q] + vl * gl[q]) + b[q];
                const float y = p < 0.0f ? 0.0f : p;
                buf[q] = y;
                lane[q & 31] += y * y;
                gb[q] += y;
                d0[q] += v0 * y;
                dl[q] += vl * y;
            }
        }
        double acc = 0.0;
        for (int j = 0; j < 32; j++) acc += (double)lane[j];
        /* the row's own entries: residual y - x in the loss; its gradient R only where pre > 0,
           added to the values saved before the pass */
        for (int64_t k = k0; k < k1; k++) {
            const float p = pre_act[k - k0];
            const float y = p < 0.0f ? 0.0f : p;
            const float res = y - vals[k];
            acc += (double)res * (double)res - (double)y * (double)y;
            const float R = p > 0.0f ? res : (p == p ? 0.0f : p);
            const int64_t c = feats[k];
            gb[c] = s_gb[k - k0] + R;
            d0[c] = s_d0[k - k0] + v0 * R;
            dl[c] = s_dl[k - k0] + vl * R;
            buf[c] = R;
        }
        sq += acc;
        /* the middle entries' rows of D from R = buf */
        for (int64_t k = k0 + 1; k < k1 - 1; k++) {
            const float v = vals[k];
            float *restrict d = D + inv[k] * n;
            for (int64_t i = 0; i < n; i++) d[i] += v * buf[i];
        }
    }
    return sq;
}

/* Adam's constants: beta1, 1 - beta1, beta2, 1 - beta2, sqrt(bias correction 2), eps */
typedef struct {
    float b1, a1, b2, a2, sb2, e;
} adam_h;

/* One Adam step of one parameter w with gradient gr and moments *M, *V; k = -lr / (bias correction 1) */
static inline float adam1(float w, float gr, float *restrict M, float *restrict V, const adam_h *restrict h,
                          float k)
{
    const float mm = *M * h->b1 + h->a1 * gr;
    const float vv = *V * h->b2 + h->a2 * (gr * gr);
    *M = mm;
    *V = vv;
    return w + k * (mm / (sqrtf(vv) / h->sb2 + h->e));
}

/* One optimiser step of the C cells of a width group, in place, each cell on its own (scalar factors,
   so a cell's numbers do not depend on its job-mates). Per cell c: the gradients are G[c] * gscale
   and Gb[c] * gscale; decay on W only, before Adam as the paper's AdamW does: gamma >= 0 scales W by
   1 - gamma * lr_w, gamma < 0 adds lr_w * gamma * W_i (1 - 1 / (||W_i|| + eps)) (W_i: a row of W, a
   column of Wt, its norm from the W before the step); then Adam with bias corrections bc1, bc2.
   Wt, G, mW, vW: (C, m, n); b, Gb, mb, vb: (C, n); norm: n floats of scratch. */
void adam_group(int64_t C, int64_t m, int64_t n, float *restrict Wt, const float *restrict G,
                float *restrict mW, float *restrict vW, float *restrict b, const float *restrict Gb,
                float *restrict mb, float *restrict vb, const double *restrict gammas, double gscale,
                double lr_w, double lr_b, double beta1, double beta2, double bc1, double bc2, double eps,
                float *restrict norm)
{
    const float s = (float)gscale;
    const adam_h h = {(float)beta1,         (float)(1.0 - beta1), (float)beta2,
                      (float)(1.0 - beta2), (float)sqrt(bc2),     (float)eps};
    const float kw = (float)(-lr_w / bc1), kb = (float)(-lr_b / bc1);
    for (int64_t c = 0; c < C; c++) {
        float *restrict W = Wt + c * m * n, *restrict M = mW + c * m * n, *restrict V = vW + c * m * n;
        const float *restrict g = G + c * m * n;
        const double gam = gammas[c];
        if (gam < 0.0) {
            for (int64_t i = 0; i < n; i++) norm[i] = 0.0f;
            for (int64_t k = 0; k < m; k++)
                for (int64_t i = 0; i < n; i++) norm[i] += W[k * n + i] * W[k * n + i];
            for (int64_t i = 0; i < n; i++) norm[i] = 1.0f - 1.0f / (sqrtf(norm[i]) + h.e);
            const float f = (float)(lr_w * gam);
            for (int64_t k = 0; k < m; k++)
                for (int64_t i = 0; i < n; i++) {
                    const int64_t j = k * n + i;
                    W[j] = adam1(W[j] + f * (W[j] * norm[i]), g[j] * s, M + j, V + j, &h, kw);
                }
        } else {
            const float f = (float)(1.0 - gam * lr_w);
            for (int64_t j = 0; j < m * n; j++) W[j] = adam1(W[j] * f, g[j] * s, M + j, V + j, &h, kw);
        }
        float *restrict bb = b + c * n, *restrict Mb = mb + c * n, *restrict Vb = vb + c * n;
        const float *restrict gbb = Gb + c * n;
        for (int64_t i = 0; i < n; i++) bb[i] = adam1(bb[i], gbb[i] * s, Mb + i, Vb + i, &h, kb);
    }
}

/* The dense products go through the BLAS that torch itself links (its Fortran sgemm_, found by
   name in torch's library and handed over by set_sgemm), row-major via the transposed call:
   C (M x N) = op(A) op(B) is, column-major, C^T = op(B)^T op(A)^T. */
typedef void (*sgemm_t)(const char *, const char *, const int *, const int *, const int *, const float *,
                        const float *, const int *, const float *, const int *, const float *, float *,
                        const int *);
static sgemm_t sgemm_p = 0;
static int time_gemm = 0;
static double gemm_s = 0.0;

void set_sgemm(void *p, int timed)
{
    sgemm_p = (sgemm_t)p;
    time_gemm = timed;
}

double gemm_seconds(void)
{ return gemm_s; }

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void rm_gemm(char ta, char tb, int M, int N, int K, const float *A, int lda, const float *B, int ldb,
                    float *Cm, int ldc)
{
    const float one = 1.0f, zero = 0.0f;
    const double t = time_gemm ? now_s() : 0.0;
    sgemm_p(&tb, &ta, &N, &M, &K, &one, B, &ldb, A, &lda, &zero, Cm, &ldc);
    if (time_gemm) gemm_s += now_s() - t;
}

/* The unscaled gradients of the C cells of a width group on one batch by the features route, each
   cell on its own: W_A^T (m x a) gathered from Wt, GA = W_A Wt, the fused pass (D, gb, squared
   error), then G = W_A^T D + scatter_A(Wt D^T). Wt, G: (C, m, n); b, Gb: (C, n); WAt (m x a), GA and
   D (a x n), DW (m x a), buf, pre_act: scratch. The batch arguments are those of fused_step.
   sq[c]: cell c's summed squared error. */
void group_grads(int64_t C, int64_t m, int64_t n, int64_t a, int64_t n_empty, const int64_t *restrict act,
                 const int64_t *restrict s_off, const float *restrict s_vals, int64_t n_multi,
                 const int64_t *restrict m_rows, const int64_t *restrict starts, const int64_t *restrict ends,
                 const int64_t *restrict inv, const int64_t *restrict feats, const float *restrict vals,
                 const float *restrict Wt, const float *restrict b, float *restrict G, float *restrict Gb,
                 float *restrict WAt, float *restrict GA, float *restrict D, float *restrict DW,
                 float *restrict buf, float *restrict pre_act, double *restrict sq)
{
    for (int64_t c = 0; c < C; c++) {
        const float *restrict W = Wt + c * m * n;
        float *restrict g = G + c * m * n;
        if (a == 0) {
            for (int64_t j = 0; j < m * n; j++) g[j] = 0.0f;
        } else {
            for (int64_t k = 0; k < m; k++)
                for (int64_t j = 0; j < a; j++) WAt[k * a + j] = W[k * n + act[j]];
            rm_gemm('T', 'N', (int)a, (int)n, (int)m, WAt, (int)a, W, (int)n, GA, (int)n);
        }
        sq[c] = fused_step(n, a, n_empty, act, s_off, s_vals, n_multi, m_rows, starts, ends, inv, feats, vals,
                           GA, b + c * n, D, Gb + c * n, buf, pre_act);
        if (a == 0) continue;
        rm_gemm('N', 'N', (int)m, (int)n, (int)a, WAt, (int)a, D, (int)n, g, (int)n);
        rm_gemm('N', 'T', (int)m, (int)a, (int)n, W, (int)n, D, (int)n, DW, (int)a);
        for (int64_t k = 0; k < m; k++)
            for (int64_t j = 0; j < a; j++) g[k * n + act[j]] += DW[k * a + j];
    }
}
