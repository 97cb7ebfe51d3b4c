package catalogue

// The built-in catalogue. Every SHA-256 and size below was copied from a
// public pin named in the comment beside it (repository, path and commit
// it was read at); none was computed from a download here, except where a
// comment says the same bytes are in ../shared/models and were hashed
// there. A size of 0 means no public pin found gives it: a pull checks the
// SHA-256 alone and reports the size it got. Licences are those the model
// cards (as the pinning sources cite them) give.
//
// Whisper files are whisper.cpp's ggml-*.bin at a fixed revision of
// huggingface.co/ggerganov/whisper.cpp; boxd converts each to GGUF after the
// pull (the conversion copies the tensors bit for bit).

const whisperBase = "https://huggingface.co/ggerganov/whisper.cpp/resolve/5359861c739e955e79d9a303bcbc70fb988958b1/"

var builtin = Catalogue{
	// ---- chat ----

	// SHA-256 and sizes of both files: roblibob/minute
	// MinuteCore/Sources/MinuteCore/Domain/SummarizationModels.swift @
	// 4b9f80a3fcb0c4e08401b43e22721ca31c3c0e12 (the ggml-org files). The
	// projector's SHA-256 is also mudler/LocalAI gallery/index.yaml @
	// 82c191afadf5f005281e798ccfa0ffd0d5805030 (gemma-3-4b-it, the same bytes
	// as lmstudio-community's mmproj-model-f16.gguf).
	{
		Name: "gemma-3-4b-it", Role: Chat, Licence: "Gemma Terms of Use (gemma)",
		Summary: "Google Gemma 3 4B instruct, Q4_K_M, with its F16 vision projector: reads images; 128K context, 140+ languages",
		Files: []File{
			{Kind: KindModel, Name: "gemma-3-4b-it-Q4_K_M.gguf", URL: "https://huggingface.co/ggml-org/gemma-3-4b-it-GGUF/resolve/main/gemma-3-4b-it-Q4_K_M.gguf",
				SHA256: "882e8d2db44dc554fb0ea5077cb7e4bc49e7342a1f0da57901c0802ea21a0863", Size: 2_489_757_856},
			{Kind: KindProjector, Name: "gemma-3-4b-it-mmproj-f16.gguf", URL: "https://huggingface.co/ggml-org/gemma-3-4b-it-GGUF/resolve/main/mmproj-model-f16.gguf",
				SHA256: "8c0fb064b019a6972856aaae2c7e4792858af3ca4561be2dbf649123ba6c40cb", Size: 851_251_104},
		},
	},
	// SHA-256: mudler/LocalAI gallery/index.yaml @ 82c191af (gemma-3-12b-it,
	// lmstudio-community files). No public pin found gives the sizes.
	{
		Name: "gemma-3-12b-it", Role: Chat, Licence: "Gemma Terms of Use (gemma)",
		Summary: "Google Gemma 3 12B instruct, Q4_K_M, with its F16 vision projector",
		Files: []File{
			{Kind: KindModel, Name: "gemma-3-12b-it-Q4_K_M.gguf", URL: "https://huggingface.co/lmstudio-community/gemma-3-12b-it-GGUF/resolve/main/gemma-3-12b-it-Q4_K_M.gguf",
				SHA256: "9610e3e07375303f6cd89086b496bcc1ab581177f52042eff536475a29283ba2"},
			{Kind: KindProjector, Name: "gemma-3-12b-it-mmproj-f16.gguf", URL: "https://huggingface.co/lmstudio-community/gemma-3-12b-it-GGUF/resolve/main/mmproj-model-f16.gguf",
				SHA256: "30c02d056410848227001830866e0a269fcc28aaf8ca971bded494003de9f5a5"},
		},
	},
	// SHA-256 and sizes: roblibob/minute SummarizationModels.swift @ 4b9f80a3
	// (the ggml-org files); the projector's SHA-256 also mudler/LocalAI
	// gallery/index.yaml @ 82c191af (gemma-3-27b-it).
	{
		Name: "gemma-3-27b-it", Role: Chat, Licence: "Gemma Terms of Use (gemma)",
		Summary: "Google Gemma 3 27B instruct, Q4_K_M, with its F16 vision projector: the box's reference model, for a GPU",
		Files: []File{
			{Kind: KindModel, Name: "gemma-3-27b-it-Q4_K_M.gguf", URL: "https://huggingface.co/ggml-org/gemma-3-27b-it-GGUF/resolve/main/gemma-3-27b-it-Q4_K_M.gguf",
				SHA256: "edc9aff4d811a285b9157618130b08688b0768d94ee5355b02dc0cb713012e15", Size: 16_546_404_736},
			{Kind: KindProjector, Name: "gemma-3-27b-it-mmproj-f16.gguf", URL: "https://huggingface.co/ggml-org/gemma-3-27b-it-GGUF/resolve/main/mmproj-model-f16.gguf",
				SHA256: "54cb61c842fe49ac3c89bc1a614a2778163eb49f3dec2b90ff688b4c0392cb48", Size: 857_739_168},
		},
	},
	// SHA-256: mudler/LocalAI gallery/index.yaml @ 82c191af
	// (llama-3.2-3b-instruct:q4_k_m). No public pin found gives the size.
	{
		Name: "llama-3.2-3b-instruct", Role: Chat, Licence: "Llama 3.2 Community License (llama3.2)",
		Summary: "Meta Llama 3.2 3B instruct, Q4_K_M: text only, small and fast on a CPU",
		Files: []File{
			{Kind: KindModel, Name: "llama-3.2-3b-instruct-q4_k_m.gguf", URL: "https://huggingface.co/hugging-quants/Llama-3.2-3B-Instruct-Q4_K_M-GGUF/resolve/main/llama-3.2-3b-instruct-q4_k_m.gguf",
				SHA256: "c55a83bfb6396799337853ca69918a0b9bbb2917621078c34570bc17d20fd7a1"},
		},
	},
	// SHA-256 and size: ../shared/models/MANIFEST.md (the file copied from
	// cozy-creator/python-gen-worker tests/testdata/stories260K.gguf @
	// 9a9e5e751dbb0d5dd49ba1f34a0a142e8c31e430, byte-identical to ggml-org's
	// tinyllamas/stories260K.gguf), hashed there.
	{
		Name: "stories260k", Role: Chat, Licence: "MIT", Test: true,
		Summary: "Karpathy's 260K-parameter TinyStories llama: the quick start's test model, not a chat model (no template: boxd renders mistral turns)",
		Files: []File{
			{Kind: KindModel, Name: "stories260K.gguf", URL: "https://huggingface.co/ggml-org/models/resolve/main/tinyllamas/stories260K.gguf",
				SHA256: "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d", Size: 1_185_376},
		},
		Settings: map[string]string{TemplateKey: "mistral"},
	},

	// ---- speech (whisper.cpp files, converted to GGUF after the pull) ----

	// SHA-256: mudler/LocalAI gallery/index.yaml @ 82c191af (whisper-tiny-en).
	// Size and SHA-256 at this revision: benwbooth/lunchpail
	// crates/lunchpail-ai/src/models.rs @ 66945f85162d43217bba18bdfdb08b513856a7fd.
	{
		Name: "whisper-tiny.en", Role: Speech, Licence: "MIT",
		Summary: "OpenAI Whisper tiny, English only: the fastest, least accurate",
		Files: []File{{Kind: KindModel, Name: "ggml-tiny.en.bin", URL: whisperBase + "ggml-tiny.en.bin",
			SHA256: "921e4cf8686fdd993dcd081a5da5b6c365bfde1162e72b08d75ac75289920b1f", Size: 77_704_715,
			Convert: ConvertWhisper, Output: "whisper-tiny.en.gguf"}},
	},
	// SHA-256: mudler/LocalAI gallery/index.yaml @ 82c191af (whisper-base-en).
	// Size and SHA-256 at this revision: matthager12-collab/vocalize
	// vocalize/local/whisper_manifest.py @ 807380944a48b0b2405d198acc71d330274ea779
	// and benwbooth/lunchpail crates/lunchpail-ai/src/models.rs @ 66945f85.
	{
		Name: "whisper-base.en", Role: Speech, Licence: "MIT",
		Summary: "OpenAI Whisper base, English only: live sessions on a CPU",
		Files: []File{{Kind: KindModel, Name: "ggml-base.en.bin", URL: whisperBase + "ggml-base.en.bin",
			SHA256: "a03779c86df3323075f5e796cb2ce5029f00ec8869eee3fdfb897afe36c6d002", Size: 147_964_211,
			Convert: ConvertWhisper, Output: "whisper-base.en.gguf"}},
	},
	// SHA-256: mudler/LocalAI gallery/index.yaml @ 82c191af (whisper-small-en).
	// Size and SHA-256: matthager12-collab/vocalize whisper_manifest.py @ 80738094.
	{
		Name: "whisper-small.en", Role: Speech, Licence: "MIT",
		Summary: "OpenAI Whisper small, English only: more accurate than base, slower",
		Files: []File{{Kind: KindModel, Name: "ggml-small.en.bin", URL: whisperBase + "ggml-small.en.bin",
			SHA256: "c6138d6d58ecc8322097e0f987c32f1be8bb0a18532a3f88f734d1bbf9c41e5d", Size: 487_614_201,
			Convert: ConvertWhisper, Output: "whisper-small.en.gguf"}},
	},
	// SHA-256: mudler/LocalAI gallery/index.yaml @ 82c191af (whisper-small).
	// Size and SHA-256: benwbooth/lunchpail crates/lunchpail-ai/src/models.rs @ 66945f85.
	{
		Name: "whisper-small", Role: Speech, Licence: "MIT",
		Summary: "OpenAI Whisper small, multilingual (99 languages, --lang auto)",
		Files: []File{{Kind: KindModel, Name: "ggml-small.bin", URL: whisperBase + "ggml-small.bin",
			SHA256: "1be3a9b2063867b937e64e2ec7483364a79917e157fa98c5d94b5c1fffea987b", Size: 487_601_967,
			Convert: ConvertWhisper, Output: "whisper-small.gguf"}},
	},
	// SHA-256: mudler/LocalAI gallery/index.yaml @ 82c191af
	// (whisper-large-turbo-q5_0). Size and SHA-256: matthager12-collab/vocalize
	// whisper_manifest.py @ 80738094.
	{
		Name: "whisper-large-v3-turbo-q5_0", Role: Speech, Licence: "MIT",
		Summary: "OpenAI Whisper large-v3-turbo, multilingual, Q5_0: near large-v3 accuracy, for a GPU",
		Files: []File{{Kind: KindModel, Name: "ggml-large-v3-turbo-q5_0.bin", URL: whisperBase + "ggml-large-v3-turbo-q5_0.bin",
			SHA256: "394221709cd5ad1f40c46e6031ca61bce88931e6e088c188294c6d5a55ffa7e2", Size: 574_041_195,
			Convert: ConvertWhisper, Output: "whisper-large-v3-turbo-q5_0.gguf"}},
	},

	// ---- voice activity detection ----

	// SHA-256 and size: ../shared/models/MANIFEST.md, hashed there: the file
	// is byte-identical to ggml-org/whisper.cpp
	// models/for-tests-silero-v6.2.0-ggml.bin @
	// 233fe1fc9b48a09e361d3594520838ca266537fe, and public code pins this URL
	// to the same SHA-256.
	{
		Name: "silero-vad-v6.2.0", Role: VAD, Licence: "MIT",
		Summary: "Silero VAD v6.2 in whisper.cpp's format: cuts live audio into sentences (the package installs it too)",
		Files: []File{{Kind: KindModel, Name: "ggml-silero-v6.2.0.bin", URL: "https://huggingface.co/ggml-org/whisper-vad/resolve/main/ggml-silero-v6.2.0.bin",
			SHA256: "2aa269b785eeb53a82983a20501ddf7c1d9c48e33ab63a41391ac6c9f7fb6987", Size: 885_098}},
	},

	// ---- embedders ----

	// SHA-256: nobodywho-ooo/nobodywho nobodywho/models.nix @
	// 05b8acbe26510d576ea122aaa41efe31f6ad895f (its fetchurl SRI hash,
	// sha256-7Djo2hQllrqpExJK5QVQ3ihLaRa/WVd+8vDLlmDC9RQ=, in hex). No cited
	// pin gives the size.
	{
		Name: "bge-small-en-v1.5", Role: Embedder, Licence: "MIT",
		Summary: "BAAI bge-small-en-v1.5, Q8_0: small English sentence embeddings (384 dimensions)",
		Files: []File{{Kind: KindModel, Name: "bge-small-en-v1.5-q8_0.gguf", URL: "https://huggingface.co/CompendiumLabs/bge-small-en-v1.5-gguf/resolve/main/bge-small-en-v1.5-q8_0.gguf",
			SHA256: "ec38e8da142596baa913124ae50550de284b6916bf59577ef2f0cb9660c2f514"}},
	},
	// SHA-256: mudler/LocalAI gallery/index.yaml @ 82c191af
	// (granite-embedding-125m-english). No public pin found gives the size.
	{
		Name: "granite-embedding-125m-english", Role: Embedder, Licence: "Apache-2.0",
		Summary: "IBM Granite Embedding 125M English, F16: English sentence embeddings (768 dimensions)",
		Files: []File{{Kind: KindModel, Name: "granite-embedding-125m-english-f16.gguf", URL: "https://huggingface.co/bartowski/granite-embedding-125m-english-GGUF/resolve/main/granite-embedding-125m-english-f16.gguf",
			SHA256: "e2950cf0228514e0e81c6f0701a62a9e4763990ce660b4a3c0329cd6a4acd4b9"}},
	},

	// ---- rerankers ----

	// SHA-256, size and revision: bloosqr/nodus scripts/install-reranker.mjs @
	// b7019ba0eaa832c431cc2ee6b8965e4f34bf1d9c; the SHA-256 also
	// nobodywho-ooo/nobodywho nobodywho/models.nix @ 05b8acbe (SRI
	// sha256-pDx8mxGkwVF+W/lRUZYOFiHRty96STNksB44bPGqodM=).
	{
		Name: "bge-reranker-v2-m3", Role: Reranker, Licence: "Apache-2.0",
		Summary: "BAAI bge-reranker-v2-m3, Q8_0: multilingual cross-encoder reranker",
		Files: []File{{Kind: KindModel, Name: "bge-reranker-v2-m3-Q8_0.gguf", URL: "https://huggingface.co/gpustack/bge-reranker-v2-m3-GGUF/resolve/3093af03b1a635e67b084b1d8c03c5f5e020fd05/bge-reranker-v2-m3-Q8_0.gguf",
			SHA256: "a43c7c9b11a4c1517e5bf95151960e1621d1b72f7a493364b01e386cf1aaa1d3", Size: 635_676_416}},
	},
	// SHA-256: mudler/LocalAI gallery/index.yaml @ 82c191af
	// (jina-reranker-v1-tiny-en). No public pin found gives the size.
	{
		Name: "jina-reranker-v1-tiny-en", Role: Reranker, Licence: "Apache-2.0",
		Summary: "Jina reranker v1 tiny English, F16: a small, fast cross-encoder",
		Files: []File{{Kind: KindModel, Name: "jina-reranker-v1-tiny-en.f16.gguf", URL: "https://huggingface.co/mradermacher/jina-reranker-v1-tiny-en-GGUF/resolve/main/jina-reranker-v1-tiny-en.f16.gguf",
			SHA256: "5f696cf0d0f3d347c4a279eee8270e5918554cdac0ed1f632f2619e4e8341407"}},
	},
}
