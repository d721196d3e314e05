// What an IDE plugin does with the types openapi-typescript generates (schema.ts beside this file):
// sync a workspace folder, index it, search it, ask the agent, and make the write it proposes once the
// user approved it. Plain JavaScript with JSDoc types, checked by `tsc --noEmit` (tsconfig.json). It
// prints one JSON line of what it saw.
//
//   REACTSTEP_SERVER=http://127.0.0.1:8000 REACTSTEP_CLIENT_API_KEY=... node flow.mjs <folder> <project> <question>
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import createClient from "openapi-fetch";

/** @typedef {import("./schema.js").paths} paths */
/** @typedef {import("./schema.js").components["schemas"]} schemas */

const [folder, project, question] = process.argv.slice(2);
/** @type {import("openapi-fetch").Client<paths>} */
const api = createClient({
  baseUrl: process.env.REACTSTEP_SERVER,
  headers: { Authorization: `Bearer ${process.env.REACTSTEP_CLIENT_API_KEY}` },
});

/** @param {string} what @param {{error?: unknown, response: Response}} answer @returns {never} */
function fail(what, answer) {
  throw new Error(`${what}: HTTP ${answer.response.status} ${JSON.stringify(answer.error)}`);
}

/** The folder's files, path ('/' between parts) -> bytes. @returns {Map<string, Buffer>} */
function readWorkspace() {
  const files = new Map();
  for (const name of readdirSync(folder, { recursive: true, encoding: "utf8" })) {
    const full = join(folder, name);
    if (statSync(full).isFile()) files.set(relative(folder, full).split(sep).join("/"), readFileSync(full));
  }
  return files;
}

/** Readiness once no check is still warming: 200 `ready`, or 503 with the check that failed. */
async function settledReadiness() {
  for (;;) {
    const answer = await api.GET("/readyz");
    const report = answer.data ?? answer.error;
    if (report === undefined || "error" in report) fail("readyz", answer);
    else if (report.status !== "warming") return report;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Server-Sent Events from a response body, each {event, data} with data parsed (it is one JSON value).
 * @param {ReadableStream<Uint8Array>} body
 * @returns {AsyncGenerator<{event: string, data: any}>}
 */
async function* readEvents(body) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer = (buffer + decoder.decode(value, { stream: true })).replace(/\r\n?/g, "\n");
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const lines = buffer.slice(0, end).split("\n");
      buffer = buffer.slice(end + 2);
      const event = lines.find((line) => line.startsWith("event:"))?.slice(6).trim() ?? "message";
      const data = lines.filter((line) => line.startsWith("data:")).map((line) => line.slice(5).replace(/^ /, ""));
      if (data.length > 0) yield { event, data: JSON.parse(data.join("\n")) };
    }
  }
}

/** One ReAct step on the question. @param {schemas["ReactStepRequest"]["conversation_history"]} conversation_history */
async function step(conversation_history) {
  const body = { project_id: project, session_id: "ide-plugin", user_query: question, conversation_history };
  const answer = await api.POST("/api/agent/react_step", { body });
  if (answer.data === undefined) fail("react_step", answer);
  return /** @type {schemas["ReactStepResponse"]} */ (answer.data);
}

/** One server tool through execute_action. @param {string} tool_name @param {Record<string, unknown>} tool_args @param {string} [approval_token] */
async function execute(tool_name, tool_args, approval_token) {
  /** @type {schemas["ExecuteActionRequest"]} */
  const body = { project_id: project, session_id: "ide-plugin", tool_name, tool_args };
  if (approval_token !== undefined) body.approval_token = approval_token;
  const answer = await api.POST("/api/agent/execute_action", { body });
  if (answer.data === undefined) fail(tool_name, answer);
  return /** @type {schemas["ExecuteActionResponse"]} */ (answer.data);
}

const readiness = await settledReadiness();
const spec = await api.GET("/openapi.yaml", { parseAs: "text" });
/** @type {import("openapi-fetch").Client<paths>} */
const withoutKey = createClient({ baseUrl: process.env.REACTSTEP_SERVER });
const keyless = await withoutKey.PUT("/api/projects/{project_id}", { params: { path: { project_id: project } } });
const created = await api.PUT("/api/projects/{project_id}", { params: { path: { project_id: project } } });
if (created.data === undefined) fail("create", created);

const workspace = readWorkspace();
const files = Object.fromEntries([...workspace].map(([path, bytes]) => [path, createHash("sha256").update(bytes).digest("hex")]));
const plan = await api.POST("/api/projects/{project_id}/sync", { params: { path: { project_id: project } }, body: { files } });
if (plan.data === undefined) fail("sync", plan);
const { upload, version, etags } = /** @type {schemas["SyncResponse"]} */ (plan.data);
for (const path of upload) {
  const etag = etags[path];
  const stored = await api.PUT("/api/projects/{project_id}/files/{path}", {
    params: {
      path: { project_id: project, path },
      query: { base_version: version },
      header: etag ? { "If-Match": etag } : { "If-None-Match": "*" },
    },
    // The body is the file's bytes (a Blob in the generated types): openapi-fetch sends JSON unless
    // told to send the body as it is.
    body: new Blob([new Uint8Array(/** @type {Buffer} */ (workspace.get(path)))]),
    bodySerializer: (/** @type {Blob | undefined} */ blob) => blob,
    headers: { "Content-Type": "application/octet-stream" },
  });
  if (stored.data === undefined) fail(`PUT ${path}`, stored);
}

// Indexing streams its progress: `progress` events, then one `result` (or one `error`).
const indexing = await api.POST("/api/projects/{project_id}/index", {
  params: { path: { project_id: project } },
  body: { stream: true },
  parseAs: "stream",
});
if (!indexing.response.ok || indexing.data == null) fail("index", indexing);
/** @type {string[]} */
const indexEvents = [];
/** @type {schemas["IndexResponse"] | undefined} */
let indexed;
for await (const { event, data } of readEvents(/** @type {ReadableStream<Uint8Array>} */ (indexing.data))) {
  if (indexEvents.at(-1) !== event) indexEvents.push(event);
  if (event === "result") indexed = data;
  if (event === "error") throw new Error(`index: ${data.error.code}: ${data.error.message}`);
}
// Stopping the index run: none is at work now, so nothing stops and the index stays ready.
const stop = await api.DELETE("/api/projects/{project_id}/index", { params: { path: { project_id: project } } });
// 200 says whether a run stopped; 202 (a run still stopping after 30 s) has the job instead.
if (stop.data === undefined || !("stopped" in stop.data)) fail("index stop", stop);
const search = await execute("code_search", { query: "shout text in upper case", max_results: 1 });

// The agent proposes a write; running it (a server tool) first answers with a preview and writes nothing.
const proposed = await step([]);
const action = proposed.action_details;
if (proposed.status !== "action_proposed" || action === undefined) throw new Error(`no action: ${proposed.status}`);
const preview = await execute(action.tool_name, action.tool_args);
if (preview.approval === undefined) throw new Error(`no approval asked: ${preview.observation}`);
// An IDE shows preview.approval.diff here and asks; on a yes the same call goes again with the token.
const written = await execute(action.tool_name, action.tool_args, preview.approval.token);
// The last step in the background, as a plugin on a flaky network asks it: its stream's first event names
// the step; the connection drops (here: the plugin stops reading); the rest comes from the step's events
// with Last-Event-ID, and its answer from GET /api/agent/steps/{step_id}, without a second model call.
const history = [{ thought: proposed.thought, action_details: action, observation: written.observation, is_error: written.is_error }];
const streamed = await api.POST("/api/agent/react_step", {
  body: { project_id: project, session_id: "ide-plugin", user_query: question, conversation_history: history, stream: true, background: true },
  parseAs: "stream",
});
if (!streamed.response.ok || streamed.data == null) fail("react_step in the background", streamed);
const firstEvents = readEvents(/** @type {ReadableStream<Uint8Array>} */ (streamed.data));
const first = (await firstEvents.next()).value;
await firstEvents.return(undefined); // the connection drops after the first event
const stepId = /** @type {schemas["StepAccepted"]} */ (first?.data).step_id;
const resumed = await api.GET("/api/agent/steps/{step_id}/events", {
  params: { path: { step_id: stepId }, header: { "Last-Event-ID": "0" } },
  parseAs: "stream",
});
if (!resumed.response.ok || resumed.data == null) fail("the step's events", resumed);
/** @type {string[]} */
const resumedEvents = [];
for await (const { event } of readEvents(/** @type {ReadableStream<Uint8Array>} */ (resumed.data))) {
  if (resumedEvents.at(-1) !== event) resumedEvents.push(event);
}
const kept = await api.GET("/api/agent/steps/{step_id}", { params: { path: { step_id: stepId } } });
if (kept.response.status !== 200) fail("the step's answer", kept);
const answered = /** @type {schemas["ReactStepResponse"]} */ (kept.data);
// A key whose day is spent (REACTSTEP_SPENT_KEY) is refused before the model is called: 429, Retry-After.
/** @type {import("openapi-fetch").Client<paths>} */
const spent = createClient({
  baseUrl: process.env.REACTSTEP_SERVER,
  headers: { Authorization: `Bearer ${process.env.REACTSTEP_SPENT_KEY}` },
});
const refused = await spent.POST("/api/agent/react_step", { body: { project_id: project, session_id: "ide-plugin", user_query: question } });
const after = await api.GET("/api/projects/{project_id}/files/{path}", {
  params: { path: { project_id: project, path: String(action.tool_args.path) } },
  parseAs: "text",
});

console.log(
  JSON.stringify({
    readiness,
    without_key: [keyless.response.status, keyless.error?.error.code],
    spec: spec.data,
    uploaded: [...upload].sort(),
    index_events: indexEvents,
    indexed_files: indexed?.files,
    index_stop: [stop.response.status, stop.data.stopped, stop.data.index_state],
    found: search.observation.includes("src/util/strings.py"),
    proposed: { tool_name: action.tool_name, tool_args: action.tool_args, requires_approval: action.requires_approval },
    diff: preview.approval.diff.split("\n").filter((/** @type {string} */ line) => /^[-+] /.test(line)),
    written: written.observation.split("\n")[0],
    background: [first?.event, resumedEvents],
    answer: [answered.status, answered.final_answer],
    budget: { priced: answered.budget?.priced, counted: typeof answered.budget?.tokens_left === "number" },
    over_budget: [refused.response.status, refused.error?.error.code, refused.response.headers.has("retry-after")],
    after: after.data,
  }),
);
