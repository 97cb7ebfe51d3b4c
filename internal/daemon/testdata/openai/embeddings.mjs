// Drives boxd's /v1/embeddings with the official openai npm client
// (web.TestOpenAINodeEmbeddings): one text, a batch (the client asks for
// base64 and decodes it), explicit floats, and a wrong model. Prints one
// JSON object with what it saw; the Go test checks it.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.env.BOXD_URL + "/v1", apiKey: process.env.BOXD_TOKEN, maxRetries: 0 });
const model = process.env.BOXD_EMBED_MODEL;
const out = {};

const one = await client.embeddings.create({ model, input: "the pump loses pressure" });
out.one = { object: one.object, model: one.model, n: one.data.length, dim: one.data[0].embedding.length, first: one.data[0].embedding.slice(0, 4), usage: one.usage };

const batch = await client.embeddings.create({ model, input: ["the pump loses pressure", "roof shingles crack"] });
out.batch = { n: batch.data.length, indexes: batch.data.map((d) => d.index), first: batch.data[0].embedding.slice(0, 4) };

const floats = await client.embeddings.create({ model, input: "the pump loses pressure", encoding_format: "float" });
out.floats = { first: floats.data[0].embedding.slice(0, 4) };

try {
  await client.embeddings.create({ model: "text-embedding-3-small", input: "x" });
  out.wrong = { status: 200 };
} catch (e) {
  out.wrong = { status: e.status, message: e.message, type: e.type };
}
console.log(JSON.stringify(out));
