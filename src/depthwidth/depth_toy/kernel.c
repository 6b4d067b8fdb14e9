/* The depth toy's compiled trainer: one training step of one student (pre-norm residual ReLU^2 blocks,
   weight-free RMSNorm, MSE on the final normalised state) forward, backward and Adam in one call
   (student_step), and the teacher's forward pass (teacher_forward), shared by every student of a step.
   Plain C99; the dense products go through the BLAS that torch itself links (its Fortran sgemm_, handed
   over by set_sgemm); no torch headers.

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

/* The teacher's output rmsnorm(h_L) (B x D) for inputs x (B x D). Block l's weights are at
   W1 + l * sW1, b1 + l * sb1, W2 + l * sW2 (strides 0 for a tied teacher: every block is block 0).
   ws: h (B x D), n (tile x D), a and sq (tile x H each). stats[0] += seconds in the products. */
void teacher_forward(int64_t L, int64_t B, int64_t D, int64_t H, int64_t tile, const float *restrict x,
                     const float *W1, const float *b1, const float *W2, int64_t sW1, int64_t sb1, int64_t sW2,
                     float *restrict out, float *restrict ws, double *restrict stats)
{
    float *h = ws, *n = h + B * D, *a = n + tile * D, *sq = a + tile * H;
    double gs = 0.0;
    rmsnorm_rows(B, D, x, h, 0);
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

/* Size in floats of student_step's workspace. */
int64_t student_workspace(int64_t L, int64_t B, int64_t D, int64_t H, int64_t tile)
{ return L * B * (D + 1 + H) + 3 * B * D + B + tile * (2 * H + D); }

/* One step of one student on batch x (B x D) against the teacher's output `target` (B x D): forward
   (keeping each block's normalised input, its 1/rms and its ReLU output), the MSE loss (returned: mean
   over batch and width, summed in double), backward into G (the whole gradient: every entry written),
   then Adam on P with moments M, V (torch.optim.Adam's update: step_size = lr / (1 - beta1^t),
   bc2_sqrt = sqrt(1 - beta2^t)). stats[0] += seconds in the products when `timed`. */
double student_step(int64_t L, int64_t B, int64_t D, int64_t H, int64_t tile, const float *restrict x,
                    const float *restrict target, float *restrict P, float *restrict G, float *restrict M,
                    float *restrict V, float *restrict ws, double step_size, double bc2_sqrt, double beta1,
                    double beta2, double eps, int timed, double *restrict stats)
{
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

    /* loss and its gradient through the final rmsnorm: dh = (go - o * mean(go * o)) / rms */
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
    loss /= (double)(B * D);

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

    /* Adam */
    const float b1f = (float)beta1, b2f = (float)beta2, ssf = (float)step_size, bcs = (float)bc2_sqrt,
                epsf = (float)eps;
    for (int64_t i = 0; i < nP; i++) {
        const float gi = G[i];
        const float m = b1f * M[i] + (1.0f - b1f) * gi;
        const float v = b2f * V[i] + (1.0f - b2f) * gi * gi;
        M[i] = m;
        V[i] = v;
        P[i] -= ssf * m / (sqrtf(v) / bcs + epsf);
    }
    stats[0] += gs;
    return loss;
}
