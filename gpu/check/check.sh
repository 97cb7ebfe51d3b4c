#!/usr/bin/env bash
# boxd's GPU check: everything one device call needs to prove the GPU path
# and measure it against the named peers, from the bundle `make gpu-bundle`
# writes (build/gpu-bundle). Run from the repository root:
#
#   bash build/gpu-bundle/check.sh                 on a GPU machine (root, nvcc, cmake, PyTorch)
#   GPU_CHECK_DRY=1 bash build/gpu-bundle/check.sh every step on the CPU, small shapes, no CUDA build
#   GPU_CHECK_DRY=1 GPU_CHECK_QUICK=1 ...          the shortest dry run (make test runs it)
#
# Steps: the ggml CUDA backend for the GPU present only; boxd serve on it
# (healthz, the offload log, `boxd gpu`); chat against `ollama serve` on the
# same GGUF (bench shape, then a 27B-class Q4_K_M shape against the copy
# bandwidth ceiling); Whisper tiny/base/large-v3 against Hugging Face
# transformers on one checkpoint, each also with asr.flash_attention on; 4
# concurrent live sessions; one live session under 8 chat streams; the 4
# sessions again with flash attention. What comes back is in $OUT (default
# ./gpu-check-out): summary.txt (the table, also printed last),
# summary.json, logs.tar.xz (every step's output) and, after a CUDA build,
# cuda-lib.tar.xz.part* (the backend, for GPU_CHECK_CUDA_LIB_TAR).
# A step that fails is reported and the rest still run; steps that would
# not fit the time left (GPU_CHECK_BUDGET_S, default 530 s) are skipped.
# A second call on the same machine reuses what the first built and wrote
# in GPU_CHECK_WORK (the backend, the models); GPU_CHECK_ONLY="arbiter
# chat-large" runs just those measuring steps (serve, chat, speech, live,
# arbiter, chat-large); GPU_CHECK_CUDA_LIB names a backend directory built
# before, GPU_CHECK_CUDA_LIB_TAR the parts a previous call returned.
# GPU_CHECK_WHISPER picks the Whisper shapes (default "tiny base
# large-v3"; the live steps use the last), GPU_CHECK_LARGE=0 leaves out the
# 27B-class file, GPU_CHECK_ARBITER_S the audio the arbiter replays
# (default 20). On an H100 (2026-11-25) the steps took: build 224 s, serve
# 3, chat 18, speech 135 (tiny, base, large-v3, both sides), live 37,
# arbiter 70, the 27B shape 58: about 9.5 minutes in all, so with the
# default budget the last step may be skipped (it is named); run it again
# with GPU_CHECK_ONLY and the returned backend.
set -uo pipefail
set -a # every variable below reaches the steps, which run in child shells

T0=$(date +%s)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${OUT:-$PWD/gpu-check-out}
L=$OUT/logs # packed into $OUT/logs.tar.xz at the end (a device call returns at most 8 files)
DRY=${GPU_CHECK_DRY:-0}
QUICK=${GPU_CHECK_QUICK:-0}
BUDGET=${GPU_CHECK_BUDGET_S:-530}
W=${GPU_CHECK_WORK:-/tmp/boxd-gpu-check}
mkdir -p "$OUT" "$W"
rm -rf "$L" && mkdir -p "$L"
LOG=$L/check.log
: >"$LOG"
STEPS=$L/steps.tsv
: >"$STEPS"

say() { echo "[$(($(date +%s) - T0))s] $*" | tee -a "$LOG"; }
left() { echo $((BUDGET - ($(date +%s) - T0))); }
# step NAME NEED_S TIMEOUT_S CMD...: runs CMD (output in $L/NAME.log) if
# NEED_S seconds are left, bounded by TIMEOUT_S; records the outcome.
step() {
	local name=$1 need=$2 limit=$3
	shift 3
	if [ -n "${GPU_CHECK_ONLY:-}" ] && ! wanted "$name"; then
		return 1
	fi
	if [ "$(left)" -lt "$need" ]; then
		say "SKIP $name: $(left) s left, it needs about $need"
		printf '%s\tskipped\t0\ttime\n' "$name" >>"$STEPS"
		return 1
	fi
	# Nothing runs past the budget.
	[ "$limit" -gt "$(left)" ] && limit=$(left)
	say "RUN  $name (limit ${limit}s)"
	local s=$(date +%s)
	timeout --kill-after=10 "$limit" bash -c '"$@"' bash "$@" >"$L/$name.log" 2>&1
	local rc=$? d=$(($(date +%s) - s))
	if [ $rc -eq 0 ]; then
		say "OK   $name (${d}s)"
		printf '%s\tok\t%s\t\n' "$name" "$d" >>"$STEPS"
		return 0
	fi
	say "FAIL $name (rc $rc, ${d}s): $(grep -v '^\s*$' "$L/$name.log" | tail -3 | tr '\n' ' ' | cut -c1-300)"
	printf '%s\tfailed\t%s\trc %s\n' "$name" "$d" "$rc" >>"$STEPS"
	return 1
}
# wanted NAME: whether GPU_CHECK_ONLY asks for NAME (preparation steps
# always run: they skip what exists).
wanted() {
	case $1 in prepare-models | hf-make | cuda-build) return 0 ;; esac
	for w in ${GPU_CHECK_ONLY:-}; do
		case $1 in "$w" | "$w"-*) return 0 ;; esac
	done
	return 1
}
export -f say left wanted

# --- unpack -----------------------------------------------------------------
mkdir -p "$W/bin" "$W/models" "$W/tmp" "$W/state"
for f in "$HERE"/bin/*.xz; do
	b=$(basename "$f" .xz)
	[ -x "$W/bin/$b" ] && [ "$W/bin/$b" -nt "$f" ] || { xz -dc "$f" >"$W/bin/$b" && chmod +x "$W/bin/$b"; }
done
DATA=$HERE/data
mkdir -p "$W/tmp/boxd-bench-demo-audio"
for f in "$DATA"/demo-audio/*; do
	case $f in
	*.xz) xz -dc "$f" >"$W/tmp/boxd-bench-demo-audio/$(basename "$f" .xz)" ;;
	*) cp "$f" "$W/tmp/boxd-bench-demo-audio/" ;;
	esac
done
# The reference data boxd serve needs in data_dir (ICD-10-CM, RxNorm).
mkdir -p "$W/refdata/icd10cm" "$W/refdata/rxnorm"
cp "$DATA"/ref/icd10cm/* "$W/refdata/icd10cm/"
for f in "$DATA"/ref/rxnorm/*.xz; do xz -dc "$f" >"$W/refdata/rxnorm/$(basename "$f" .xz)"; done
export TMPDIR=$W/tmp BOXD_TEST_MODELS=$DATA
BOXD=$W/bin/boxd

# --- the machine --------------------------------------------------------------
{
	echo "date: $(date -u +%FT%TZ)"
	echo "dry: $DRY quick: $QUICK"
	uname -a
	nproc
	free -g | sed -n 2p
	command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,compute_cap,memory.total,memory.free,driver_version --format=csv,noheader
	command -v nvcc >/dev/null && nvcc --version | tail -2
	command -v cmake >/dev/null && cmake --version | head -1
	python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__, "cuda", torch.cuda.is_available())' 2>&1 | tail -1
	"$BOXD" version
} >"$L/machine.txt" 2>&1
say "machine: $(tr '\n' ' ' <"$L/machine.txt" | cut -c1-400)"

GPU_NAME=cpu
CUDA_CC=""
if [ "$DRY" != 1 ]; then
	GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
	CUDA_CC=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')
fi

# --- models that need no GPU, written while the backend builds --------------
# Shapes: the dry run uses the smallest that still run every code path.
if [ "$QUICK" = 1 ]; then
	SHAPES="tiny"
elif [ "$DRY" = 1 ]; then
	SHAPES="tiny base"
else
	SHAPES="${GPU_CHECK_WHISPER:-tiny base large-v3}"
fi
LARGE=$W/models/bench-27b-q4_k_m.gguf
prepare_models() {
	"$BOXD" models make-test-models --bench "$W/models" || return 1
	if [ "$DRY" != 1 ] && [ "${GPU_CHECK_LARGE:-1}" = 1 ]; then
		# The file (16.5 GB) and ollama's copy of it must fit.
		local free_gb
		free_gb=$(df -BG --output=avail "$W" | tail -1 | tr -dc 0-9)
		if [ "$free_gb" -lt 45 ]; then
			echo "large shape skipped: ${free_gb} GB free in $W, 45 needed"
			return 0
		fi
		[ -s "$LARGE" ] || "$BOXD" models make-test-models --large "$W/models" || return 1
	fi
}
export -f prepare_models
HF_OK=0
python3 -c 'import torch, transformers' >/dev/null 2>&1 && [ "$DRY" != 1 ] && HF_OK=1
hf_make() {
	for s in $SHAPES; do
		[ -s "$W/hf/$s/config.json" ] || python3 "$HERE/hf_whisper.py" make --shape "$s" --vocab-bin "$DATA/whisper-vocab-tiny.bin" --out "$W/hf/$s" || return 1
		"$BOXD" models convert --force "$W/hf/$s" "$W/models/whisper-$s.gguf" || return 1
	done
	python3 "$HERE/hf_whisper.py" bandwidth --json "$L/bandwidth.json"
}
export -f hf_make

# --- 1. the CUDA backend ----------------------------------------------------
CUDA_LIB=${GPU_CHECK_CUDA_LIB:-$W/cuda/lib/ollama}
build_cuda() {
	local src=$W/cuda-src
	rm -rf "$src" && mkdir -p "$src" && tar -xJf "$HERE/ggml-src.tar.xz" -C "$src" --strip-components=1 || return 1
	local args=(-DCMAKE_BUILD_TYPE=Release)
	command -v ninja >/dev/null && args+=(-G Ninja)
	if [ "$DRY" != 1 ] && ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
		export CUDACXX=/usr/local/cuda/bin/nvcc
	fi
	if [ "$DRY" = 1 ]; then
		args+=(-DBOXD_WITH_CUDA=OFF)
	else
		args+=(-DCMAKE_CUDA_ARCHITECTURES="${CUDA_CC}-real")
	fi
	cmake -S "$src" -B "$W/cuda" "${args[@]}" || return 1
	local target=ggml-cuda
	[ "$DRY" = 1 ] && target=ggml-base
	# Leave two cores to what runs beside the build.
	cmake --build "$W/cuda" --target "$target" -j "$(($(nproc) > 4 ? $(nproc) - 2 : $(nproc)))" || return 1
	ls -la "$W/cuda/lib/ollama"
	if [ "$DRY" != 1 ]; then
		echo "--- ldd libggml-cuda.so"
		ldd "$W/cuda/lib/ollama/libggml-cuda.so"
		# What the package would have to ship: the CUDA libraries outside the driver.
		ldd "$W/cuda/lib/ollama/libggml-cuda.so" | awk '/cudart|cublas/ {print $3}' | xargs -r ls -laL
		ls -la "$W/cuda/lib/ollama/libggml-cuda.so" | awk '{print "size", $5}'
		# Back to the caller, so a later call can skip the build (GPU_CHECK_CUDA_LIB_TAR).
		tar -C "$W/cuda/lib" -cf - ollama | xz -T0 -3 >"$W/cuda-lib.tar.xz"
	fi
}
export -f build_cuda
if [ -n "${GPU_CHECK_CUDA_LIB_TAR:-}" ] && [ ! -s "$W/cuda/lib/ollama/libggml-cuda.so" ]; then
	# The backend a previous call built and returned (cuda-lib.tar.xz.part*).
	mkdir -p "$W/cuda/lib" && cat $GPU_CHECK_CUDA_LIB_TAR | xz -dc | tar -C "$W/cuda/lib" -xf - && say "unpacked the backend from $GPU_CHECK_CUDA_LIB_TAR"
fi
if [ -z "${GPU_CHECK_CUDA_LIB:-}" ] && [ "$DRY" != 1 ] && [ -s "$W/cuda/lib/ollama/libggml-cuda.so" ]; then
	GPU_CHECK_CUDA_LIB=$W/cuda/lib/ollama # built by an earlier call on this machine
fi
if [ -n "${GPU_CHECK_CUDA_LIB:-}" ]; then
	say "using the backend built before in $CUDA_LIB"
	printf 'cuda-build\tprebuilt\t0\t\n' >>"$STEPS"
else
	# Models and checkpoints are written beside the build (disk and a GPU
	# that is idle until the backend exists); nothing timed runs meanwhile.
	(step prepare-models 60 300 prepare_models) &
	PREP=$!
	if [ $HF_OK = 1 ]; then
		(step hf-make 60 300 hf_make) &
		HFM=$!
	fi
	step cuda-build 60 420 build_cuda
	wait $PREP
	[ $HF_OK = 1 ] && wait $HFM
fi
if [ "$DRY" = 1 ]; then
	CUDA_LIB=$W/no-gpu/lib/ollama # CPU only; the build above proved the sources
	GPU_LAYERS=0
else
	GPU_LAYERS=-1
fi
if [ -n "${GPU_CHECK_CUDA_LIB:-}" ]; then
	(step prepare-models 60 300 prepare_models) &
	PREP=$!
	[ $HF_OK = 1 ] && step hf-make 60 300 hf_make
	wait $PREP
fi
export OLLAMA_LIBRARY_PATH=$CUDA_LIB
# The CUDA runtime libraries the backend links (libcudart, libcublas) where
# the system's loader does not find them: the toolkit's, else PyTorch's wheels.
if [ -e "$CUDA_LIB/libggml-cuda.so" ] && ldd "$CUDA_LIB/libggml-cuda.so" | grep -q "not found"; then
	extra=""
	for d in "$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")/../lib64" /usr/local/cuda/lib64 \
		$(python3 -c 'import glob, site; p = site.getsitepackages()[0]; print(" ".join(glob.glob(p + "/nvidia/*/lib") + glob.glob(p + "/nvidia/*/*/lib")))' 2>/dev/null); do
		[ -d "$d" ] && extra="$extra:$d"
	done
	export LD_LIBRARY_PATH="${extra#:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	say "CUDA libraries not on the loader's path; LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
	ldd "$CUDA_LIB/libggml-cuda.so" | grep -E "cudart|cublas|not found" | tee -a "$LOG"
fi

# ollama, laid out as its Linux package is: bin/ollama beside lib/ollama/cuda_v13.
mkdir -p "$W/ollama/bin" "$W/ollama/lib/ollama"
cp -f "$W/bin/ollama" "$W/ollama/bin/ollama"
if [ "$DRY" != 1 ] && [ -e "$CUDA_LIB/libggml-cuda.so" ]; then
	mkdir -p "$W/ollama/lib/ollama/cuda_v13"
	cp -af "$CUDA_LIB"/libggml-* "$W/ollama/lib/ollama/cuda_v13/"
fi
export OLLAMA_BIN=$W/ollama/bin/ollama
# Go benchmark binaries: one run each, text output parsed by summary.py.
gobench() { # NAME BINARY PATTERN [ENV=VALUE...]
	local bin=$1 pat=$2
	shift 2
	env "$@" "$W/bin/$bin" -test.run '^$' -test.bench "$pat" -test.benchtime 1x -test.count 1 -test.timeout 20m -test.v
}
export -f gobench

# --- 2. boxd serve on the GPU ----------------------------------------------
serve_check() {
	local port=18445 log=$L/serve.log
	local asr=""
	for s in tiny $SHAPES; do [ -s "$W/models/whisper-$s.gguf" ] && asr=$W/models/whisper-$s.gguf && break; done
	"$BOXD" gpu --gpu-library-path "$CUDA_LIB" | tee "$L/gpu.txt"
	"$BOXD" gpu --json --gpu-library-path "$CUDA_LIB" >"$L/gpu.json"
	args=(serve --listen "127.0.0.1:$port" --state-dir "$W/state" --data-dir "$W/refdata" --log-format text --log-level debug
		--gpu-library-path "$CUDA_LIB" --gpu-layers "$GPU_LAYERS" --models-llm-path "$W/models/bench-110m-q8_0.gguf" --models-llm-template chatml)
	[ -n "$asr" ] && args+=(--models-asr-path "$asr" --models-vad-path "$DATA/ggml-silero-v6.2.0.bin")
	"$BOXD" "${args[@]}" >"$log" 2>&1 &
	local pid=$!
	local ok=0
	for _ in $(seq 1 120); do
		if python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=2).read().decode())' \
			"http://127.0.0.1:$port/healthz" >"$L/healthz.json" 2>/dev/null; then ok=1; break; fi
		kill -0 $pid 2>/dev/null || break
		sleep 0.5
	done
	kill $pid 2>/dev/null
	wait $pid
	local rc=$?
	cat "$L/healthz.json" 2>/dev/null
	echo
	grep -iE "offload|gpu_layers|CUDA|model loaded" "$log" | head -40
	echo "serve exit status after SIGTERM: $rc"
	[ $ok = 1 ] && [ $rc = 0 ]
}
export -f serve_check
step serve 20 120 serve_check

# --- 2b. the chat engine opened, used and closed on the GPU ------------------
# (the first H100 run crashed in llama_free when a benchmark closed its engine),
# and the vision projector (mtmd) with the model on the GPU
step diag 10 60 env BOXD_TEST_GPU_LAYERS=$([ "$DRY" = 1 ] && echo 0 || echo 999) "$W/bin/llm.test" -test.run 'TestGenerateBasics$|TestKQuantMixLoads$|TestVisionRealPath$|TestImageEmbeddingsDecodeAsTokens$' -test.v -test.count 1

# --- 3. chat against ollama ---------------------------------------------------
if [ "$QUICK" = 1 ]; then
	CHAT_ENV=(BOXD_BENCH_ROUNDS=1 BOXD_BENCH_DECODE=8 BOXD_BENCH_STREAMS=1,2)
elif [ "$DRY" = 1 ]; then
	CHAT_ENV=(BOXD_BENCH_ROUNDS=2 BOXD_BENCH_DECODE=32 BOXD_BENCH_STREAMS=1,4)
else
	# One stream is BenchmarkDecodeSingle; aggregate adds 4, 8 and 16.
	CHAT_ENV=(BOXD_BENCH_ROUNDS=3 BOXD_BENCH_DECODE=128 BOXD_BENCH_STREAMS=4,8,16)
fi
step chat 40 240 gobench llm.test 'DecodeSingle|PromptProcessing|Aggregate' "${CHAT_ENV[@]}" \
	BOXD_BENCH_LLM_MODEL="$W/models/bench-110m-q8_0.gguf" BOXD_BENCH_GPU_LAYERS=$([ "$DRY" = 1 ] && echo 0 || echo 999)

# --- 4. speech against Hugging Face transformers -------------------------------
if [ "$QUICK" = 1 ]; then
	SP_ENV=(BOXD_BENCH_ASR_TOKENS=4 BOXD_BENCH_LONG_S=30 BOXD_BENCH_BATCH=2 BOXD_BENCH_REPS=1)
	HF_ARGS=(--tokens 4 --long-s 30 --batch 2 --reps 1)
elif [ "$DRY" = 1 ]; then
	SP_ENV=(BOXD_BENCH_ASR_TOKENS=16 BOXD_BENCH_LONG_S=60 BOXD_BENCH_BATCH=2 BOXD_BENCH_REPS=1)
	HF_ARGS=(--tokens 16 --long-s 60 --batch 2 --reps 1)
else
	SP_ENV=(BOXD_BENCH_ASR_TOKENS=64 BOXD_BENCH_LONG_S=90 BOXD_BENCH_BATCH=8 BOXD_BENCH_REPS=3)
	HF_ARGS=(--tokens 64 --long-s 90 --batch 8 --reps 3)
fi
for s in $SHAPES; do
	model=$W/models/whisper-$s.gguf
	if [ ! -s "$model" ]; then
		# No checkpoint from transformers (dry run): boxd's own random tiny model.
		[ "$s" = tiny ] || continue
		model=""
	fi
	step "speech-$s-boxd" 20 150 gobench stream.test '^BenchmarkSpeed$' "${SP_ENV[@]}" \
		BOXD_BENCH_ASR_MODEL="$model" BOXD_BENCH_AUDIO="$DATA/jfk.wav" BOXD_BENCH_GPU_LAYERS=$GPU_LAYERS
	# The same with asr.flash_attention on (every attention as ggml's fused kernel).
	step "speech-$s-flash" 20 150 gobench stream.test '^BenchmarkSpeed$' "${SP_ENV[@]}" \
		BOXD_BENCH_ASR_MODEL="$model" BOXD_BENCH_AUDIO="$DATA/jfk.wav" BOXD_BENCH_GPU_LAYERS=$GPU_LAYERS BOXD_BENCH_ASR_FLASH=1
	if [ $HF_OK = 1 ]; then
		step "speech-$s-hf" 20 150 python3 "$HERE/hf_whisper.py" bench --ckpt "$W/hf/$s" --shape "$s" --audio "$DATA/jfk.wav" \
			--json "$L/hf-$s.json" "${HF_ARGS[@]}"
	fi
done

# --- 5. live sessions and 6. the arbiter ------------------------------------
LIVE_ASR=""
for s in $SHAPES; do [ -s "$W/models/whisper-$s.gguf" ] && LIVE_ASR=$W/models/whisper-$s.gguf; done
if [ "$QUICK" = 1 ]; then
	LIVE_S=10 ARB_S=10 SESSIONS=1 STREAMS=1
elif [ "$DRY" = 1 ]; then
	LIVE_S=22 ARB_S=19 SESSIONS=2 STREAMS=2
else
	# 29 s of the script hold its first four lines, 20 s its first two.
	LIVE_S=29 ARB_S=${GPU_CHECK_ARBITER_S:-20} SESSIONS=4 STREAMS=8
fi
if [ "$DRY" = 1 ]; then
	# The CPU: greedy finals and the tiny chat model, or nothing keeps up.
	LIVE_ENV=(BOXD_BENCH_BEAM=1 BOXD_BENCH_LLM_THREADS=1)
else
	# The box's defaults (beam 5) with the 110M chat model on the lanes.
	LIVE_ENV=(BOXD_BENCH_CHAT_MODEL="$W/models/bench-110m-q8_0.gguf" BOXD_BENCH_LLM_THREADS=4)
fi
LIVE_ENV+=(BOXD_BENCH_ASR_MODEL="$LIVE_ASR" BOXD_BENCH_GPU_LAYERS=$GPU_LAYERS BOXD_BENCH_LIVE_SCRIPTS=sales-discovery-logistics)
step live 40 $((LIVE_S * 2 + 90)) gobench replay.test '^BenchmarkConcurrentLiveSessions$' "${LIVE_ENV[@]}" \
	BOXD_BENCH_SESSIONS=$SESSIONS BOXD_BENCH_CONCURRENT_SECONDS=$LIVE_S
step arbiter $((ARB_S * 3 + 20)) $((ARB_S * 4 + 90)) gobench replay.test '^BenchmarkLiveUnderChatLoad$' "${LIVE_ENV[@]}" \
	BOXD_BENCH_LIVE_SECONDS=$ARB_S BOXD_BENCH_CHAT_STREAMS=$STREAMS BOXD_BENCH_LLM_PARALLEL=$STREAMS

# --- 7. the large chat shape against the bandwidth ceiling -------------------
if [ "$DRY" != 1 ] && [ -s "$LARGE" ]; then
	step chat-large 150 300 gobench llm.test '^BenchmarkDecodeSingle$' BOXD_BENCH_ROUNDS=3 BOXD_BENCH_DECODE=64 \
		BOXD_BENCH_LLM_MODEL="$LARGE" BOXD_BENCH_GPU_LAYERS=999
fi

# --- 8. live sessions with asr.flash_attention on ------------------------------
[ "$QUICK" = 1 ] || step live-flash 40 $((LIVE_S * 2 + 90)) gobench replay.test '^BenchmarkConcurrentLiveSessions$' "${LIVE_ENV[@]}" \
	BOXD_BENCH_SESSIONS=$SESSIONS BOXD_BENCH_CONCURRENT_SECONDS=$LIVE_S BOXD_BENCH_ASR_FLASH=1

# --- 9. diarization (pass 2's neural path: segmentation-3.0 and ResNet34) ----
# Random weights of the real shapes: 10 minutes of audio on the card (goal:
# real-time factor <= 0.005); the dry run measures 20 s on the CPU.
if [ "$QUICK" = 1 ]; then
	DIA_ENV=(NEURAL_BENCH_SECONDS=10 NEURAL_BENCH_GPU=0)
elif [ "$DRY" = 1 ]; then
	DIA_ENV=(NEURAL_BENCH_SECONDS=20 NEURAL_BENCH_GPU=0)
else
	DIA_ENV=(NEURAL_BENCH_SECONDS=600 NEURAL_BENCH_GPU=1)
fi
step diarize 30 300 gobench diarize.test '^BenchmarkNeural10Min$' "${DIA_ENV[@]}"

# --- summary ------------------------------------------------------------------
say "done in $(($(date +%s) - T0)) s"
python3 "$HERE/summary.py" --out "$L" --gpu "$GPU_NAME" --dry "$DRY" --quick "$QUICK" --elapsed "$(($(date +%s) - T0))" >"$L/summary.txt"
rc=$?
cp "$L/summary.txt" "$L/summary.json" "$OUT/" 2>/dev/null
tar -C "$OUT" -cJf "$OUT/logs.tar.xz" logs && rm -rf "$L"
if [ -s "$W/cuda-lib.tar.xz" ]; then
	# A returned file holds at most 16 MiB.
	split -b 15m -d "$W/cuda-lib.tar.xz" "$OUT/cuda-lib.tar.xz.part"
fi
ls -la "$OUT"
cat "$OUT/summary.txt"
exit $rc
