// Fused attention for Whisper's encoder on the CPU: softmax(scale·Q·Kᵀ)·V
// per head, one block of query rows at a time, so the n × n scores never
// leave the cache (see attn.go).

#include <math.h>
#include <string.h>

#include "attn.h"

#include "simd.h"

// Register tile of the products: RM rows of the left matrix by RN·8
// columns of the right one (12 accumulators, 2 loads and a broadcast: 15
// of AVX2's 16 registers).
#define RM 6
#define RN 2

#ifdef BOXD_ATTN_AVX2

// tile6 computes C[6 × 16] = A[6 × K] · B[K × 16], A's rows lda apart,
// B's rows ldb apart, C's rows ldc apart: twelve named accumulators, so
// the compiler keeps every one in a register.
static inline void tile6(int K, const float *A, int lda, const float *B, int ldb, float *C, int ldc) {
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    const float *a0 = A, *a1 = A + lda, *a2 = A + 2 * (size_t)lda, *a3 = A + 3 * (size_t)lda, *a4 = A + 4 * (size_t)lda,
                *a5 = A + 5 * (size_t)lda;
    for (int k = 0; k < K; k++) {
        const float *b = B + (size_t)k * ldb;
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8), a;
        a = _mm256_broadcast_ss(a0 + k);
        c00 = _mm256_fmadd_ps(a, b0, c00);
        c01 = _mm256_fmadd_ps(a, b1, c01);
        a = _mm256_broadcast_ss(a1 + k);
        c10 = _mm256_fmadd_ps(a, b0, c10);
        c11 = _mm256_fmadd_ps(a, b1, c11);
        a = _mm256_broadcast_ss(a2 + k);
        c20 = _mm256_fmadd_ps(a, b0, c20);
        c21 = _mm256_fmadd_ps(a, b1, c21);
        a = _mm256_broadcast_ss(a3 + k);
        c30 = _mm256_fmadd_ps(a, b0, c30);
        c31 = _mm256_fmadd_ps(a, b1, c31);
        a = _mm256_broadcast_ss(a4 + k);
        c40 = _mm256_fmadd_ps(a, b0, c40);
        c41 = _mm256_fmadd_ps(a, b1, c41);
        a = _mm256_broadcast_ss(a5 + k);
        c50 = _mm256_fmadd_ps(a, b0, c50);
        c51 = _mm256_fmadd_ps(a, b1, c51);
    }
    _mm256_storeu_ps(C, c00);
    _mm256_storeu_ps(C + 8, c01);
    _mm256_storeu_ps(C + (size_t)ldc, c10);
    _mm256_storeu_ps(C + (size_t)ldc + 8, c11);
    _mm256_storeu_ps(C + 2 * (size_t)ldc, c20);
    _mm256_storeu_ps(C + 2 * (size_t)ldc + 8, c21);
    _mm256_storeu_ps(C + 3 * (size_t)ldc, c30);
    _mm256_storeu_ps(C + 3 * (size_t)ldc + 8, c31);
    _mm256_storeu_ps(C + 4 * (size_t)ldc, c40);
    _mm256_storeu_ps(C + 4 * (size_t)ldc + 8, c41);
    _mm256_storeu_ps(C + 5 * (size_t)ldc, c50);
    _mm256_storeu_ps(C + 5 * (size_t)ldc + 8, c51);
}

// tile1 is tile6 for one row.
static inline void tile1(int K, const float *A, const float *B, int ldb, float *C) {
    __m256 c0 = _mm256_setzero_ps(), c1 = c0;
    for (int k = 0; k < K; k++) {
        const float *b = B + (size_t)k * ldb;
        __m256 a = _mm256_broadcast_ss(A + k);
        c0 = _mm256_fmadd_ps(a, _mm256_loadu_ps(b), c0);
        c1 = _mm256_fmadd_ps(a, _mm256_loadu_ps(b + 8), c1);
    }
    _mm256_storeu_ps(C, c0);
    _mm256_storeu_ps(C + 8, c1);
}

// tile computes C[rm × 16] = A[rm × K] · B[K × 16] (rm ≤ RM).
static inline void tile(int rm, int K, const float *A, int lda, const float *B, int ldb, float *C, int ldc) {
    if (rm == RM) {
        tile6(K, A, lda, B, ldb, C, ldc);
        return;
    }
    for (int i = 0; i < rm; i++) {
        tile1(K, A + (size_t)i * lda, B, ldb, C + (size_t)i * ldc);
    }
}

// softmaxRow turns row[0..n) into e^(row - max) in place (row[n..np)
// is zero padding, left at 0) and returns the sum.
static float softmaxRow(float *row, int n) {
    __m256 mx = _mm256_set1_ps(-INFINITY);
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        mx = _mm256_max_ps(mx, _mm256_loadu_ps(row + j));
    }
    float buf[8];
    _mm256_storeu_ps(buf, mx);
    float m = buf[0];
    for (int i = 1; i < 8; i++) {
        m = buf[i] > m ? buf[i] : m;
    }
    for (; j < n; j++) {
        m = row[j] > m ? row[j] : m;
    }
    __m256 vm = _mm256_set1_ps(m), sum = _mm256_setzero_ps();
    for (j = 0; j + 8 <= n; j += 8) {
        __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(row + j), vm));
        _mm256_storeu_ps(row + j, e);
        sum = _mm256_add_ps(sum, e);
    }
    _mm256_storeu_ps(buf, sum);
    // The tail through the same kernel, so every score is one function.
    if (j < n) {
        float t[8] = {0};
        for (int i = 0; j + i < n; i++) {
            t[i] = row[j + i] - m;
        }
        __m256 e = exp8(_mm256_loadu_ps(t));
        float te[8];
        _mm256_storeu_ps(te, e);
        for (int i = 0; j + i < n; i++) {
            row[j + i] = te[i];
            buf[i] += te[i];
        }
    }
    float s = 0;
    for (int i = 0; i < 8; i++) {
        s += buf[i];
    }
    return s;
}

#else // no AVX2: plain loops (the compiler vectorises what it can)

static inline void tile(int rm, int K, const float *A, int lda, const float *B, int ldb, float *C, int ldc) {
    for (int i = 0; i < rm; i++) {
        float acc[16] = {0};
        for (int k = 0; k < K; k++) {
            float a = A[(size_t)i * lda + k];
            for (int c = 0; c < 16; c++) {
                acc[c] += a * B[(size_t)k * ldb + c];
            }
        }
        memcpy(C + (size_t)i * ldc, acc, sizeof acc);
    }
}

static float softmaxRow(float *row, int n) {
    float m = -INFINITY, s = 0;
    for (int j = 0; j < n; j++) {
        m = row[j] > m ? row[j] : m;
    }
    for (int j = 0; j < n; j++) {
        row[j] = expf(row[j] - m);
        s += row[j];
    }
    return s;
}

#endif

void boxd_attn_transpose_keys(const float *K, int n, int S, int d, int h, float scale, float *kt, int np) {
    for (int c = 0; c < d; c++) {
        float *dst = kt + (size_t)c * np;
        const float *src = K + (size_t)h * d + c;
        for (int j = 0; j < n; j++) {
            dst[j] = src[(size_t)j * S] * scale;
        }
        for (int j = n; j < np; j++) {
            dst[j] = 0;
        }
    }
}

void boxd_attn_rows(const float *Q, const float *kt, const float *V, float *O, int n, int np, int S, int d, int h,
                    int i0, int i1, float *scores, float *out) {
    const int rows = i1 - i0;
    const float *q = Q + (size_t)i0 * S + (size_t)h * d;
    // Scores: [rows × np] = q[rows × d] · kt[d × np].
    for (int i = 0; i < rows; i += RM) {
        int rm = rows - i < RM ? rows - i : RM;
        for (int j = 0; j < np; j += 16) {
            tile(rm, d, q + (size_t)i * S, S, kt + j, np, scores + (size_t)i * np + j, np);
        }
    }
    float sums[BOXD_ATTN_ROWS];
    for (int i = 0; i < rows; i++) {
        float *row = scores + (size_t)i * np;
        sums[i] = softmaxRow(row, n);
        for (int j = n; j < np; j++) {
            row[j] = 0;
        }
    }
    // Output: [rows × d] = p[rows × n] · v[n × d], v's rows S apart.
    const float *v = V + (size_t)h * d;
    for (int i = 0; i < rows; i += RM) {
        int rm = rows - i < RM ? rows - i : RM;
        for (int c = 0; c < d; c += 16) {
            tile(rm, n, scores + (size_t)i * np, np, v + c, S, out + (size_t)i * d + c, d);
        }
    }
    for (int i = 0; i < rows; i++) {
        float inv = 1.0f / sums[i];
        float *dst = O + (size_t)(i0 + i) * S + (size_t)h * d;
        for (int c = 0; c < d; c++) {
            dst[c] = out[(size_t)i * d + c] * inv;
        }
    }
}

void boxd_pack_panels(const float *w, int N, int K, float *bp) {
    for (int p = 0; p < N / 16; p++) {
        float *dst = bp + (size_t)p * K * 16;
        for (int c = 0; c < 16; c++) {
            const float *src = w + (size_t)(p * 16 + c) * K;
            for (int k = 0; k < K; k++) {
                dst[(size_t)k * 16 + c] = src[k];
            }
        }
    }
}

static inline float gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440f)); }

void boxd_gemm_rows(const float *A, int lda, int K, const float *bp, int N, const float *bias, float *C, int ldc, int i0, int i1,
                    int mode) {
    float tmp[RM * 16];
    for (int p = 0; p < N / 16; p++) {
        const float *b = bp + (size_t)p * K * 16;
        for (int i = i0; i < i1; i += RM) {
            int rm = i1 - i < RM ? i1 - i : RM;
            tile(rm, K, A + (size_t)i * lda, lda, b, 16, tmp, 16);
            for (int r = 0; r < rm; r++) {
                float *c = C + (size_t)(i + r) * ldc + p * 16;
                const float *t = tmp + r * 16;
                for (int j = 0; j < 16; j++) {
                    float y = t[j] + (bias ? bias[p * 16 + j] : 0.0f);
                    switch (mode) {
                    case BOXD_GEMM_GELU:
                        c[j] = gelu(y);
                        break;
                    case BOXD_GEMM_RESIDUAL:
                        c[j] += y;
                        break;
                    default:
                        c[j] = y;
                    }
                }
            }
        }
    }
}

void boxd_layernorm_rows(const float *x, int S, const float *g, const float *b, float eps, float *out, int i0, int i1) {
    for (int i = i0; i < i1; i++) {
        const float *row = x + (size_t)i * S;
        double sum = 0;
        for (int j = 0; j < S; j++) {
            sum += row[j];
        }
        float mean = (float)(sum / S);
        double var = 0;
        for (int j = 0; j < S; j++) {
            float d = row[j] - mean;
            var += (double)(d * d);
        }
        float scale = 1.0f / sqrtf((float)(var / S) + eps);
        float *o = out + (size_t)i * S;
        for (int j = 0; j < S; j++) {
            o[j] = (row[j] - mean) * scale * g[j] + b[j];
        }
    }
}

void boxd_f32_to_f16(const float *x, uint16_t *h, long n) {
    long i = 0;
#ifdef BOXD_ATTN_AVX2
    for (; i + 8 <= n; i += 8) {
        _mm_storeu_si128((__m128i *)(h + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    }
    for (; i < n; i++) {
        h[i] = (uint16_t)_cvtss_sh(x[i], _MM_FROUND_TO_NEAREST_INT);
    }
#else
    for (; i < n; i++) {
        _Float16 f = (_Float16)x[i];
        memcpy(h + i, &f, 2);
    }
#endif
}

#ifdef BOXD_ATTN_AVX2

static inline __m256 load8(const uint16_t *w16, const float *w32, size_t off) {
    if (w16) {
        return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(w16 + off)));
    }
    return _mm256_loadu_ps(w32 + off);
}


// logits4 is two vocabulary rows by four columns at a time.
static void logits4(const uint16_t *w16, const float *w32, int K, const float *x, float *out, int V, int v0, int v1) {
    const float *x0 = x, *x1 = x + K, *x2 = x + 2 * (size_t)K, *x3 = x + 3 * (size_t)K;
    int v = v0;
    // Prefetch the rows 16 ahead, as logits1 does.
    const size_t esz = w16 ? 2 : 4, pair = 2 * (size_t)K * esz, per = (pair / 64 + K / 8 - 1) / (K / 8);
    const char *wb = w16 ? (const char *)w16 : (const char *)w32, *end = wb + (size_t)v1 * K * esz;
    for (; v + 2 <= v1; v += 2) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        size_t r0 = (size_t)v * K, r1 = r0 + K;
        const char *ahead = wb + r0 * esz + 8 * pair;
        for (int k = 0; k < K; k += 8) {
            for (size_t p = 0; p < per; p++) {
                const char *a = ahead + ((size_t)(k / 8) * per + p) * 64;
                if (a < end) {
                    _mm_prefetch(a, _MM_HINT_T0);
                }
            }
            __m256 w0 = load8(w16, w32, r0 + k), w1 = load8(w16, w32, r1 + k), xv;
            xv = _mm256_loadu_ps(x0 + k);
            a0 = _mm256_fmadd_ps(w0, xv, a0);
            b0 = _mm256_fmadd_ps(w1, xv, b0);
            xv = _mm256_loadu_ps(x1 + k);
            a1 = _mm256_fmadd_ps(w0, xv, a1);
            b1 = _mm256_fmadd_ps(w1, xv, b1);
            xv = _mm256_loadu_ps(x2 + k);
            a2 = _mm256_fmadd_ps(w0, xv, a2);
            b2 = _mm256_fmadd_ps(w1, xv, b2);
            xv = _mm256_loadu_ps(x3 + k);
            a3 = _mm256_fmadd_ps(w0, xv, a3);
            b3 = _mm256_fmadd_ps(w1, xv, b3);
        }
        out[v] = hsum(a0), out[V + v] = hsum(a1), out[2 * (size_t)V + v] = hsum(a2), out[3 * (size_t)V + v] = hsum(a3);
        out[v + 1] = hsum(b0), out[V + v + 1] = hsum(b1), out[2 * (size_t)V + v + 1] = hsum(b2), out[3 * (size_t)V + v + 1] = hsum(b3);
    }
    for (; v < v1; v++) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        size_t r0 = (size_t)v * K;
        for (int k = 0; k < K; k += 8) {
            __m256 w0 = load8(w16, w32, r0 + k);
            a0 = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x0 + k), a0);
            a1 = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x1 + k), a1);
            a2 = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x2 + k), a2);
            a3 = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x3 + k), a3);
        }
        out[v] = hsum(a0), out[V + v] = hsum(a1), out[2 * (size_t)V + v] = hsum(a2), out[3 * (size_t)V + v] = hsum(a3);
    }
}

// logits1 is four vocabulary rows by one column at a time (four streams
// of weights in flight).
static void logits1(const uint16_t *w16, const float *w32, int K, const float *x, float *out, int v0, int v1) {
    int v = v0;
    // Each block of 8 rows prefetches the block two ahead, spread over its
    // steps: one core alone keeps too few lines in flight to fill memory's
    // bandwidth.
    const size_t esz = w16 ? 2 : 4, block = 8 * (size_t)K * esz, per = (block / 64 + K / 8 - 1) / (K / 8);
    const char *wb = w16 ? (const char *)w16 : (const char *)w32;
    for (; v + 8 <= v1; v += 8) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
        size_t r0 = (size_t)v * K;
        const char *ahead = wb + r0 * esz + 2 * block, *end = wb + (size_t)v1 * K * esz;
        for (int k = 0; k < K; k += 8) {
            for (size_t p = 0; p < per; p++) {
                const char *a = ahead + ((size_t)(k / 8) * per + p) * 64;
                if (a < end) {
                    _mm_prefetch(a, _MM_HINT_T0);
                }
            }
            __m256 xv = _mm256_loadu_ps(x + k);
            a0 = _mm256_fmadd_ps(load8(w16, w32, r0 + k), xv, a0);
            a1 = _mm256_fmadd_ps(load8(w16, w32, r0 + K + k), xv, a1);
            a2 = _mm256_fmadd_ps(load8(w16, w32, r0 + 2 * (size_t)K + k), xv, a2);
            a3 = _mm256_fmadd_ps(load8(w16, w32, r0 + 3 * (size_t)K + k), xv, a3);
            a4 = _mm256_fmadd_ps(load8(w16, w32, r0 + 4 * (size_t)K + k), xv, a4);
            a5 = _mm256_fmadd_ps(load8(w16, w32, r0 + 5 * (size_t)K + k), xv, a5);
            a6 = _mm256_fmadd_ps(load8(w16, w32, r0 + 6 * (size_t)K + k), xv, a6);
            a7 = _mm256_fmadd_ps(load8(w16, w32, r0 + 7 * (size_t)K + k), xv, a7);
        }
        out[v] = hsum(a0);
        out[v + 1] = hsum(a1);
        out[v + 2] = hsum(a2);
        out[v + 3] = hsum(a3);
        out[v + 4] = hsum(a4);
        out[v + 5] = hsum(a5);
        out[v + 6] = hsum(a6);
        out[v + 7] = hsum(a7);
    }
    for (; v < v1; v++) {
        __m256 a0 = _mm256_setzero_ps();
        for (int k = 0; k < K; k += 8) {
            a0 = _mm256_fmadd_ps(load8(w16, w32, (size_t)v * K + k), _mm256_loadu_ps(x + k), a0);
        }
        out[v] = hsum(a0);
    }
}

// logits2 is four vocabulary rows by two columns at a time.
static void logits2(const uint16_t *w16, const float *w32, int K, const float *x, float *out, int V, int v0, int v1) {
    const float *x0 = x, *x1 = x + K;
    const size_t esz = w16 ? 2 : 4, block = 4 * (size_t)K * esz, per = (block / 64 + K / 8 - 1) / (K / 8);
    const char *wb = w16 ? (const char *)w16 : (const char *)w32, *end = wb + (size_t)v1 * K * esz;
    int v = v0;
    for (; v + 4 <= v1; v += 4) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        size_t r0 = (size_t)v * K;
        const char *ahead = wb + r0 * esz + 2 * block;
        for (int k = 0; k < K; k += 8) {
            for (size_t p = 0; p < per; p++) {
                const char *a = ahead + ((size_t)(k / 8) * per + p) * 64;
                if (a < end) {
                    _mm_prefetch(a, _MM_HINT_T0);
                }
            }
            __m256 u = _mm256_loadu_ps(x0 + k), t = _mm256_loadu_ps(x1 + k), w;
            w = load8(w16, w32, r0 + k);
            a0 = _mm256_fmadd_ps(w, u, a0);
            b0 = _mm256_fmadd_ps(w, t, b0);
            w = load8(w16, w32, r0 + K + k);
            a1 = _mm256_fmadd_ps(w, u, a1);
            b1 = _mm256_fmadd_ps(w, t, b1);
            w = load8(w16, w32, r0 + 2 * (size_t)K + k);
            a2 = _mm256_fmadd_ps(w, u, a2);
            b2 = _mm256_fmadd_ps(w, t, b2);
            w = load8(w16, w32, r0 + 3 * (size_t)K + k);
            a3 = _mm256_fmadd_ps(w, u, a3);
            b3 = _mm256_fmadd_ps(w, t, b3);
        }
        out[v] = hsum(a0), out[v + 1] = hsum(a1), out[v + 2] = hsum(a2), out[v + 3] = hsum(a3);
        out[V + v] = hsum(b0), out[V + v + 1] = hsum(b1), out[V + v + 2] = hsum(b2), out[V + v + 3] = hsum(b3);
    }
    for (; v < v1; v++) {
        __m256 a0 = _mm256_setzero_ps(), b0 = a0;
        for (int k = 0; k < K; k += 8) {
            __m256 w = load8(w16, w32, (size_t)v * K + k);
            a0 = _mm256_fmadd_ps(w, _mm256_loadu_ps(x0 + k), a0);
            b0 = _mm256_fmadd_ps(w, _mm256_loadu_ps(x1 + k), b0);
        }
        out[v] = hsum(a0), out[V + v] = hsum(b0);
    }
}

void boxd_logits(const uint16_t *w16, const float *w32, int K, const float *x, int cols, float *out, int V, int v0, int v1) {
    int c = 0;
    for (; c + 4 <= cols; c += 4) {
        logits4(w16, w32, K, x + (size_t)c * K, out + (size_t)c * V, V, v0, v1);
    }
    for (; c + 2 <= cols; c += 2) {
        logits2(w16, w32, K, x + (size_t)c * K, out + (size_t)c * V, V, v0, v1);
    }
    for (; c < cols; c++) {
        logits1(w16, w32, K, x + (size_t)c * K, out + (size_t)c * V, v0, v1);
    }
}

#else

void boxd_logits(const uint16_t *w16, const float *w32, int K, const float *x, int cols, float *out, int V, int v0, int v1) {
    for (int c = 0; c < cols; c++) {
        for (int v = v0; v < v1; v++) {
            float s = 0;
            for (int k = 0; k < K; k++) {
                float w;
                if (w16) {
                    _Float16 h;
                    memcpy(&h, w16 + (size_t)v * K + k, 2);
                    w = (float)h;
                } else {
                    w = w32[(size_t)v * K + k];
                }
                s += w * x[(size_t)c * K + k];
            }
            out[(size_t)c * V + v] = s;
        }
    }
}

#endif

double boxd_log_normaliser(const float *l, long n) {
    if (n <= 0) {
        return -INFINITY;
    }
    float m = l[0];
    for (long i = 1; i < n; i++) {
        m = l[i] > m ? l[i] : m;
    }
    if (m == -INFINITY || m != m) {
        return m;
    }
    double z = 0;
    long i = 0;
#ifdef BOXD_ATTN_AVX2
    __m256 vm = _mm256_set1_ps(m);
    for (; i + 64 <= n; i += 64) {
        __m256 s = _mm256_setzero_ps();
        for (int j = 0; j < 64; j += 8) {
            s = _mm256_add_ps(s, exp8(_mm256_sub_ps(_mm256_loadu_ps(l + i + j), vm)));
        }
        z += (double)hsum(s);
    }
#endif
    for (; i < n; i++) {
        z += exp((double)l[i] - (double)m);
    }
    return (double)m + log(z);
}
