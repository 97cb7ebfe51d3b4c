// Drives boxd with the official openai npm client (web.TestOpenAINodeClient):
// a plain completion, a stream, and a JSON-schema response. Prints one JSON
// object with what it saw; the Go test checks it.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.env.BOXD_URL + "/v1", apiKey: process.env.BOXD_TOKEN, maxRetries: 0 });
const model = process.env.BOXD_MODEL;
const out = {};

const plain = await client.chat.completions.create({
  model,
  messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Say hello." }],
  max_tokens: 8,
  temperature: 0,
});
out.plain = {
  id: plain.id,
  object: plain.object,
  finish: plain.choices[0].finish_reason,
  content: plain.choices[0].message.content,
  usage: plain.usage,
};

const stream = await client.chat.completions.create({
  model,
  messages: [{ role: "user", content: "Count to three." }],
  max_tokens: 6,
  temperature: 0,
  stream: true,
});
let text = "";
let chunks = 0;
let finish = null;
let usage = null;
let receipt = null;
for await (const chunk of stream) {
  chunks++;
  const c = chunk.choices[0];
  if (c?.delta?.content) text += c.delta.content;
  if (c?.finish_reason) finish = c.finish_reason;
  if (chunk.usage) usage = chunk.usage;
  if (chunk.receipt) receipt = chunk.receipt;
}
out.stream = { text, chunks, finish, usage, receipt };

const schema = {
  type: "object",
  properties: { answer: { type: "string", enum: ["yes", "no"] }, confidence: { type: "integer", minimum: 0, maximum: 9 } },
  required: ["answer", "confidence"],
  additionalProperties: false,
};
const structured = await client.chat.completions.create({
  model,
  messages: [{ role: "user", content: "Is the roof sound? Answer in JSON." }],
  max_tokens: 100,
  response_format: { type: "json_schema", json_schema: { name: "verdict", schema, strict: true } },
});
out.schema = { content: structured.choices[0].message.content, finish: structured.choices[0].finish_reason };

// Refusals reach the app as APIError with the status, OpenAI's error
// object (the box answers it to the official SDKs) and the headers.
async function refusal(c, params) {
  try {
    await c.chat.completions.create(params);
    return { status: 200 };
  } catch (e) {
    return { status: e.status, message: e.error?.message, type: e.error?.type, code: e.error?.code, retryAfter: e.headers?.get?.("retry-after") ?? null };
  }
}
const one = [{ role: "user", content: "x" }];
out.wrongModel = await refusal(client, { model: "not-this-model", messages: one });
out.wrongKey = await refusal(new OpenAI({ baseURL: process.env.BOXD_URL + "/v1", apiKey: "bxk_not-a-key", maxRetries: 0 }), { model, messages: one });
// BOXD_LIMITED_KEY has spent its one request of the minute.
out.rate = await refusal(new OpenAI({ baseURL: process.env.BOXD_URL + "/v1", apiKey: process.env.BOXD_LIMITED_KEY, maxRetries: 0 }), { model, messages: one, max_tokens: 2 });

console.log(JSON.stringify(out));
