/* The depth toy's compiled trainer: one training step of one student (pre-norm residual ReLU^2 blocks,
   weight-free RMSNorm, MSE on the final normalised state) forward, backward and Adam in one call
   (student_step), and the teacher's forward pass (teacher_forward), shared by every student of a step.
   Plain C99 with two paths: at D = 32, H = 128 on a CPU with AVX-512, hand-written register-blocked
   products with the elementwise work fused into them (the fast path, below); otherwise the dense products
   go through the BLAS that torch itself links (its Fortran sgemm_, handed over by set_sgemm). No torch
   headers.

   Layout ("x @ W", row-major, as depthwidth/depth_toy/model.py): a student of L blocks is one flat
   float array P = [W1 (L x D x H) | b1 (L x H) | W2 (L x H x D)]; its gradient G, Adam moments M and V
   have the same layout. The batch is processed in tiles of `tile` rows so that a tile's (tile x H)
   activations stay in the second-level cache between the products and the elementwise passes.

   Built and loaded by depthwidth/depth_toy/fused.py, which keys a per-machine build cache on this file,
   the flags and the compiler, and checks every argument (shape, dtype, contiguity, device) before each
   call: nothing here checks its arguments. Format: clang-format (.clang-format at the repository root). */

#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>
#if defined(__AVX512F__) && !defined(DEPTH_TOY_GENERIC)
#include <immintrin.h>
#define FAST 1
#else
#define FAST 0
#endif
/* the fast path's width, hidden width and batch rows per tile */
#define FD 32
#define FH 128
#define FT 64

typedef void (*sgemm_t)(const char *, const char *, const int *, const int *, const int *, const float *,
                        const float *, const int *, const float *, const int *, const float *, float *,
                        const int *);
static sgemm_t sgemm_p = 0;

void set_sgemm(void *p)
{ sgemm_p = (sgemm_t)p; }

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The teacher's output rows ready so far, published by teacher_forward through *ready (a release store,
   after the rows are written) and awaited by student_step (an acquire load), so that a student may start
   beside the teacher on another thread. A negative count means the teacher will not come (it failed): then
   0 is returned; 1 once `need` rows are there (at once where ready is null). */
static int rows_ready(const int64_t *ready, int64_t need)
{
    if (!ready) return 1;
    for (;;) {
        const int64_t got = __atomic_load_n(ready, __ATOMIC_ACQUIRE);
        if (got < 0) return 0;
        if (got >= need) return 1;
        sched_yield();
    }
}

/* C (M x N) = op(A) op(B) + beta C, row-major, via the transposed column-major call C^T = op(B)^T op(A)^T.
   With `timed`, the seconds spent are added to *gs (each caller its own: calls may run in parallel). */
static void mm(char ta, char tb, int M, int N, int K, const float *A, int lda, const float *B, int ldb,
               float beta, float *C, int ldc, int timed, double *gs)
{
    const float one = 1.0f;
    const double t = timed ? now_s() : 0.0;
    sgemm_p(&tb, &ta, &N, &M, &K, &one, B, &ldb, A, &lda, &beta, C, &ldc);
    if (timed) *gs += now_s() - t;
}

/* n = h / rms(h) row by row (eps: float32's machine epsilon, as torch's rms_norm); inv[r] = 1 / rms. */
static void rmsnorm_rows(int64_t rows, int64_t D, const float *restrict h, float *restrict n,
                         float *restrict inv)
{
    const float eps = 1.1920928955078125e-07f;
    for (int64_t r = 0; r < rows; r++) {
        const float *restrict hr = h + r * D;
        float ss = 0.0f;
        for (int64_t k = 0; k < D; k++) ss += hr[k] * hr[k];
        const float iv = 1.0f / sqrtf(ss / (float)D + eps);
        for (int64_t k = 0; k < D; k++) n[r * D + k] = hr[k] * iv;
        if (inv) inv[r] = iv;
    }
}

/* r = max(a + b, 0) (kept in R when R is given), sq = r * r, over `rows` rows of H. */
static void bias_relu_square(int64_t rows, int64_t H, const float *restrict a, const float *restrict b,
                             float *restrict R, float *restrict sq)
{
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t j = 0; j < H; j++) {
            const float v = a[i * H + j] + b[j];
            const float r = v > 0.0f ? v : 0.0f;
            if (R) R[i * H + j] = r;
            sq[i * H + j] = r * r;
        }
    }
}

#if FAST
/* The fast path for the paper's width (D = 32, H = 128) on CPUs with AVX-512: every product is written as
   broadcast-scalar times row-vector FMAs with the accumulators in registers (bc below), and the elementwise
   work (RMSNorm and its backward, bias, ReLU, square, the bias gradient) is done on each group of rows while
   it is in registers, over batch tiles of FT rows. A student's step takes one tile at a time through every
   block forward and back (student_step_fast), so a tile's per-block state (normalised input, 1/rms, ReLU
   output) is still in the caches when its backward needs it. Weights are read as rows, so the backward uses
   transposed copies W1T (H x D) and W2T (D x H) made at the start of a step, and W2's gradient is
   accumulated transposed (D x H) and transposed back at the end. Compiled out (the generic path serves
   every shape) where AVX-512 is absent or DEPTH_TOY_GENERIC is defined. */
#define AI static inline __attribute__((always_inline))

#define UNROLL _Pragma("GCC unroll 32")

/* The one product shape: acc[r][v] += sum_t X[r * ldx + t * sx] W[t * ldw + 16 v] for r < R, v < V, t < K
   (a scalar of X broadcast against V vectors of a row of W; R * V accumulators in registers). R and V are
   constants at every call, so the accumulators stay in registers through the caller's epilogue too (a row
   count known only at run time would put them on the stack). Every product of the fast path is one of
   three instances: rows of a batch tile times a weight matrix (sx = 1), or a weight gradient summed over
   the tile's rows (ldx = 1, sx = the row length). */
AI void bc(const int R, const int V, int K, const float *X, int64_t ldx, int64_t sx, const float *W,
           int64_t ldw, __m512 *acc)
{
    for (int t = 0; t < K; t++) {
        __m512 w[4];
        UNROLL for (int v = 0; v < V; v++) w[v] = _mm512_loadu_ps(W + t * ldw + 16 * v);
        UNROLL for (int r = 0; r < R; r++)
        {
            const __m512 x = _mm512_set1_ps(X[r * ldx + t * sx]);
            UNROLL for (int v = 0; v < V; v++) acc[r * V + v] = _mm512_fmadd_ps(x, w[v], acc[r * V + v]);
        }
    }
}

/* Call f(R, i) for the row groups [i, i + R) of T rows, every R a constant at its call: GROUPS4 (4-vector
   products) 6 rows at a time, then a 4, a 2 and a 1 where they fit; GROUPS2 (2-vector products) 12 at a
   time, then 4s, then 1s. */
#define GROUPS4(T, f)                                                                                        \
    do {                                                                                                     \
        int i_ = 0;                                                                                          \
        for (; i_ + 6 <= (T); i_ += 6) f(6, i_);                                                             \
        if (i_ + 4 <= (T)) {                                                                                 \
            f(4, i_);                                                                                        \
            i_ += 4;                                                                                         \
        }                                                                                                    \
        if (i_ + 2 <= (T)) {                                                                                 \
            f(2, i_);                                                                                        \
            i_ += 2;                                                                                         \
        }                                                                                                    \
        if (i_ < (T)) f(1, i_);                                                                              \
    } while (0)
#define GROUPS2(T, f)                                                                                        \
    do {                                                                                                     \
        int i_ = 0;                                                                                          \
        for (; i_ + 12 <= (T); i_ += 12) f(12, i_);                                                          \
        for (; i_ + 4 <= (T); i_ += 4) f(4, i_);                                                             \
        for (; i_ < (T); i_++) f(1, i_);                                                                     \
    } while (0)

/* O (D x H) += X^T Y over T rows for R rows of O and one 64-column half: X (T x D), Y (T x H). */
AI void outer_group(const int R, int T, const float *X, const float *Y, float *O)
{
    __m512 acc[24];
    UNROLL for (int r = 0; r < R; r++) UNROLL for (int v = 0; v < 4; v++) acc[r * 4 + v] =
        _mm512_loadu_ps(O + r * FH + 16 * v);
    bc(R, 4, T, X, 1, FD, Y, FH, acc);
    UNROLL for (int r = 0; r < R; r++) UNROLL for (int v = 0; v < 4; v++)
        _mm512_storeu_ps(O + r * FH + 16 * v, acc[r * 4 + v]);
}

/* O (D x H) += X^T Y over T rows: X (T x D), Y (T x H); D = 32 output rows in groups of 6, 6, 6, 6, 4, 4,
   each row's 128 columns in two halves of 4 vectors. */
static void outer_t(int T, const float *restrict X, const float *restrict Y, float *restrict O)
{
    for (int half = 0; half < 2; half++) {
        for (int k0 = 0; k0 < 24; k0 += 6) outer_group(6, T, X + k0, Y + 64 * half, O + k0 * FH + 64 * half);
        for (int k0 = 24; k0 < FD; k0 += 4) outer_group(4, T, X + k0, Y + 64 * half, O + k0 * FH + 64 * half);
    }
}

/* n = h / rms(h) for T rows of D (inv[i] = 1 / rms when inv is given). */
static void rmsnorm_fast(int T, const float *restrict h, float *restrict n, float *restrict inv)
{
    const float eps = 1.1920928955078125e-07f;
    for (int i = 0; i < T; i++) {
        const __m512 h0 = _mm512_loadu_ps(h + i * FD), h1 = _mm512_loadu_ps(h + i * FD + 16);
        const float ss = _mm512_reduce_add_ps(_mm512_fmadd_ps(h0, h0, _mm512_mul_ps(h1, h1)));
        const float iv = 1.0f / sqrtf(ss / (float)FD + eps);
        const __m512 s = _mm512_set1_ps(iv);
        _mm512_storeu_ps(n + i * FD, _mm512_mul_ps(h0, s));
        _mm512_storeu_ps(n + i * FD + 16, _mm512_mul_ps(h1, s));
        if (inv) inv[i] = iv;
    }
}

/* Rows [i, i + R) of r = relu(n W1 + b) for one 64-column half (kept in Rk when given), sq = r^2. */
AI void relu_group(const int R, int i, const float *n, const float *W1h, const __m512 *bv, float *Rk,
                   float *sq)
{
    __m512 acc[24];
    UNROLL for (int q = 0; q < R * 4; q++) acc[q] = _mm512_setzero_ps();
    bc(R, 4, FD, n + i * FD, FD, 1, W1h, FH, acc);
    UNROLL for (int r = 0; r < R; r++) UNROLL for (int v = 0; v < 4; v++)
    {
        const int64_t o = (int64_t)(i + r) * FH + 16 * v;
        const __m512 a = _mm512_max_ps(_mm512_add_ps(acc[r * 4 + v], bv[v]), _mm512_setzero_ps());
        if (Rk) _mm512_storeu_ps(Rk + o, a);
        _mm512_storeu_ps(sq + o, _mm512_mul_ps(a, a));
    }
}

/* r = relu(n W1 + b) on T rows (kept in R when given), sq = r^2. */
static void relu_rows(int T, const float *restrict n, const float *W1, const float *b, float *restrict R,
                      float *restrict sq)
{
    for (int half = 0; half < 2; half++) {
        __m512 bv[4];
        for (int v = 0; v < 4; v++) bv[v] = _mm512_loadu_ps(b + 64 * half + 16 * v);
        float *sqh = sq + 64 * half;
        const float *W1h = W1 + 64 * half;
        float *Rh = R ? R + 64 * half : 0;
#define RELU_G(Rc, i) relu_group(Rc, i, n, W1h, bv, Rh, sqh)
        GROUPS4(T, RELU_G);
#undef RELU_G
    }
}

/* h rows [i, i + R) += sq rows . W2. */
AI void proj_group(const int R, int i, const float *sq, const float *W2, float *h)
{
    __m512 acc[24];
    UNROLL for (int r = 0; r < R; r++)
    {
        acc[2 * r] = _mm512_loadu_ps(h + (i + r) * FD);
        acc[2 * r + 1] = _mm512_loadu_ps(h + (i + r) * FD + 16);
    }
    bc(R, 2, FH, sq + i * FH, FH, 1, W2, FD, acc);
    UNROLL for (int r = 0; r < R; r++)
    {
        _mm512_storeu_ps(h + (i + r) * FD, acc[2 * r]);
        _mm512_storeu_ps(h + (i + r) * FD + 16, acc[2 * r + 1]);
    }
}

/* One block forward on T rows: n = rmsnorm(h) (kept in n, inv), r = relu(n W1 + b) (kept in R when given),
   h += r^2 W2. sq: T x H scratch. */
static void fwd_tile(int T, float *restrict h, float *restrict n, float *restrict inv, const float *W1,
                     const float *b, const float *W2, float *restrict R, float *restrict sq)
{
    rmsnorm_fast(T, h, n, inv);
    relu_rows(T, n, W1, b, R, sq);
#define PROJ_G(Rc, i) proj_group(Rc, i, sq, W2, h)
    GROUPS2(T, PROJ_G);
#undef PROJ_G
}

/* Rows [i, i + R) of a = dL/d(pre-activation) = (g W2^T) * 2 r for one 64-column half; gbv += their sum. */
AI void dact_group(const int R, int i, const float *g, const float *W2Th, const float *Rh, float *ah,
                   __m512 *gbv)
{
    __m512 acc[24];
    UNROLL for (int q = 0; q < R * 4; q++) acc[q] = _mm512_setzero_ps();
    bc(R, 4, FD, g + i * FD, FD, 1, W2Th, FH, acc);
    UNROLL for (int r = 0; r < R; r++) UNROLL for (int v = 0; v < 4; v++)
    {
        const int64_t o = (int64_t)(i + r) * FH + 16 * v;
        const __m512 rr = _mm512_loadu_ps(Rh + o);
        const __m512 d = _mm512_mul_ps(acc[r * 4 + v], _mm512_add_ps(rr, rr));
        _mm512_storeu_ps(ah + o, d);
        gbv[v] = _mm512_add_ps(gbv[v], d);
    }
}

/* Rows [i, i + R) of g += (a W1^T through n = h / rms(h)). */
AI void dx_group(const int R, int i, const float *a, const float *W1T, const float *n, const float *inv,
                 float *g)
{
    __m512 acc[24];
    UNROLL for (int q = 0; q < 2 * R; q++) acc[q] = _mm512_setzero_ps();
    bc(R, 2, FH, a + i * FH, FH, 1, W1T, FD, acc);
    UNROLL for (int r = 0; r < R; r++)
    {
        const float *ni = n + (i + r) * FD;
        float *gi = g + (i + r) * FD;
        const __m512 n0 = _mm512_loadu_ps(ni), n1 = _mm512_loadu_ps(ni + 16);
        const __m512 d0 = acc[2 * r], d1 = acc[2 * r + 1];
        const float dot = _mm512_reduce_add_ps(_mm512_fmadd_ps(d0, n0, _mm512_mul_ps(d1, n1))) / (float)FD;
        const __m512 dv = _mm512_set1_ps(dot), iv = _mm512_set1_ps(inv[i + r]);
        _mm512_storeu_ps(gi, _mm512_fmadd_ps(_mm512_fnmadd_ps(n0, dv, d0), iv, _mm512_loadu_ps(gi)));
        _mm512_storeu_ps(gi + 16,
                         _mm512_fmadd_ps(_mm512_fnmadd_ps(n1, dv, d1), iv, _mm512_loadu_ps(gi + 16)));
    }
}

/* One block backward on T rows. g (T x D): dL/dh_{l+1} in, dL/dh_l out (when need_dx). n, inv, R: the
   block's normalised input, 1/rms and ReLU output r = relu(n W1 + b) of these rows, kept by the forward.
   Accumulates gW2T (D x H: W2's gradient transposed), gW1 (D x H) and gb (H). sq, a: T x H scratch. */
static void bwd_tile(int T, float *restrict g, const float *restrict n, const float *restrict inv,
                     const float *restrict R, const float *W2T, const float *W1T, float *restrict gW2T,
                     float *restrict gW1, float *restrict gb, float *restrict sq, float *restrict a,
                     int need_dx)
{
    for (int64_t o = 0; o < (int64_t)T * FH; o += 16) {
        const __m512 r = _mm512_loadu_ps(R + o);
        _mm512_storeu_ps(sq + o, _mm512_mul_ps(r, r));
    }
    outer_t(T, g, sq, gW2T);
    for (int half = 0; half < 2; half++) {
        __m512 gbv[4];
        for (int v = 0; v < 4; v++) gbv[v] = _mm512_loadu_ps(gb + 64 * half + 16 * v);
        const float *W2Th = W2T + 64 * half, *Rh = R + 64 * half;
        float *ah = a + 64 * half;
#define DACT_G(Rc, i) dact_group(Rc, i, g, W2Th, Rh, ah, gbv)
        GROUPS4(T, DACT_G);
#undef DACT_G
        for (int v = 0; v < 4; v++) _mm512_storeu_ps(gb + 64 * half + 16 * v, gbv[v]);
    }
    outer_t(T, n, a, gW1);
    if (!need_dx) return;
#define DX_G(Rc, i) dx_group(Rc, i, a, W1T, n, inv, g)
    GROUPS2(T, DX_G);
#undef DX_G
}

/* B (16 x 16, row stride ldb) = A^T for A (16 x 16, row stride lda), in registers: pairs of rows
   interleaved by single floats, then by pairs of floats, then by 128-bit lanes twice. */
AI void transpose16(const float *A, int64_t lda, float *B, int64_t ldb)
{
    __m512 r[16], t[16];
    UNROLL for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(A + i * lda);
    UNROLL for (int i = 0; i < 16; i += 2)
    {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    UNROLL for (int i = 0; i < 16; i += 4) UNROLL for (int k = 0; k < 2; k++)
    {
        const __m512d a = _mm512_castps_pd(t[i + k]), b = _mm512_castps_pd(t[i + k + 2]);
        r[i + 2 * k] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
        r[i + 2 * k + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    }
    UNROLL for (int i = 0; i < 16; i++) t[i] =
        _mm512_shuffle_f32x4(r[(i & 8) + (i & 3)], r[(i & 8) + (i & 3) + 4], i & 4 ? 0xdd : 0x88);
    UNROLL for (int i = 0; i < 16; i++) r[i] =
        _mm512_shuffle_f32x4(t[i & 7], t[(i & 7) + 8], i & 8 ? 0xdd : 0x88);
    UNROLL for (int i = 0; i < 16; i++) _mm512_storeu_ps(B + i * ldb, r[i]);
}

/* B (cols x rows) = A^T for A (rows x cols), both multiples of 16. */
static void transpose(int rows, int cols, const float *restrict A, float *restrict B)
{
    for (int i = 0; i < rows; i += 16)
        for (int j = 0; j < cols; j += 16) transpose16(A + i * cols + j, cols, B + j * rows + i, rows);
}
#endif

/* The squared errors of `rows` rows of out (row length D) against target added to `loss` (returned; summed in
   double, row after row) and their gradient through the final rmsnorm into g: dh = (go - o * mean(go * o)) /
   rms, with go = scale * (out - target). */
static double mse_grad_rows(int64_t rows, int64_t D, float scale, const float *restrict out,
                            const float *restrict inv_out, const float *restrict target, float *restrict g,
                            double loss)
{
    for (int64_t r = 0; r < rows; r++) {
        float dot = 0.0f;
        for (int64_t k = 0; k < D; k++) {
            const float e = out[r * D + k] - target[r * D + k];
            loss += (double)e * (double)e;
            g[r * D + k] = scale * e;
            dot += g[r * D + k] * out[r * D + k];
        }
        dot /= (float)D;
        for (int64_t k = 0; k < D; k++) g[r * D + k] = (g[r * D + k] - out[r * D + k] * dot) * inv_out[r];
    }
    return loss;
}

/* The MSE of out (B x D) against target, returned (mean over batch and width, summed in double), and its
   gradient through the final rmsnorm into g: dh = (go - o * mean(go * o)) / rms. */
static double mse_grad(int64_t B, int64_t D, const float *restrict out, const float *restrict inv_out,
                       const float *restrict target, float *restrict g)
{ return mse_grad_rows(B, D, 2.0f / (float)(B * D), out, inv_out, target, g, 0.0) / (double)(B * D); }

/* torch.optim.Adam's update of the n parameters P from gradient G, moments M, V. */
static void adam(int64_t n, float *restrict P, const float *restrict G, float *restrict M, float *restrict V,
                 double step_size, double bc2_sqrt, double beta1, double beta2, double eps)
{
    const float b1f = (float)beta1, b2f = (float)beta2, ssf = (float)step_size, bcs = (float)bc2_sqrt,
                epsf = (float)eps;
    for (int64_t i = 0; i < n; i++) {
        const float gi = G[i];
        const float m = b1f * M[i] + (1.0f - b1f) * gi;
        const float v = b2f * V[i] + (1.0f - b2f) * gi * gi;
        M[i] = m;
        V[i] = v;
        P[i] -= ssf * m / (sqrtf(v) / bcs + epsf);
    }
}

/* The teacher's output rmsnorm(h_L) (B x D) for inputs x (B x D). Block l's weights are at
   W1 + l * sW1, b1 + l * sb1, W2 + l * sW2 (strides 0 for a tied teacher: every block is block 0).
   ws: h (B x D), n (tile x D), a and sq (tile x H each). stats[0] += seconds in the block products (on
   the fast path: the products with the elementwise work fused into them). The batch goes through all
   blocks one tile at a time (FT rows on the fast path, `tile` on the generic one), and after each tile the
   count of finished output rows is published through *ready when ready is given. */
void teacher_forward(int64_t L, int64_t B, int64_t D, int64_t H, int64_t tile, const float *restrict x,
                     const float *W1, const float *b1, const float *W2, int64_t sW1, int64_t sb1, int64_t sW2,
                     float *restrict out, float *restrict ws, double *restrict stats, int64_t *ready)
{
    float *h = ws, *n = h + B * D, *a = n + tile * D, *sq = a + tile * H;
#if FAST
    const int fast = D == FD && H == FH && tile >= FT;
#else
    const int fast = 0;
#endif
    const int64_t rows = fast ? FT : tile;
    double gs = 0.0;
    for (int64_t r0 = 0; r0 < B; r0 += rows) {
        const int T = (int)(B - r0 < rows ? B - r0 : rows);
        float *ht = h + r0 * D;
        rmsnorm_rows(T, D, x + r0 * D, ht, 0);
#if FAST
        if (fast) {
            const double t = now_s();
            for (int64_t l = 0; l < L; l++)
                fwd_tile(T, ht, n, 0, W1 + l * sW1, b1 + l * sb1, W2 + l * sW2, 0, sq);
            gs += now_s() - t;
        }
#endif
        if (!fast) {
            for (int64_t l = 0; l < L; l++) {
                rmsnorm_rows(T, D, ht, n, 0);
                mm('N', 'N', T, (int)H, (int)D, n, (int)D, W1 + l * sW1, (int)H, 0.0f, a, (int)H, 1, &gs);
                bias_relu_square(T, H, a, b1 + l * sb1, 0, sq);
                mm('N', 'N', T, (int)D, (int)H, sq, (int)H, W2 + l * sW2, (int)D, 1.0f, ht, (int)D, 1, &gs);
            }
        }
        rmsnorm_rows(T, D, ht, out + r0 * D, 0);
        if (ready) __atomic_store_n(ready, r0 + T, __ATOMIC_RELEASE);
    }
    stats[0] += gs;
}

/* Size in floats of student_step's workspace: the generic path's (each block's normalised input, 1/rms and
   ReLU output, h, g, out, 1/rms of out, tile scratch), or the fast path's where this build takes it at
   these sizes (each block's ReLU output, normalised input and 1/rms for one FT-row tile; each block's
   transposed weights and transposed W2 gradient; h, g, out of a tile, two FT x H scratch tiles, 1/rms of
   out). */
int64_t student_workspace(int64_t L, int64_t B, int64_t D, int64_t H, int64_t tile)
{
    if (FAST && D == FD && H == FH)
        return L * FT * (H + D + 1) + 3 * L * D * H + 3 * FT * D + FT + 2 * FT * H;
    return L * B * (D + 1 + H) + 3 * B * D + B + tile * (2 * H + D);
}

/* 1 where this build has the fast path (AVX-512, used for D = 32, H = 128), 0 where it has the generic
   one only. */
int fast_path(void)
{ return FAST; }

#if FAST
/* student_step for D = 32, H = 128 (see the fast path above), one batch tile of FT rows at a time through
   every block forward and back: a tile's per-block state (normalised input, 1/rms, ReLU output) stays in
   the caches between its forward and its backward, and the weight gradients add up tile after tile in
   batch order. Workspace: Rs, Ns, INV (per block, one tile), W1T, W2T, gW2T (per block), h, g, out, sq, a,
   inv_out (every array but the last a multiple of 16 floats). */
static double student_step_fast(int64_t L, int64_t B, const float *restrict x, const float *restrict target,
                                float *restrict P, float *restrict G, float *restrict M, float *restrict V,
                                float *restrict ws, double step_size, double bc2_sqrt, double beta1,
                                double beta2, double eps, int timed, double *restrict stats,
                                const int64_t *ready)
{
    const int64_t D = FD, H = FH, nW1 = L * D * H, nb1 = L * H, nP = nW1 + nb1 + L * H * D;
    const float *W1 = P, *b1 = P + nW1, *W2 = P + nW1 + nb1;
    float *gW1 = G, *gb1 = G + nW1, *gW2 = G + nW1 + nb1;
    float *Rs = ws, *Ns = Rs + L * FT * H, *INV = Ns + L * FT * D, *W1T = INV + L * FT;
    float *W2T = W1T + L * D * H, *gW2T = W2T + L * D * H, *h = gW2T + L * D * H, *g = h + FT * D;
    float *out = g + FT * D, *sq = out + FT * D, *a = sq + FT * H, *inv_out = a + FT * H;
    const float scale = 2.0f / (float)(B * D);
    double gs = 0.0, t = 0.0, loss = 0.0;

    for (int64_t l = 0; l < L; l++) {
        transpose((int)D, (int)H, W1 + l * D * H, W1T + l * H * D);
        transpose((int)H, (int)D, W2 + l * H * D, W2T + l * D * H);
    }
    for (int64_t i = 0; i < nW1 + nb1; i++) G[i] = 0.0f;
    for (int64_t i = 0; i < L * D * H; i++) gW2T[i] = 0.0f;
    for (int64_t r0 = 0; r0 < B; r0 += FT) {
        const int T = (int)(B - r0 < FT ? B - r0 : FT);
        rmsnorm_rows(T, D, x + r0 * D, h, 0);
        if (timed) t = now_s();
        for (int64_t l = 0; l < L; l++)
            fwd_tile(T, h, Ns + l * FT * D, INV + l * FT, W1 + l * D * H, b1 + l * H, W2 + l * H * D,
                     Rs + l * FT * H, sq);
        if (timed) gs += now_s() - t;
        rmsnorm_rows(T, D, h, out, inv_out);
        if (!rows_ready(ready, r0 + T)) return NAN;
        loss = mse_grad_rows(T, D, scale, out, inv_out, target + r0 * D, g, loss);
        if (timed) t = now_s();
        for (int64_t l = L - 1; l >= 0; l--)
            bwd_tile(T, g, Ns + l * FT * D, INV + l * FT, Rs + l * FT * H, W2T + l * D * H, W1T + l * H * D,
                     gW2T + l * D * H, gW1 + l * D * H, gb1 + l * H, sq, a, l > 0);
        if (timed) gs += now_s() - t;
    }
    for (int64_t l = 0; l < L; l++) transpose((int)D, (int)H, gW2T + l * D * H, gW2 + l * H * D);
    adam(nP, P, G, M, V, step_size, bc2_sqrt, beta1, beta2, eps);
    stats[0] += gs;
    return loss / (double)(B * D);
}
#endif

/* One step of one student on batch x (B x D) against the teacher's output `target` (B x D): forward
   (keeping each block's normalised input, its 1/rms and its ReLU output), the MSE loss (returned: mean
   over batch and width, summed in double), backward into G (the whole gradient: every entry written),
   then Adam on P with moments M, V (torch.optim.Adam's update: step_size = lr / (1 - beta1^t),
   bc2_sqrt = sqrt(1 - beta2^t)). stats[0] += seconds in the block products when `timed` (on the fast
   path: the products with the elementwise work fused into them). With `ready` given, target's rows are
   read only once teacher_forward has published them there (see rows_ready); where it publishes a
   negative count instead, NaN is returned before P, M and V are touched. */
double student_step(int64_t L, int64_t B, int64_t D, int64_t H, int64_t tile, const float *restrict x,
                    const float *restrict target, float *restrict P, float *restrict G, float *restrict M,
                    float *restrict V, float *restrict ws, double step_size, double bc2_sqrt, double beta1,
                    double beta2, double eps, int timed, double *restrict stats, const int64_t *ready)
{
#if FAST
    if (D == FD && H == FH)
        return student_step_fast(L, B, x, target, P, G, M, V, ws, step_size, bc2_sqrt, beta1, beta2, eps,
                                 timed, stats, ready);
#endif
    const int64_t nW1 = L * D * H, nb1 = L * H, nP = nW1 + nb1 + L * H * D;
    float *W1 = P, *b1 = P + nW1, *W2 = P + nW1 + nb1;
    float *gW1 = G, *gb1 = G + nW1, *gW2 = G + nW1 + nb1;
    float *Ns = ws, *INV = Ns + L * B * D, *Rs = INV + L * B, *h = Rs + L * B * H;
    float *g = h + B * D, *out = g + B * D, *inv_out = out + B * D;
    float *a = inv_out + B, *sq = a + tile * H, *dn = sq + tile * H;
    double gs = 0.0;

    /* forward */
    rmsnorm_rows(B, D, x, h, 0);
    for (int64_t l = 0; l < L; l++) {
        float *Nl = Ns + l * B * D, *INVl = INV + l * B, *Rl = Rs + l * B * H;
        for (int64_t r0 = 0; r0 < B; r0 += tile) {
            const int T = (int)(B - r0 < tile ? B - r0 : tile);
            rmsnorm_rows(T, D, h + r0 * D, Nl + r0 * D, INVl + r0);
            mm('N', 'N', T, (int)H, (int)D, Nl + r0 * D, (int)D, W1 + l * D * H, (int)H, 0.0f, a, (int)H,
               timed, &gs);
            bias_relu_square(T, H, a, b1 + l * H, Rl + r0 * H, sq);
            mm('N', 'N', T, (int)D, (int)H, sq, (int)H, W2 + l * H * D, (int)D, 1.0f, h + r0 * D, (int)D,
               timed, &gs);
        }
    }
    rmsnorm_rows(B, D, h, out, inv_out);
    if (!rows_ready(ready, B)) return NAN;
    const double loss = mse_grad(B, D, out, inv_out, target, g);

    /* backward, block by block; g is dL/dh_{l+1}, then dL/dh_l */
    for (int64_t l = L - 1; l >= 0; l--) {
        const float *Nl = Ns + l * B * D, *INVl = INV + l * B, *Rl = Rs + l * B * H;
        const float *w1 = W1 + l * D * H, *w2 = W2 + l * H * D;
        float *gw1 = gW1 + l * D * H, *gbl = gb1 + l * H, *gw2 = gW2 + l * H * D;
        for (int64_t j = 0; j < H; j++) gbl[j] = 0.0f;
        for (int64_t r0 = 0; r0 < B; r0 += tile) {
            const int T = (int)(B - r0 < tile ? B - r0 : tile);
            const float beta = r0 == 0 ? 0.0f : 1.0f;
            const float *Rt = Rl + r0 * H, *Nt = Nl + r0 * D;
            float *gt = g + r0 * D;
            for (int64_t i = 0; i < T * H; i++) sq[i] = Rt[i] * Rt[i];
            mm('T', 'N', (int)H, (int)D, T, sq, (int)H, gt, (int)D, beta, gw2, (int)D, timed, &gs);
            mm('N', 'T', T, (int)H, (int)D, gt, (int)D, w2, (int)D, 0.0f, a, (int)H, timed, &gs);
            for (int64_t i = 0; i < T; i++) /* a: dL/d(pre-activation) / 2, zero where the ReLU is off */
                for (int64_t j = 0; j < H; j++) {
                    a[i * H + j] *= Rt[i * H + j];
                    gbl[j] += a[i * H + j];
                }
            mm('T', 'N', (int)D, (int)H, T, Nt, (int)D, a, (int)H, beta, gw1, (int)H, timed, &gs);
            mm('N', 'T', T, (int)D, (int)H, a, (int)H, w1, (int)H, 0.0f, dn, (int)D, timed, &gs);
            for (int64_t i = 0; i < T; i++) { /* through n = h / rms(h), plus the residual path */
                const float *ni = Nt + i * D;
                float *di = dn + i * D;
                float dot = 0.0f;
                for (int64_t k = 0; k < D; k++) {
                    di[k] *= 2.0f;
                    dot += di[k] * ni[k];
                }
                dot /= (float)D;
                for (int64_t k = 0; k < D; k++) gt[i * D + k] += (di[k] - ni[k] * dot) * INVl[r0 + i];
            }
        }
        for (int64_t i = 0; i < D * H; i++) gw1[i] *= 2.0f;
        for (int64_t j = 0; j < H; j++) gbl[j] *= 2.0f;
    }

    adam(nP, P, G, M, V, step_size, bc2_sqrt, beta1, beta2, eps);
    stats[0] += gs;
    return loss;
}
