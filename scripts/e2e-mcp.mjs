// End-to-end test of `lore mcp` with the official TypeScript MCP SDK, as
// coding agents run it: over stdio (the client starts lore) and over
// streamable HTTP (with and without a token). It lists the tools, calls
// each one, and relies on the SDK's Client.callTool, which validates every
// structuredContent against the tool's outputSchema once listTools has
// cached the validators (it throws when they disagree); failures must be
// isError results, never empty ones.
//
// usage: node scripts/e2e-mcp.mjs LORE_BINARY
// The environment (XDG_*, OLLAMA_HOST) names an existing default index.
// Prints "ok   NAME" or "FAIL NAME" per check, as scripts/e2e.sh does.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(root, ".cache/npm/package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

const lore = process.argv[2];
let failed = 0;
function check(name, ok, detail) {
  console.log(`${ok ? "ok  " : "FAIL"} ${name}`);
  if (!ok) {
    failed++;
    if (detail !== undefined) console.log(`     ${JSON.stringify(detail).slice(0, 600)}`);
  }
}
const text = (res) => (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

// call is callTool that turns a thrown error (a schema mismatch, a protocol
// error) into a failed check rather than an abort.
async function call(client, name, args) {
  try {
    return await client.callTool({ name, arguments: args });
  } catch (err) {
    return { thrown: String(err), isError: true, content: [] };
  }
}

async function exercise(client, via) {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  check(`${via}: lists search, ask, get_passage, list_indexes, index_status`,
    JSON.stringify(names) === JSON.stringify(["ask", "get_passage", "index_status", "list_indexes", "search"]), names);
  check(`${via}: every tool has an output schema and is annotated read-only`,
    tools.every((t) => t.outputSchema?.type === "object" && t.annotations?.readOnlyHint === true), tools.map((t) => t.annotations));

  const search = await call(client, "search", { query: "how do I keep lore from indexing a folder?", k: 3 });
  const results = search.structuredContent?.results ?? [];
  check(`${via}: search returns passages that match its output schema`, !search.isError && results.length > 0 && results.length <= 3, search);
  check(`${via}: search's text cites path:lines`, /\[1\] \S+:\d+-\d+/.test(text(search)), text(search));

  const none = await call(client, "search", { query: "zyzzyvaquux", rerank: false });
  check(`${via}: a search with no match is a result that says so`, !none.isError && (none.structuredContent?.results?.length === 0
    ? text(none).includes("No passage") : true), none);

  if (results.length > 0) {
    const r = results[0];
    const p = await call(client, "get_passage", { path: r.path, start_line: r.start_line, end_line: r.end_line });
    check(`${via}: get_passage reads a hit's lines`, !p.isError && p.structuredContent?.start_line === r.start_line && p.structuredContent?.text.length > 0, p);
  }
  const list = await call(client, "list_indexes", {});
  check(`${via}: list_indexes lists the default index`, !list.isError && list.structuredContent?.indexes?.some((i) => i.name === list.structuredContent.default), list);
  const status = await call(client, "index_status", {});
  check(`${via}: index_status describes it`, !status.isError && status.structuredContent?.documents > 0, status);

  const progress = [];
  let ask;
  try {
    ask = await client.callTool({ name: "ask", arguments: { question: "how do I keep lore from indexing a folder?" } }, undefined,
      { onprogress: (p) => progress.push(p.message), timeout: 180000 });
  } catch (err) {
    ask = { thrown: String(err), isError: true };
  }
  const a = ask.structuredContent;
  check(`${via}: ask answers offline with its sources (route ${a?.route})`, !ask.isError && a?.mode === "offline" && a?.sources.length > 0 &&
    text(ask).includes("Sources:"), ask);
  check(`${via}: ask reports progress (${progress.join(", ")})`, progress.includes("retrieve"), progress);

  for (const [name, tool, args] of [
    ["search without a query", "search", {}],
    ["search with k 0", "search", { query: "x", k: 0 }],
    ["search of an unknown index", "search", { query: "x", index: "no-such-index" }],
    ["get_passage outside the sources", "get_passage", { path: "../../../../etc/passwd" }],
    ["ask online on an offline server", "ask", { question: "x", online: true }],
  ]) {
    const res = await call(client, tool, args);
    check(`${via}: ${name} is an isError result with a reason`, res.isError === true && !res.thrown && text(res).length > 0, res);
  }

  const { resources, nextCursor } = await client.listResources();
  check(`${via}: documents are listed as lore:// resources`, resources.length > 0 && resources[0].uri.startsWith("lore://"), { resources: resources.slice(0, 2), nextCursor });
  if (resources.length > 0) {
    const read = await client.readResource({ uri: resources[0].uri });
    check(`${via}: a resource reads as text`, read.contents?.[0]?.text?.length > 0, read);
  }
}

function newClient() {
  return new Client({ name: "lore-e2e", version: "1.0.0" });
}

// stdio: the client starts `lore mcp` itself.
{
  const client = newClient();
  const transport = new StdioClientTransport({ command: lore, args: ["mcp"], env: process.env, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (b) => (stderr += b));
  await client.connect(transport);
  check("stdio: initialize names lore", client.getServerVersion()?.name === "lore", client.getServerVersion());
  await exercise(client, "stdio");
  await client.close();
  check("stdio: nothing on stderr (the log goes to lore.log)", stderr.trim() === "", stderr);
}

// startHTTP runs `lore mcp --http 127.0.0.1:0` and resolves with its URL,
// read from its "listening" log line.
function startHTTP(env) {
  const proc = spawn(lore, ["mcp", "--http", "127.0.0.1:0"], { env, stdio: ["ignore", "ignore", "pipe"] });
  return new Promise((resolve, reject) => {
    let buf = "";
    proc.stderr.on("data", (b) => {
      buf += b;
      for (const line of buf.split("\n")) {
        try {
          const l = JSON.parse(line);
          if (l.msg === "listening") resolve({ proc, url: new URL(l.addr) });
        } catch {}
      }
    });
    proc.on("exit", (code) => reject(new Error(`lore mcp --http exited ${code}: ${buf}`)));
  });
}

async function stop(proc) {
  const exited = new Promise((r) => proc.on("exit", (code, signal) => r(code ?? signal)));
  proc.kill("SIGTERM");
  return exited;
}

{
  const { proc, url } = await startHTTP(process.env);
  const client = newClient();
  await client.connect(new StreamableHTTPClientTransport(url));
  await exercise(client, "http");
  await client.close();
  check("http: SIGTERM stops it cleanly", (await stop(proc)) === 0);
}

{
  const token = "e2e-" + Math.random().toString(16).slice(2);
  const { proc, url } = await startHTTP({ ...process.env, LORE_SERVE_TOKEN: token });
  const bare = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) });
  check(`http with a token: a request without it is 401 (got ${bare.status})`, bare.status === 401);
  let refused = false;
  try {
    await newClient().connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: "Bearer wrong" } } }));
  } catch {
    refused = true;
  }
  check("http with a token: a wrong token cannot connect", refused);
  const client = newClient();
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  const res = await call(client, "list_indexes", {});
  check("http with a token: the right one works", !res.isError && res.structuredContent?.indexes?.length > 0, res);
  await client.close();
  await stop(proc);
}

process.exit(failed ? 1 : 0);
