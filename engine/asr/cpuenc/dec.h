#ifndef BOXD_DEC_H
#define BOXD_DEC_H

#include <stdint.h>

// Whisper's decoder on the CPU (dec.c; see decoder.go).
typedef struct boxd_dec boxd_dec;

// Projections of a decoder layer (boxd_dec_set_linear's which).
enum { BOXD_DEC_Q, BOXD_DEC_K, BOXD_DEC_V, BOXD_DEC_O, BOXD_DEC_CQ, BOXD_DEC_CO, BOXD_DEC_FC1, BOXD_DEC_FC2 };
// Norms of a decoder layer (boxd_dec_set_norm's which; layer -1: the final one).
enum { BOXD_DEC_LN_ATTN, BOXD_DEC_LN_CROSS, BOXD_DEC_LN_MLP };

// boxd_dec_new makes a decoder of L layers of width S (H heads), a
// vocabulary of V, T text positions, A audio positions, caches for slots
// slots of beams sequences each, weights and caches F16 (f16) or F32, and
// threads workers (the caller and threads-1 of its own). NULL when memory
// runs out.
boxd_dec *boxd_dec_new(int S, int H, int L, int V, int T, int A, int slots, int beams, int f16, float eps, int threads);
void boxd_dec_free(boxd_dec *D);

// The setters copy what they are given. 0 on success, -1 for a wrong
// shape or no memory.
int boxd_dec_set_linear(boxd_dec *D, int layer, int which, const float *w, const float *b, int N, int K);
int boxd_dec_set_norm(boxd_dec *D, int layer, int which, const float *g, const float *b);
// emb is the token embedding [V × S] (also the output projection), pos
// the positional embedding [T × S].
int boxd_dec_set_embedding(boxd_dec *D, const float *emb, const float *pos);

// boxd_dec_set_cross stores a layer's cross-attention keys and values of
// a slot's window: k and v are [A × S], position major; A becomes the
// slot's audio positions.
void boxd_dec_set_cross(boxd_dec *D, int slot, int layer, const float *k, const float *v, int A);

// boxd_dec_reorder makes sequence i of a slot (i < B) a copy of sequence
// parents[i]'s self-attention caches, first past positions.
int boxd_dec_reorder(boxd_dec *D, int slot, const int32_t *parents, int B, int past);

// boxd_dec_forward runs M rows: row r is token tok[r] of sequence seq[r]
// of slot slot[r] at position pos[r]. Each writes its keys and values into
// its sequence's caches first, then attends to its positions up to its
// own. logits gets the vocabulary's logits of rows want[0..nwant), in
// order ([nwant × V]). 0 on success, -1 when memory runs out, -2 when a
// weight is not set yet.
int boxd_dec_forward(boxd_dec *D, int M, const int32_t *tok, const int32_t *slot, const int32_t *seq, const int32_t *pos, int nwant,
                     const int32_t *want, float *logits);

#endif
