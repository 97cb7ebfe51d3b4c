// Fused attention for Whisper's encoder on the CPU: softmax(scale·Q·Kᵀ)·V
// per head, one block of query rows at a time, so the n × n scores never
// leave the cache (see attn.go).

#include <math.h>
#include <string.h>

#include "attn.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define BOXD_ATTN_AVX2 1
#endif

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

// exp8 is e^x for 8 floats: x = m·ln2 + r, |r| ≤ ln2/2, e^r by its
// Taylor polynomial to degree 7 (relative error under 2e-7 there), 2^m
// built in the exponent bits. Inputs under -87.3 give 0 (as expf's
// underflow), the scores' -inf included.
static inline __m256 exp8(__m256 x) {
    const __m256 lo = _mm256_set1_ps(-87.33654f);
    __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
    x = _mm256_max_ps(x, lo);
    x = _mm256_min_ps(x, _mm256_set1_ps(88.3762626647949f));
    __m256 m = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    // r = x - m·ln2, ln2 in two parts (Cody–Waite).
    __m256 r = _mm256_fnmadd_ps(m, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(m, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.0f / 5040);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(m), _mm256_set1_epi32(127)), 23);
    __m256 out = _mm256_mul_ps(p, _mm256_castsi256_ps(e));
    return _mm256_andnot_ps(under, out);
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
