// C helpers for the llm package: callbacks from llama.cpp into Go, and the
// per-token sampling loop (kept in C so no Go/C call happens per candidate).
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "llamacpp/llama.h"
#include "llamacpp/mtmd.h"

// Installs boxd's log callback for llama.cpp and ggml.
void boxd_log_install(void);

// Sets the model-load progress callback; user points at a cgo.Handle.
void boxd_set_progress(struct llama_model_params *p, void *user);

// Sampling parameters of one sequence.
struct boxd_sampling {
	float temperature;      // <= 0: greedy
	float top_p;            // 1: off
	int32_t top_k;          // 0: off
	float min_p;            // 0: off
	float repeat_penalty;   // 1: off
	int32_t repeat_last_n;  // tokens the penalties look back over
	float frequency_penalty;
	float presence_penalty;
	uint32_t seed;
};

// A sequence's sampler: the chain, an optional grammar, and a candidate
// buffer of n_vocab entries.
struct boxd_sampler;

// Returns NULL and fills err when the grammar does not parse.
struct boxd_sampler *boxd_sampler_new(const struct llama_model *model, struct boxd_sampling p, const char *grammar, char *err, size_t errlen);

// Samples the token for the logits at batch index idx. With a grammar, the
// unconstrained pick is checked first and the grammar applied to the whole
// vocabulary only when the grammar rejects it.
llama_token boxd_sampler_sample(struct boxd_sampler *s, struct llama_context *ctx, int32_t idx);

// Records the chosen token (penalty history, grammar state).
void boxd_sampler_accept(struct boxd_sampler *s, llama_token tok);

void boxd_sampler_free(struct boxd_sampler *s);

// Batch access (the struct's arrays).
void boxd_batch_set(struct llama_batch *b, int32_t i, llama_token tok, llama_pos pos, llama_seq_id seq, bool logits);

// Decodes n_tokens embeddings (an image's, n_embd floats each) into
// sequence seq from position pos0, in one batch: with non_causal the
// image's tokens see each other both ways (Gemma 3), so the whole image
// must fit one micro-batch. Returns llama_decode's result (-1: no memory).
int32_t boxd_decode_embd(struct llama_context *ctx, const float *embd, int32_t n_tokens, int32_t n_embd, llama_pos pos0, llama_seq_id seq, bool non_causal);

// Tokenizes text holding one media marker per bitmap into chunks.
int32_t boxd_mtmd_tokenize(mtmd_context *ctx, mtmd_input_chunks *out, const char *text, bool add_special, bool parse_special, const mtmd_bitmap **bitmaps, size_t n);
