// C helpers for the llm package: callbacks from llama.cpp into Go.
#pragma once
#include <stdbool.h>
#include "llamacpp/llama.h"

// Installs boxd's log callback for llama.cpp and ggml.
void boxd_log_install(void);

// Sets the model-load progress callback; user points at a cgo.Handle.
void boxd_set_progress(struct llama_model_params *p, void *user);
