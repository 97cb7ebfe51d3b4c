#ifndef BOXD_ATTN_H
#define BOXD_ATTN_H

// The most query rows one call of boxd_attn_rows takes.
#define BOXD_ATTN_ROWS 48

// boxd_attn_transpose_keys writes head h's keys, scaled, as kt[d × np]
// (row c holds component c of every key, zero past n). K is [n × S].
void boxd_attn_transpose_keys(const float *K, int n, int S, int d, int h, float scale, float *kt, int np);

// boxd_attn_rows writes O's rows i0..i1 (at most BOXD_ATTN_ROWS) for head
// h: softmax(q·kt)·v. Q, V and O are [n × S], head h at columns h·d;
// scores holds (i1-i0) × np floats and out (i1-i0) × d.
void boxd_attn_rows(const float *Q, const float *kt, const float *V, float *O, int n, int np, int S, int d, int h,
                    int i0, int i1, float *scores, float *out);

#endif

// Epilogues of boxd_gemm_rows.
#define BOXD_GEMM_BIAS 0     // C = A·B + bias
#define BOXD_GEMM_GELU 1     // C = gelu(A·B + bias), gelu by erf
#define BOXD_GEMM_RESIDUAL 2 // C += A·B + bias

// boxd_pack_panels writes W [N × K] (row-major: output n's K inputs
// contiguous) as panels of 16 outputs: bp[(n/16)·K·16 + k·16 + n%16].
// N is a multiple of 16.
void boxd_pack_panels(const float *w, int N, int K, float *bp);

// boxd_gemm_rows computes rows i0..i1 of C [M × N] = A [M × K] · Wᵀ with
// W packed by boxd_pack_panels, bias (N, or NULL) and the epilogue mode;
// A's rows lda apart, C's ldc apart.
void boxd_gemm_rows(const float *A, int lda, int K, const float *bp, int N, const float *bias, float *C, int ldc, int i0, int i1,
                    int mode);

// boxd_layernorm_rows writes rows i0..i1 of out [M × S]: each row of x
// normalised (mean 0, variance 1 plus eps, sums in double), times g plus b.
void boxd_layernorm_rows(const float *x, int S, const float *g, const float *b, float eps, float *out, int i0, int i1);

#include <stdint.h>

// boxd_f32_to_f16 converts n floats to IEEE half precision bits (round
// to nearest even), as ggml stores F16.
void boxd_f32_to_f16(const float *x, uint16_t *h, long n);

// boxd_logits computes out[c·V + v] = Σ_k x[c·K + k] · w[v·K + k] for
// vocabulary rows v0..v1 and columns c < cols: w is F16 (w16) or F32
// (w32, when w16 is NULL), K a multiple of 8.
void boxd_logits(const uint16_t *w16, const float *w32, int K, const float *x, int cols, float *out, int V, int v0, int v1);

// boxd_log_normaliser is log Σ exp(l[i]) over n values: the largest
// subtracted first, exponentials in float (relative error under 2e-7),
// summed in double every 64 values.
double boxd_log_normaliser(const float *l, long n);
