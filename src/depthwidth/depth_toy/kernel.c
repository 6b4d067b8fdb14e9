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
   broadcast-scalar times row-vector FMAs with the accumulators in registers (bc_R_V below), and the
   elementwise work (RMSNorm and its backward, bias, ReLU, square, the bias gradient) is done on each group
   of rows while it is in registers or the first-level cache, over batch tiles of FT rows. Weights are read
   as rows, so the backward uses transposed copies W1T (H x D) and W2T (D x H) made at the start of a step,
   and W2's gradient is accumulated transposed (D x H) and transposed back once per block. The forward
   keeps each block's normalised input and 1/rms only; the backward computes the ReLU output again (see
   bwd_tile). Compiled out (the generic path serves every shape) where AVX-512 is absent or
   DEPTH_TOY_GENERIC is defined. */
#define AI static inline __attribute__((always_inline))

/* The one product shape: acc[r][v] += sum_t X[r * ldx + t * sx] W[t * ldw + 16 v] for r < R, v < V, t < K
   (a scalar of X broadcast against V vectors of a row of W; R * V accumulators in registers). Every product
   of the fast path is one of three instances: rows of a batch tile times a weight matrix (sx = 1), or a
   weight gradient summed over the tile's rows (ldx = 1, sx = the row length). */
#define DEF_BC(R, V)                                                                                         \
    AI void bc_##R##_##V(int K, const float *X, int64_t ldx, int64_t sx, const float *W, int64_t ldw,        \
                         __m512 *acc)                                                                        \
    {                                                                                                        \
        for (int t = 0; t < K; t++) {                                                                        \
            __m512 w[V];                                                                                     \
            for (int v = 0; v < V; v++) w[v] = _mm512_loadu_ps(W + t * ldw + 16 * v);                        \
            for (int r = 0; r < R; r++) {                                                                    \
                const __m512 x = _mm512_set1_ps(X[r * ldx + t * sx]);                                        \
                for (int v = 0; v < V; v++) acc[r * V + v] = _mm512_fmadd_ps(x, w[v], acc[r * V + v]);       \
            }                                                                                                \
        }                                                                                                    \
    }
DEF_BC(6, 4)
DEF_BC(4, 4)
DEF_BC(2, 4)
DEF_BC(1, 4)
DEF_BC(12, 2)
DEF_BC(4, 2)
DEF_BC(1, 2)

/* Rows [i, i + R) of a tile times a (K x 64) half of a weight matrix: acc = X rows . W (sx = 1). */
#define ROWS4(R, X, ldx, K, W, ldw, acc)                                                                     \
    do {                                                                                                     \
        for (int q = 0; q < (R) * 4; q++) acc[q] = _mm512_setzero_ps();                                      \
        bc_##R##_4(K, X, ldx, 1, W, ldw, acc);                                                               \
    } while (0)

/* The row groups of a tile of T rows for 4-vector products: 6 at a time, then 4, 2, 1. */
AI int group4(int rem)
{ return rem >= 6 ? 6 : rem >= 4 ? 4 : rem >= 2 ? 2 : 1; }

/* O (D x H) += X^T Y over T rows: X (T x D), Y (T x H); D = 32 output rows in groups of 6 (then 2), each
   row's 128 columns in two halves of 4 vectors. */
static void outer_t(int T, const float *restrict X, const float *restrict Y, float *restrict O)
{
    for (int k0 = 0; k0 < FD;) {
        const int R = FD - k0 >= 6 ? 6 : 2;
        for (int half = 0; half < 2; half++) {
            __m512 acc[24];
            float *o = O + k0 * FH + 64 * half;
            for (int r = 0; r < R; r++)
                for (int v = 0; v < 4; v++) acc[r * 4 + v] = _mm512_loadu_ps(o + r * FH + 16 * v);
            if (R == 6)
                bc_6_4(T, X + k0, 1, FD, Y + 64 * half, FH, acc);
            else
                bc_2_4(T, X + k0, 1, FD, Y + 64 * half, FH, acc);
            for (int r = 0; r < R; r++)
                for (int v = 0; v < 4; v++) _mm512_storeu_ps(o + r * FH + 16 * v, acc[r * 4 + v]);
        }
        k0 += R;
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

/* acc = rows [0, rows) of X (row length FD) times a (FD x 64) half W of a weight matrix (row length FH). */
AI void rows4(int rows, const float *X, const float *W, __m512 *acc)
{
    if (rows == 6)
        ROWS4(6, X, FD, FD, W, FH, acc);
    else if (rows == 4)
        ROWS4(4, X, FD, FD, W, FH, acc);
    else if (rows == 2)
        ROWS4(2, X, FD, FD, W, FH, acc);
    else
        ROWS4(1, X, FD, FD, W, FH, acc);
}

/* The row groups of a tile for 2-vector products: 12 at a time, then 4, then 1. */
AI int group2(int rem)
{ return rem >= 12 ? 12 : rem >= 4 ? 4 : 1; }

/* acc += rows [0, rows) of X (row length FH) times W (FH x FD); rows: a group2 size. */
AI void rows2(int rows, const float *X, const float *W, __m512 *acc)
{
    if (rows == 12)
        bc_12_2(FH, X, FH, 1, W, FD, acc);
    else if (rows == 4)
        bc_4_2(FH, X, FH, 1, W, FD, acc);
    else
        bc_1_2(FH, X, FH, 1, W, FD, acc);
}

/* r = relu(n W1 + b) on T rows (kept in R when given), sq = r^2. */
static void relu_rows(int T, const float *restrict n, const float *W1, const float *b, float *restrict R,
                      float *restrict sq)
{
    const __m512 zero = _mm512_setzero_ps();
    for (int half = 0; half < 2; half++) {
        __m512 bv[4];
        for (int v = 0; v < 4; v++) bv[v] = _mm512_loadu_ps(b + 64 * half + 16 * v);
        for (int i = 0; i < T;) {
            __m512 acc[24];
            const int rows = group4(T - i);
            rows4(rows, n + i * FD, W1 + 64 * half, acc);
            for (int r = 0; r < rows; r++)
                for (int v = 0; v < 4; v++) {
                    const int64_t o = (int64_t)(i + r) * FH + 64 * half + 16 * v;
                    const __m512 a = _mm512_max_ps(_mm512_add_ps(acc[r * 4 + v], bv[v]), zero);
                    if (R) _mm512_storeu_ps(R + o, a);
                    _mm512_storeu_ps(sq + o, _mm512_mul_ps(a, a));
                }
            i += rows;
        }
    }
}

/* One block forward on T rows: n = rmsnorm(h) (kept in n, inv), r = relu(n W1 + b), h += r^2 W2 (r is not
   kept: the backward pass computes it again). sq: T x H scratch. */
static void fwd_tile(int T, float *restrict h, float *restrict n, float *restrict inv, const float *W1,
                     const float *b, const float *W2, float *restrict sq)
{
    rmsnorm_fast(T, h, n, inv);
    relu_rows(T, n, W1, b, 0, sq);
    for (int i = 0; i < T;) {
        __m512 acc[24];
        const int rows = group2(T - i);
        for (int r = 0; r < rows; r++) {
            acc[2 * r] = _mm512_loadu_ps(h + (i + r) * FD);
            acc[2 * r + 1] = _mm512_loadu_ps(h + (i + r) * FD + 16);
        }
        rows2(rows, sq + i * FH, W2, acc);
        for (int r = 0; r < rows; r++) {
            _mm512_storeu_ps(h + (i + r) * FD, acc[2 * r]);
            _mm512_storeu_ps(h + (i + r) * FD + 16, acc[2 * r + 1]);
        }
        i += rows;
    }
}

/* One block backward on T rows. g (T x D): dL/dh_{l+1} in, dL/dh_l out (when need_dx). n, inv: the
   block's saved normalised input and 1/rms of these rows; its ReLU output r = relu(n W1 + b) is computed
   again here (into R) rather than stored by the forward pass: one more product, but the memory traffic of
   storing and re-reading T x H floats per block costs more than the product. Accumulates gW2T (D x H: W2's
   gradient transposed), gW1 (D x H) and gb (H). R, sq, a: T x H scratch. */
static void bwd_tile(int T, float *restrict g, const float *restrict n, const float *restrict inv,
                     const float *W1, const float *b, const float *W2T, const float *W1T,
                     float *restrict gW2T, float *restrict gW1, float *restrict gb, float *restrict R,
                     float *restrict sq, float *restrict a, int need_dx)
{
    relu_rows(T, n, W1, b, R, sq);
    outer_t(T, g, sq, gW2T);
    for (int half = 0; half < 2; half++) { /* a = dL/d(pre-activation) = (g W2^T) * 2 r */
        for (int i = 0; i < T;) {
            __m512 acc[24];
            const int rows = group4(T - i);
            rows4(rows, g + i * FD, W2T + 64 * half, acc);
            for (int r = 0; r < rows; r++)
                for (int v = 0; v < 4; v++) {
                    const int64_t o = (int64_t)(i + r) * FH + 64 * half + 16 * v;
                    const __m512 rr = _mm512_loadu_ps(R + o);
                    const __m512 d = _mm512_mul_ps(acc[r * 4 + v], _mm512_add_ps(rr, rr));
                    _mm512_storeu_ps(a + o, d);
                    float *gbv = gb + 64 * half + 16 * v;
                    _mm512_storeu_ps(gbv, _mm512_add_ps(_mm512_loadu_ps(gbv), d));
                }
            i += rows;
        }
    }
    outer_t(T, n, a, gW1);
    if (!need_dx) return;
    for (int i = 0; i < T;) { /* through n = h / rms(h), plus the residual path */
        __m512 acc[24];
        const int rows = group2(T - i);
        for (int q = 0; q < 2 * rows; q++) acc[q] = _mm512_setzero_ps();
        rows2(rows, a + i * FH, W1T, acc);
        for (int r = 0; r < rows; r++) {
            const float *ni = n + (i + r) * FD;
            float *gi = g + (i + r) * FD;
            const __m512 n0 = _mm512_loadu_ps(ni), n1 = _mm512_loadu_ps(ni + 16);
            const __m512 d0 = acc[2 * r], d1 = acc[2 * r + 1];
            const float dot =
                _mm512_reduce_add_ps(_mm512_fmadd_ps(d0, n0, _mm512_mul_ps(d1, n1))) / (float)FD;
            const __m512 dv = _mm512_set1_ps(dot), iv = _mm512_set1_ps(inv[i + r]);
            _mm512_storeu_ps(gi, _mm512_fmadd_ps(_mm512_fnmadd_ps(n0, dv, d0), iv, _mm512_loadu_ps(gi)));
            _mm512_storeu_ps(gi + 16,
                             _mm512_fmadd_ps(_mm512_fnmadd_ps(n1, dv, d1), iv, _mm512_loadu_ps(gi + 16)));
        }
        i += rows;
    }
}

/* B (cols x rows) = A^T for A (rows x cols). */
static void transpose(int rows, int cols, const float *restrict A, float *restrict B)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) B[j * rows + i] = A[i * cols + j];
}
#endif

/* The MSE of out (B x D) against target, returned (mean over batch and width, summed in double), and its
   gradient through the final rmsnorm into g: dh = (go - o * mean(go * o)) / rms. */
static double mse_grad(int64_t B, int64_t D, const float *restrict out, const float *restrict inv_out,
                       const float *restrict target, float *restrict g)
{
    double loss = 0.0;
    const float scale = 2.0f / (float)(B * D);
    for (int64_t r = 0; r < B; r++) {
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
    return loss / (double)(B * D);
}

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
   the fast path: the products with the elementwise work fused into them). */
void teacher_forward(int64_t L, int64_t B, int64_t D, int64_t H, int64_t tile, const float *restrict x,
                     const float *W1, const float *b1, const float *W2, int64_t sW1, int64_t sb1, int64_t sW2,
                     float *restrict out, float *restrict ws, double *restrict stats)
{
    float *h = ws, *n = h + B * D, *a = n + tile * D, *sq = a + tile * H;
    double gs = 0.0;
    rmsnorm_rows(B, D, x, h, 0);
#if FAST
    if (D == FD && H == FH && tile >= FT) {
        const double t = now_s();
        for (int64_t l = 0; l < L; l++)
            for (int64_t r0 = 0; r0 < B; r0 += FT)
                fwd_tile((int)(B - r0 < FT ? B - r0 : FT), h + r0 * D, n, 0, W1 + l * sW1, b1 + l * sb1,
                         W2 + l * sW2, sq);
        gs = now_s() - t;
        rmsnorm_rows(B, D, h, out, 0);
        stats[0] += gs;
        return;
    }
#endif
    for (int64_t l = 0; l < L; l++) {
        const float *w1 = W1 + l * sW1, *bb = b1 + l * sb1, *w2 = W2 + l * sW2;
        for (int64_t r0 = 0; r0 < B; r0 += tile) {
            const int T = (int)(B - r0 < tile ? B - r0 : tile);
            rmsnorm_rows(T, D, h + r0 * D, n, 0);
            mm('N', 'N', T, (int)H, (int)D, n, (int)D, w1, (int)H, 0.0f, a, (int)H, 1, &gs);
            bias_relu_square(T, H, a, bb, 0, sq);
            mm('N', 'N', T, (int)D, (int)H, sq, (int)H, w2, (int)D, 1.0f, h + r0 * D, (int)D, 1, &gs);
        }
    }
    rmsnorm_rows(B, D, h, out, 0);
    stats[0] += gs;
}

/* Size in floats of student_step's workspace: the generic path's (each block's normalised input, 1/rms and
   ReLU output, h, g, out, 1/rms of out, tile scratch), or the fast path's where this build takes it at
   these sizes (the normalised inputs and 1/rms, the transposed weights, W2's gradient transposed, h, g,
   out, 1/rms of out, three FT x H scratch tiles). */
int64_t student_workspace(int64_t L, int64_t B, int64_t D, int64_t H, int64_t tile)
{
    if (FAST && D == FD && H == FH)
        return L * B * (D + 1) + 2 * L * D * H + H * D + 3 * B * D + B + 3 * FT * H;
    return L * B * (D + 1 + H) + 3 * B * D + B + tile * (2 * H + D);
}

/* 1 where this build has the fast path (AVX-512, used for D = 32, H = 128), 0 where it has the generic
   one only. */
int fast_path(void)
{ return FAST; }

#if FAST
/* student_step for D = 32, H = 128 (see the fast path above). Workspace: Ns, W1T, W2T, gW2T, h, g, out,
   sq, a, R, INV, inv_out (every array but the last two a multiple of 16 floats). */
static double student_step_fast(int64_t L, int64_t B, const float *restrict x, const float *restrict target,
                                float *restrict P, float *restrict G, float *restrict M, float *restrict V,
                                float *restrict ws, double step_size, double bc2_sqrt, double beta1,
                                double beta2, double eps, int timed, double *restrict stats)
{
    const int64_t D = FD, H = FH, nW1 = L * D * H, nb1 = L * H, nP = nW1 + nb1 + L * H * D;
    const float *W1 = P, *b1 = P + nW1, *W2 = P + nW1 + nb1;
    float *gW1 = G, *gb1 = G + nW1, *gW2 = G + nW1 + nb1;
    float *Ns = ws, *W1T = Ns + L * B * D, *W2T = W1T + L * D * H;
    float *gW2T = W2T + L * D * H, *h = gW2T + H * D, *g = h + B * D, *out = g + B * D;
    float *sq = out + B * D, *a = sq + FT * H, *R = a + FT * H, *INV = R + FT * H, *inv_out = INV + L * B;
    double gs = 0.0, t = 0.0;

    for (int64_t l = 0; l < L; l++) {
        transpose((int)D, (int)H, W1 + l * D * H, W1T + l * H * D);
        transpose((int)H, (int)D, W2 + l * H * D, W2T + l * D * H);
    }
    rmsnorm_rows(B, D, x, h, 0);
    for (int64_t l = 0; l < L; l++) {
        if (timed) t = now_s();
        for (int64_t r0 = 0; r0 < B; r0 += FT)
            fwd_tile((int)(B - r0 < FT ? B - r0 : FT), h + r0 * D, Ns + (l * B + r0) * D, INV + l * B + r0,
                     W1 + l * D * H, b1 + l * H, W2 + l * H * D, sq);
        if (timed) gs += now_s() - t;
    }
    rmsnorm_rows(B, D, h, out, inv_out);
    const double loss = mse_grad(B, D, out, inv_out, target, g);

    for (int64_t l = L - 1; l >= 0; l--) {
        float *gw1 = gW1 + l * D * H, *gbl = gb1 + l * H;
        for (int64_t i = 0; i < H * D; i++) gw1[i] = gW2T[i] = 0.0f;
        for (int64_t j = 0; j < H; j++) gbl[j] = 0.0f;
        if (timed) t = now_s();
        for (int64_t r0 = 0; r0 < B; r0 += FT)
            bwd_tile((int)(B - r0 < FT ? B - r0 : FT), g + r0 * D, Ns + (l * B + r0) * D, INV + l * B + r0,
                     W1 + l * D * H, b1 + l * H, W2T + l * D * H, W1T + l * H * D, gW2T, gw1, gbl, R, sq, a,
                     l > 0);
        if (timed) gs += now_s() - t;
        transpose((int)D, (int)H, gW2T, gW2 + l * H * D);
    }
    adam(nP, P, G, M, V, step_size, bc2_sqrt, beta1, beta2, eps);
    stats[0] += gs;
    return loss;
}
#endif

/* One step of one student on batch x (B x D) against the teacher's output `target` (B x D): forward
   (keeping each block's normalised input, its 1/rms and its ReLU output), the MSE loss (returned: mean
   over batch and width, summed in double), backward into G (the whole gradient: every entry written),
   then Adam on P with moments M, V (torch.optim.Adam's update: step_size = lr / (1 - beta1^t),
   bc2_sqrt = sqrt(1 - beta2^t)). stats[0] += seconds in the block products when `timed` (on the fast
   path: the products with the elementwise work fused into them). */
double student_step(int64_t L, int64_t B, int64_t D, int64_t H, int64_t tile, const float *restrict x,
                    const float *restrict target, float *restrict P, float *restrict G, float *restrict M,
                    float *restrict V, float *restrict ws, double step_size, double bc2_sqrt, double beta1,
                    double beta2, double eps, int timed, double *restrict stats)
{
#if FAST
    if (D == FD && H == FH)
        return student_step_fast(L, B, x, target, P, G, M, V, ws, step_size, bc2_sqrt, beta1, beta2, eps,
                                 timed, stats);
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
