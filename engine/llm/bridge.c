#include "bridge.h"
#include "_cgo_export.h"

static void boxd_log_cb(enum ggml_log_level level, const char *text, void *user) {
	(void)user;
	boxdLlamaLog((int)level, (char *)text);
}

void boxd_log_install(void) { llama_log_set(boxd_log_cb, NULL); }

static bool boxd_progress_cb(float progress, void *user) { return boxdLoadProgress(progress, user); }

void boxd_set_progress(struct llama_model_params *p, void *user) {
	p->progress_callback = boxd_progress_cb;
	p->progress_callback_user_data = user;
}
