// Run by scripts/e2e-serve.sh against a running `lore serve`: the official
// `openai` npm package, used as any JavaScript client would, asks lore.
// Prints one "ok   NAME" or "FAIL NAME: why" line per check; exits 1 if
// any failed.
//
// Environment: LORE_BASE_URL (http://127.0.0.1:PORT/v1), LORE_TOKEN (the
// server's token), LORE_QUESTION, LORE_INDEX (the default index's name),
// LORE_NPM_PREFIX (where `npm install --prefix` put the package).
import { createRequire } from "node:module";
import { join } from "node:path";

// The package lives in a cache outside any node_modules above this file:
// resolve it from its install prefix, whatever the working directory.
const require = createRequire(join(process.env.LORE_NPM_PREFIX, "package.json"));
const { OpenAI, NotFoundError, AuthenticationError, BadRequestError } = require("openai");

const baseURL = process.env.LORE_BASE_URL;
const question = process.env.LORE_QUESTION;
const indexName = process.env.LORE_INDEX;
// No retries: a 429 or 5xx must show as itself, not as a slow pass.
const client = new OpenAI({ baseURL, apiKey: process.env.LORE_TOKEN, maxRetries: 0, timeout: 120_000 });
const messages = [{ role: "user", content: question }];

let failed = 0;
async function check(name, fn) {
  try {
    const why = await fn();
    if (why === true) {
      console.log(`ok   ${name}`);
      return;
    }
    failed++;
    console.log(`FAIL ${name}: ${why}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${name}: ${err?.constructor?.name}: ${err?.message}`);
  }
}
// expect returns true, or what was wrong with got.
const expect = (ok, got) => ok || `got ${JSON.stringify(got).slice(0, 600)}`;

await check("openai npm: a whole answer with a Sources: list and lore.route", async () => {
  const r = await client.chat.completions.create({ model: "lore", messages });
  const m = r.choices[0]?.message;
  const ok =
    r.object === "chat.completion" &&
    r.model === "lore" &&
    r.choices.length === 1 &&
    r.choices[0].finish_reason === "stop" &&
    m.role === "assistant" &&
    /\n\nSources:\n/.test(m.content) &&
    typeof r.lore?.route === "string" &&
    r.lore.route !== "" &&
    r.usage?.completion_tokens > 0 &&
    r.usage.total_tokens === r.usage.prompt_tokens + r.usage.completion_tokens &&
    Array.isArray(m.annotations);
  return expect(ok, r);
});

await check("openai npm: a url_citation for each listed source, spanning its line of the Sources: list", async () => {
  const r = await client.chat.completions.create({ model: "lore", messages });
  const m = r.choices[0].message;
  // The list holds the cited sources, or every passage when none is cited
  // (not in the documents, sources only): each listed line is annotated.
  let cited = r.lore.sources.filter((s) => s.cited).map((s) => `[${s.n}] `);
  if (cited.length === 0) cited = r.lore.sources.map((s) => `[${s.n}] `);
  const chars = [...m.content]; // OpenAI's indexes count code points
  const list = m.content.indexOf("\n\nSources:\n");
  const bad = m.annotations.filter((a) => {
    const c = a.url_citation;
    const span = chars.slice(c.start_index, c.end_index).join("");
    return (
      a.type !== "url_citation" ||
      !c.url ||
      chars.slice(0, c.start_index).join("").length <= list ||
      chars[c.start_index - 1] !== "\n" ||
      !cited.some((n) => span.startsWith(n)) ||
      span.includes("\n")
    );
  });
  return expect(bad.length === 0 && m.annotations.length === cited.length, { bad, cited, content: m.content });
});

await check("openai npm: a streamed answer: one id, text with Sources:, a usage chunk last", async () => {
  const stream = await client.chat.completions.create({
    model: "lore",
    messages,
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks = [];
  for await (const c of stream) chunks.push(c);
  const ids = new Set(chunks.map((c) => c.id));
  const text = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
  const last = chunks.at(-1);
  const stops = chunks.filter((c) => c.choices[0]?.finish_reason === "stop");
  const ok =
    chunks.length >= 3 &&
    ids.size === 1 &&
    [...ids][0].startsWith("chatcmpl-") &&
    chunks.every((c) => c.object === "chat.completion.chunk" && c.model === "lore") &&
    chunks[0].choices[0]?.delta?.role === "assistant" &&
    /\n\nSources:\n/.test(text) &&
    stops.length === 1 &&
    typeof stops[0].lore?.route === "string" &&
    Array.isArray(last.choices) &&
    last.choices.length === 0 &&
    last.usage?.completion_tokens > 0 &&
    chunks.slice(0, -1).every((c) => c.usage == null);
  return expect(ok, { count: chunks.length, ids: [...ids], text, last, stops: stops.length });
});

await check(`openai npm: model lore:${indexName} answers from that index`, async () => {
  const r = await client.chat.completions.create({ model: `lore:${indexName}`, messages });
  return expect(r.model === `lore:${indexName}` && r.lore?.sources?.length > 0 && /\n\nSources:\n/.test(r.choices[0].message.content), r);
});

await check("openai npm: models.list() has lore, lore-online and lore:INDEX", async () => {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  const want = ["lore", "lore-online", `lore:${indexName}`, `lore-online:${indexName}`];
  return expect(want.every((id) => ids.includes(id)), ids);
});

await check("openai npm: an unknown model raises NotFoundError (404)", async () => {
  try {
    const r = await client.chat.completions.create({ model: "gpt-4o", messages });
    return expect(false, r);
  } catch (err) {
    return expect(err instanceof NotFoundError && err.status === 404 && /lore-online/.test(err.message), {
      name: err?.constructor?.name,
      status: err?.status,
      message: err?.message,
    });
  }
});

await check("openai npm: a wrong API key raises AuthenticationError (401)", async () => {
  const wrong = new OpenAI({ baseURL, apiKey: "not-the-token", maxRetries: 0 });
  try {
    const r = await wrong.chat.completions.create({ model: "lore", messages });
    return expect(false, r);
  } catch (err) {
    return expect(err instanceof AuthenticationError && err.status === 401, {
      name: err?.constructor?.name,
      status: err?.status,
      message: err?.message,
    });
  }
});

await check("openai npm: models.retrieve() of a listed model, NotFoundError for another", async () => {
  const m = await client.models.retrieve(`lore:${indexName}`);
  try {
    await client.models.retrieve("gpt-4o");
    return expect(false, "gpt-4o retrieved");
  } catch (err) {
    return expect(m.id === `lore:${indexName}` && m.object === "model" && err instanceof NotFoundError, { m, err: err?.message });
  }
});

await check("openai npm: response_format json_object raises BadRequestError (400: cited prose)", async () => {
  try {
    const r = await client.chat.completions.create({ model: "lore", messages, response_format: { type: "json_object" } });
    return expect(false, r);
  } catch (err) {
    return expect(err instanceof BadRequestError && /cited prose/.test(err.message), { status: err?.status, message: err?.message });
  }
});

await check("openai npm: responses.create() with a string input: output_text, url_citation, lore", async () => {
  const r = await client.responses.create({ model: "lore", input: question });
  const part = r.output?.[0]?.content?.[0];
  const chars = [...(r.output_text ?? "")];
  const ok =
    r.object === "response" &&
    r.status === "completed" &&
    /\n\nSources:\n/.test(r.output_text) &&
    part?.type === "output_text" &&
    part.annotations.length > 0 &&
    part.annotations.every((a) => a.type === "url_citation" && a.url && chars.slice(a.start_index, a.end_index).join("").startsWith("[")) &&
    r.usage?.output_tokens > 0 &&
    typeof r.lore?.route === "string";
  return expect(ok, r);
});

await check("openai npm: responses.create() with message items asks the last user message", async () => {
  const r = await client.responses.create({
    model: "lore",
    input: [
      { role: "developer", content: "Answer briefly." },
      { type: "message", role: "user", content: [{ type: "input_text", text: question }] },
    ],
  });
  return expect(r.status === "completed" && r.lore?.question === question && /\n\nSources:\n/.test(r.output_text), r);
});

await check("openai npm: responses.stream(): typed events in order, deltas make the final text", async () => {
  const stream = client.responses.stream({ model: "lore", input: question });
  const types = [];
  let text = "";
  let annotations = 0;
  for await (const ev of stream) {
    types.push(ev.type);
    if (ev.type === "response.output_text.delta") text += ev.delta;
    if (ev.type === "response.output_text.annotation.added" && ev.annotation?.type === "url_citation") annotations++;
  }
  const final = await stream.finalResponse();
  // finalResponse() is the accumulated object: output_text is added by
  // responses.create() only.
  const finalText = final.output?.[0]?.content?.[0]?.text;
  const ok =
    types[0] === "response.created" &&
    types.includes("response.output_text.delta") &&
    types.at(-1) === "response.completed" &&
    annotations > 0 &&
    text === finalText &&
    /\n\nSources:\n/.test(text) &&
    typeof final.lore?.route === "string";
  return expect(ok, { types: [...new Set(types)], text, annotations, finalText });
});

process.exit(failed ? 1 : 0);
