#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "bridge.h"
#include "_cgo_export.h"

static void boxd_log_cb(enum ggml_log_level level, const char *text, void *user) {
	(void)user;
	boxdLlamaLog((int)level, (char *)text);
}

void boxd_log_install(void) {
	llama_log_set(boxd_log_cb, NULL);
	mtmd_log_set(boxd_log_cb, NULL);
}

static bool boxd_progress_cb(float progress, void *user) { return boxdLoadProgress(progress, user); }

void boxd_set_progress(struct llama_model_params *p, void *user) {
	p->progress_callback = boxd_progress_cb;
	p->progress_callback_user_data = user;
}

struct boxd_sampler {
	struct llama_sampler *chain;
	struct llama_sampler *grammar;
	llama_token_data *cur;
	int32_t n_vocab;
};

struct boxd_sampler *boxd_sampler_new(const struct llama_model *model, struct boxd_sampling p, const char *grammar, char *err, size_t errlen) {
	const struct llama_vocab *vocab = llama_model_get_vocab(model);
	struct boxd_sampler *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->n_vocab = llama_vocab_n_tokens(vocab);
	s->cur = malloc(sizeof(llama_token_data) * (size_t)s->n_vocab);
	if (!s->cur) {
		free(s);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (grammar && grammar[0]) {
		s->grammar = llama_sampler_init_grammar(vocab, grammar, "root");
		if (!s->grammar) {
			free(s->cur);
			free(s);
			snprintf(err, errlen, "the grammar does not parse");
			return NULL;
		}
	}
	struct llama_sampler_chain_params cp = llama_sampler_chain_default_params();
	cp.no_perf = true;
	s->chain = llama_sampler_chain_init(cp);
	if (p.repeat_penalty != 1.0f || p.frequency_penalty != 0.0f || p.presence_penalty != 0.0f) {
		llama_sampler_chain_add(s->chain, llama_sampler_init_penalties(p.repeat_last_n, p.repeat_penalty, p.frequency_penalty, p.presence_penalty));
	}
	if (p.temperature <= 0.0f) {
		llama_sampler_chain_add(s->chain, llama_sampler_init_greedy());
	} else {
		if (p.top_k > 0) llama_sampler_chain_add(s->chain, llama_sampler_init_top_k(p.top_k));
		if (p.top_p < 1.0f) llama_sampler_chain_add(s->chain, llama_sampler_init_top_p(p.top_p, 1));
		if (p.min_p > 0.0f) llama_sampler_chain_add(s->chain, llama_sampler_init_min_p(p.min_p, 1));
		llama_sampler_chain_add(s->chain, llama_sampler_init_temp(p.temperature));
		llama_sampler_chain_add(s->chain, llama_sampler_init_dist(p.seed));
	}
	return s;
}

static void fill(struct boxd_sampler *s, const float *logits, llama_token_data_array *arr) {
	for (int32_t i = 0; i < s->n_vocab; i++) {
		s->cur[i].id = i;
		s->cur[i].logit = logits[i];
		s->cur[i].p = 0.0f;
	}
	arr->data = s->cur;
	arr->size = (size_t)s->n_vocab;
	arr->selected = -1;
	arr->sorted = false;
}

llama_token boxd_sampler_sample(struct boxd_sampler *s, struct llama_context *ctx, int32_t idx) {
	const float *logits = llama_get_logits_ith(ctx, idx);
	if (!logits) return -1;
	llama_token_data_array arr;
	fill(s, logits, &arr);
	llama_sampler_apply(s->chain, &arr);
	if (arr.selected < 0 || arr.selected >= (int64_t)arr.size) return -1;
	llama_token tok = arr.data[arr.selected].id;
	if (!s->grammar) return tok;

	llama_token_data single = {tok, 1.0f, 0.0f};
	llama_token_data_array one = {&single, 1, -1, false};
	llama_sampler_apply(s->grammar, &one);
	if (!isinf(single.logit)) return tok;

	// Rejected: constrain the whole vocabulary, then sample again.
	fill(s, logits, &arr);
	llama_sampler_apply(s->grammar, &arr);
	llama_sampler_apply(s->chain, &arr);
	if (arr.selected < 0 || arr.selected >= (int64_t)arr.size) return -1;
	return arr.data[arr.selected].id;
}

void boxd_sampler_accept(struct boxd_sampler *s, llama_token tok) {
	llama_sampler_accept(s->chain, tok);
	if (s->grammar) llama_sampler_accept(s->grammar, tok);
}

void boxd_sampler_free(struct boxd_sampler *s) {
	if (!s) return;
	if (s->chain) llama_sampler_free(s->chain);
	if (s->grammar) llama_sampler_free(s->grammar);
	free(s->cur);
	free(s);
}

void boxd_batch_set(struct llama_batch *b, int32_t i, llama_token tok, llama_pos pos, llama_seq_id seq, bool logits) {
	b->token[i] = tok;
	b->pos[i] = pos;
	b->n_seq_id[i] = 1;
	b->seq_id[i][0] = seq;
	b->logits[i] = logits ? 1 : 0;
}

int32_t boxd_decode_embd(struct llama_context *ctx, const float *embd, int32_t n_tokens, int32_t n_embd, llama_pos pos0, llama_seq_id seq, bool non_causal) {
	struct llama_batch b = llama_batch_init(n_tokens, n_embd, 1);
	if (!b.embd) return -1;
	memcpy(b.embd, embd, sizeof(float) * (size_t)n_tokens * (size_t)n_embd);
	for (int32_t i = 0; i < n_tokens; i++) {
		b.pos[i] = pos0 + i;
		b.n_seq_id[i] = 1;
		b.seq_id[i][0] = seq;
		b.logits[i] = 0;
	}
	b.n_tokens = n_tokens;
	if (non_causal) llama_set_causal_attn(ctx, false);
	int32_t rc = llama_decode(ctx, b);
	if (non_causal) llama_set_causal_attn(ctx, true);
	llama_batch_free(b);
	return rc;
}

int32_t boxd_mtmd_tokenize(mtmd_context *ctx, mtmd_input_chunks *out, const char *text, bool add_special, bool parse_special, const mtmd_bitmap **bitmaps, size_t n) {
	mtmd_input_text in = {text, add_special, parse_special};
	return mtmd_tokenize(ctx, out, &in, bitmaps, n);
}
