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
