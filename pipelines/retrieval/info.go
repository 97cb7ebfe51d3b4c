package retrieval

import (
	"sort"

	"boxd/pipelines/retrieval/bm25"
	"boxd/pipelines/retrieval/chunker"
)

// Samples are built-in synthetic corpora ({sample: id} on the index route).
var Samples = map[string][]Document{
	"pump-station-manual": {
		{ID: "manual", Title: "Pump station P-12: operating manual (synthetic)", Text: "Pump station P-12 lifts water from the lower basin to the treatment works.\n\n" +
			"Start-up. Open the suction valve fully before starting the pump. Never run the pump dry: the mechanical seal fails within minutes.\n\n" +
			"Pressure. Normal discharge pressure is 4.2 to 4.8 bar. A drop below 3.5 bar after a filter change usually means air in the line: bleed it at the top vent until water runs clear.\n\n" +
			"Filters. Replace the strainer basket every 500 running hours or when the differential pressure exceeds 0.6 bar."},
		{ID: "log", Title: "Maintenance log, March (synthetic)", Text: "3 March: filter changed, pressure 3.1 bar afterwards; vented at the top, pressure back to 4.5 bar.\n\n" +
			"17 March: vibration on the motor bearing, greased, checked alignment.\n\n" +
			"28 March: seal weeping slightly at the gland; monitor, replace at the next shutdown."},
		{ID: "safety", Title: "Safety notes (synthetic)", Text: "Isolate and lock out the motor before opening the strainer housing. Relieve the pressure through the drain valve first.\n\n" +
			"Wear eye protection: the housing can spray when the lid is lifted."},
	},
}

// SampleIDs lists the samples in order.
func SampleIDs() []string {
	out := make([]string, 0, len(Samples))
	for id := range Samples {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// ModelInfo is a model as GET /retrieval/info reports it.
type ModelInfo struct {
	Loaded      bool   `json:"loaded"`
	Repo        string `json:"repo,omitempty"`
	Revision    string `json:"revision,omitempty"`
	WeightsRoot string `json:"weights_root,omitempty"`
	File        string `json:"file,omitempty"`
	Licence     string `json:"licence,omitempty"`
	Setting     string `json:"setting"`
	// Note says what the model's quality rests on.
	Note string `json:"note"`
}

// Info is GET /retrieval/info.
type Info struct {
	Models struct {
		Embedder ModelInfo `json:"embedder"`
		Reranker ModelInfo `json:"reranker"`
	} `json:"models"`
	Chunker ChunkerSettings `json:"chunker"`
	Search  struct {
		Candidates int      `json:"candidates"`
		RRFK       int      `json:"rrf_k"`
		DefaultK   int      `json:"default_k"`
		Modes      []string `json:"modes"`
		BM25       struct {
			K1       float32 `json:"k1"`
			B        float32 `json:"b"`
			Analyzer string  `json:"analyzer"`
		} `json:"bm25"`
	} `json:"search"`
	Limits struct {
		Documents  int `json:"documents"`
		Chunks     int `json:"chunks"`
		ChunkChars int `json:"chunk_chars"`
		QueryChars int `json:"query_chars"`
		HeldS      int `json:"held_s"`
		// The quota (quota.go): indexes on the box, per key, by demo
		// sessions together, per demo session.
		Indexes        int `json:"indexes"`
		IndexesPerKey  int `json:"indexes_per_key"`
		DemoIndexes    int `json:"demo_indexes"`
		IndexesPerDemo int `json:"indexes_per_demo_session"`
	} `json:"limits"`
	Samples     []string `json:"samples"`
	Formats     []string `json:"formats"`
	Reachable   bool     `json:"reachable"`
	OneAtATime  bool     `json:"one_request_at_a_time"`
	Unavailable string   `json:"unavailable,omitempty"`
}

// Info describes the service.
func (s *Service) Info() Info {
	var in Info
	model := func(m Model, loaded bool, setting, note string) ModelInfo {
		mi := ModelInfo{Loaded: loaded, Setting: setting, Note: note}
		if loaded {
			mi.Repo, mi.Revision, mi.WeightsRoot, mi.File, mi.Licence = m.Ref.Repo, m.Ref.Revision, m.WeightsRoot, m.File, m.Licence
		}
		return mi
	}
	const quality = "search quality is the configured weights': random test weights find nothing meaningful"
	in.Models.Embedder = model(s.EmbedderModel, s.Embedder != nil, "models.embedder.path", quality)
	in.Models.Reranker = model(s.RerankerModel, s.Reranker != nil, "models.reranker.path", quality)
	// The chunker as indexes are cut on this box: with the loaded models'
	// token bounds (max_tokens, rerank_max_tokens), as the index reports.
	in.Chunker = DefaultChunker
	if b, err := chunker.Bounded(DefaultChunker, s.counters()); err == nil {
		in.Chunker = b
	}
	in.Search.Candidates, in.Search.RRFK, in.Search.DefaultK = Candidates, RRFK, DefaultK
	in.Search.Modes = []string{ModeHybrid, ModeDense, ModeBM25}
	in.Search.BM25.K1, in.Search.BM25.B = bm25.K1, bm25.B
	in.Search.BM25.Analyzer = "runs of letters and digits, lower-cased; no stemming, no stop words (Lucene 8 BM25Similarity scoring)"
	in.Limits.Documents, in.Limits.Chunks, in.Limits.ChunkChars = MaxDocuments, MaxChunks, DefaultChunker.MaxChars
	in.Limits.QueryChars, in.Limits.HeldS = MaxQueryChars, int(IndexTTL.Seconds())
	q := s.Quota.bounds()
	in.Limits.Indexes, in.Limits.IndexesPerKey, in.Limits.DemoIndexes, in.Limits.IndexesPerDemo = q.Max, q.PerKey, q.Demo, q.PerDemo
	in.Samples = SampleIDs()
	in.Formats = []string{SearchFormat, "service.model-call.v1"}
	in.OneAtATime = true
	in.Reachable = s.Embedder != nil
	if !in.Reachable {
		in.Unavailable = "no embedding model is configured (models.embedder.path): index and search answer 503; verify works"
	}
	return in
}
