// Drives boxd's POST /v1/responses and POST /v1/completions with the
// official openai npm client (web.TestOpenAINodeResponses): a plain
// response, a raw event stream (stream: true), the SDK's own stream helper
// (which rebuilds the response from the events), a function call and its
// output sent back, a json_schema answer, legacy completions (plain and
// streamed) and refusals. Prints one JSON object with what it saw; the Go
// test checks it.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.env.BOXD_URL + "/v1", apiKey: process.env.BOXD_TOKEN, maxRetries: 0 });
const model = process.env.BOXD_MODEL;
const out = {};

const plain = await client.responses.create({
  model,
  instructions: "Be brief.",
  input: "Say hello.",
  max_output_tokens: 8,
  temperature: 0,
});
out.plain = {
  id: plain.id,
  object: plain.object,
  status: plain.status,
  reason: plain.incomplete_details?.reason ?? null,
  outputText: plain.output_text,
  types: plain.output.map((o) => o.type),
  usage: plain.usage,
  receipt: plain.receipt,
};

const stream = await client.responses.create({ model, input: "Count to three.", max_output_tokens: 6, temperature: 0, stream: true });
const events = [];
let deltas = "";
let final = null;
for await (const event of stream) {
  events.push(event.type);
  if (event.type === "response.output_text.delta") deltas += event.delta;
  if (event.type === "response.completed" || event.type === "response.incomplete") final = event.response;
}
out.stream = { events, deltas, text: final?.output?.[0]?.content?.[0]?.text ?? null, usage: final?.usage, receipt: final?.receipt };

// The SDK's stream helper rebuilds the response from the events and
// fails on an event that does not fit (a delta for a missing item).
const helper = client.responses.stream({ model, input: "Count to three.", max_output_tokens: 6, temperature: 0 });
let helperDeltas = "";
helper.on("response.output_text.delta", (e) => (helperDeltas += e.delta));
const rebuilt = await helper.finalResponse();
out.helper = { text: rebuilt.output_text, deltas: helperDeltas, status: rebuilt.status };

const weather = {
  type: "function",
  name: "get_weather",
  description: "Current weather in a city.",
  parameters: {
    type: "object",
    properties: { city: { type: "string", enum: ["Boston", "Madrid"] } },
    required: ["city"],
    additionalProperties: false,
  },
  strict: true,
};
const input = [{ role: "user", content: "Weather in Boston?" }];
const called = await client.responses.create({
  model,
  input,
  tools: [weather],
  tool_choice: "required",
  parallel_tool_calls: false,
  max_output_tokens: 100,
  temperature: 0,
});
const call = called.output.find((o) => o.type === "function_call");
out.tool = { status: called.status, call: call ?? null };
if (call) {
  const answered = await client.responses.create({
    model,
    input: [...input, call, { type: "function_call_output", call_id: call.call_id, output: JSON.stringify({ temperature: 21 }) }],
    tools: [weather],
    tool_choice: "none",
    max_output_tokens: 8,
  });
  out.tool.after = answered.output.map((o) => o.type);
}

const schema = {
  type: "object",
  properties: { answer: { type: "string", enum: ["yes", "no"] }, confidence: { type: "integer", minimum: 0, maximum: 9 } },
  required: ["answer", "confidence"],
  additionalProperties: false,
};
const structured = await client.responses.create({
  model,
  input: "Is the roof sound? Answer in JSON.",
  max_output_tokens: 100,
  text: { format: { type: "json_schema", name: "verdict", schema, strict: true } },
});
out.schema = { text: structured.output_text, status: structured.status };

const completion = await client.completions.create({ model, prompt: "Once upon a time", max_tokens: 5, temperature: 0 });
out.completion = {
  id: completion.id,
  object: completion.object,
  text: completion.choices[0].text,
  finish: completion.choices[0].finish_reason,
  usage: completion.usage,
  receipt: completion.receipt,
};
const cstream = await client.completions.create({ model, prompt: "Once upon a time", max_tokens: 5, temperature: 0, stream: true });
let ctext = "";
let cchunks = 0;
let cfinish = null;
for await (const chunk of cstream) {
  cchunks++;
  ctext += chunk.choices[0]?.text ?? "";
  if (chunk.choices[0]?.finish_reason) cfinish = chunk.choices[0].finish_reason;
}
out.completionStream = { text: ctext, chunks: cchunks, finish: cfinish };

// Refusals reach the app as APIError with the status and OpenAI's error
// object.
async function refusal(f) {
  try {
    await f();
    return { status: 200 };
  } catch (e) {
    return { status: e.status, message: e.error?.message, type: e.error?.type, code: e.error?.code };
  }
}
out.previous = await refusal(() => client.responses.create({ model, input: "x", previous_response_id: plain.id }));
out.webSearch = await refusal(() => client.responses.create({ model, input: "x", tools: [{ type: "web_search" }] }));
out.wrongModel = await refusal(() => client.responses.create({ model: "gpt-5", input: "x" }));
out.echo = await refusal(() => client.completions.create({ model, prompt: "x", echo: true }));

console.log(JSON.stringify(out));
