package daemon

import (
	"strings"
	"testing"

	chatroutes "boxd/web/routes/chat"
)

// TestModelNamesAndAliases: /v1/models lists the chat model by its id;
// GET /v1/models/{model} answers the id and each alias (with the name
// asked for) and 404s another name naming what is served; a chat sent
// with an alias answers with the name asked for (as OpenAI and ollama
// echo it) and a receipt naming the served id.
func TestModelNamesAndAliases(t *testing.T) {
	env := chatServer(t, nil, 1024, 2, 0)
	env.testServer.Chat.Aliases = []string{"tiny-chat", "llama3.2:latest"}
	tok := env.token
	list := env.do(t, call{method: "GET", path: "/v1/models", token: tok})
	var l chatroutes.ModelList
	decodeInto(t, list, &l)
	if list.status != 200 || len(l.Data) != 1 || l.Data[0].ID != "model-27b" {
		t.Fatalf("list: %d %s", list.status, list.body)
	}
	for _, name := range []string{"model-27b", "tiny-chat", "llama3.2:latest"} {
		r := env.do(t, call{method: "GET", path: "/v1/models/" + name, token: tok})
		var m chatroutes.ModelItem
		decodeInto(t, r, &m)
		if r.status != 200 || m.ID != name || m.Object != "model" || m.OwnedBy != "boxd" {
			t.Errorf("GET /v1/models/%s: %d %s", name, r.status, r.body)
		}
	}
	if r := env.do(t, call{method: "GET", path: "/v1/models/gpt-4o", token: tok}); r.status != 404 || !strings.Contains(r.errMsg(t), `it serves: model-27b`) {
		t.Errorf("an unknown model: %d %s", r.status, r.body)
	}
	r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: tok, body: chatBodyJSON(map[string]any{"model": "tiny-chat", "max_tokens": 3})})
	if r.status != 200 || r.json(t)["model"] != "tiny-chat" || r.json(t)["receipt"].(map[string]any)["model"] != "model-27b" {
		t.Errorf("a chat by its alias: %d %s", r.status, r.body)
	}
	if r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: tok, body: chatBodyJSON(map[string]any{"model": "tiny", "max_tokens": 3})}); r.status != 404 {
		t.Errorf("a name that is not an alias: %d %s", r.status, r.body)
	}
}

// TestModelsListTheRetrievalModels: the embedder and the reranker are in
// /v1/models by the names /v1/embeddings and /v1/rerank take, and GET
// /v1/models/{model} answers them.
func TestModelsListTheRetrievalModels(t *testing.T) {
	ts, _ := retrievalServer(t, nil)
	tok := session(t, ts, "clinical")
	list := ts.do(t, call{method: "GET", path: "/v1/models", token: tok})
	var l chatroutes.ModelList
	decodeInto(t, list, &l)
	var ids []string
	for _, m := range l.Data {
		ids = append(ids, m.ID)
	}
	if list.status != 200 || strings.Join(ids, ",") != "boxd-tiny-embed,boxd-tiny-rerank" {
		t.Errorf("list: %d %s", list.status, list.body)
	}
	if r := ts.do(t, call{method: "GET", path: "/v1/models/boxd-tiny-embed", token: tok}); r.status != 200 {
		t.Errorf("the embedder: %d %s", r.status, r.body)
	}
}
