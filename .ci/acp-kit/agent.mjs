// The ACP client conformance kit's agent: a scripted ACP v1 agent on the
// official @agentclientprotocol/sdk (pinned in package-lock.json), which the web
// console is run against in `acp_kit` (acceptance/tests/it/acp_kit.rs). It is a
// test double: it never calls a model. Each prompt's first word picks what it
// does, so the test's learner types the script:
//   stream        text, a tool call with updates, a thought, the plan, text
//   permission    asks session/request_permission, says what it was told
//   fs            fs requests: inside (write + read), outside, relative, another session's id
//   terminal      asks terminal/create, which the client does not advertise
//   stop <reason> ends the turn with that stopReason
//   wait          asks permission and waits for the answer (the session is ended meanwhile)
// anything else  one line of text (the persona turn).
// What the client did on the wire is appended, one JSON line per fact, to
// ACP_KIT_REPORT: its initialize request and every answer the agent got.
import { appendFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const report = (fact) => {
  if (process.env.ACP_KIT_REPORT) appendFileSync(process.env.ACP_KIT_REPORT, JSON.stringify(fact) + "\n");
};
const sessions = new Map();
const text = (t) => ({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: t } });

// What a client request came back with: its result, or its JSON-RPC error.
async function ask(client, method, params) {
  try {
    return { result: await client.request(method, params) };
  } catch (e) {
    return { error: { code: e.code, message: e.message } };
  }
}

const say = (client, sessionId, update) => client.notify(acp.methods.client.session.update, { sessionId, update });

const scripts = {
  async stream({ client, sessionId }) {
    await say(client, sessionId, text("Reading "));
    await say(client, sessionId, text("your notes."));
    await say(client, sessionId, { sessionUpdate: "tool_call", toolCallId: "kit-1", title: "Read notes.md", kind: "read", status: "pending" });
    await say(client, sessionId, { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "They mention lifetimes." } });
    await say(client, sessionId, { sessionUpdate: "tool_call_update", toolCallId: "kit-1", status: "in_progress" });
    await say(client, sessionId, { sessionUpdate: "plan", entries: [
      { content: "Explain lifetimes", priority: "high", status: "in_progress" },
      { content: "Quiz", priority: "low", status: "pending" }] });
    await say(client, sessionId, { sessionUpdate: "tool_call_update", toolCallId: "kit-1", status: "completed" });
    await say(client, sessionId, text("Lifetimes name how long a borrow lasts."));
    return "end_turn";
  },
  async permission({ client, sessionId }) {
    const got = await ask(client, acp.methods.client.session.requestPermission, permissionRequest(sessionId, "kit-2"));
    report({ permission: got });
    const o = got.result && got.result.outcome;
    await say(client, sessionId, text(`permission outcome: ${o ? o.outcome + (o.optionId ? " " + o.optionId : "") : "error " + got.error.code}`));
    return "end_turn";
  },
  async fs({ client, sessionId, cwd }) {
    const inside = join(cwd, "kit-notes.txt");
    const outside = join(dirname(cwd), "kit-outside.txt");
    const w = await ask(client, acp.methods.client.fs.writeTextFile, { sessionId, path: inside, content: "kit" });
    const r = await ask(client, acp.methods.client.fs.readTextFile, { sessionId, path: inside });
    const checks = {
      inside: w.error || r.error ? w.error || r.error : r.result.content === "kit" ? "ok" : "different text",
      outside: (await ask(client, acp.methods.client.fs.writeTextFile, { sessionId, path: outside, content: "x" })).error,
      relative: (await ask(client, acp.methods.client.fs.readTextFile, { sessionId, path: "kit-notes.txt" })).error,
      foreign: (await ask(client, acp.methods.client.fs.readTextFile, { sessionId: "another-session", path: inside })).error,
    };
    report({ fs: checks });
    const line = (k) => `${k}: ${checks[k] === "ok" ? "ok" : checks[k] ? "refused " + checks[k].code : "served"}`;
    await say(client, sessionId, text(["inside", "outside", "relative", "foreign"].map(line).join("; ")));
    return "end_turn";
  },
  async terminal({ client, sessionId }) {
    const got = await ask(client, acp.methods.client.terminal.create, { sessionId, command: "true" });
    report({ terminal: got });
    await say(client, sessionId, text(`terminal: ${got.error ? "refused " + got.error.code : "served"}`));
    return "end_turn";
  },
  async stop({ client, sessionId, words }) {
    await say(client, sessionId, text(`stopping: ${words[1]}`));
    return words[1];
  },
  async wait({ client, sessionId }) {
    const got = await ask(client, acp.methods.client.session.requestPermission, permissionRequest(sessionId, "kit-3"));
    report({ pending_at_end: got });
    return "cancelled";
  },
};

function permissionRequest(sessionId, toolCallId) {
  return {
    sessionId,
    toolCall: { toolCallId, title: "kit asks to edit notes.md", kind: "edit", status: "pending" },
    options: [
      { optionId: "opt-allow", name: "Allow once", kind: "allow_once" },
      { optionId: "opt-reject", name: "Reject", kind: "reject_once" },
    ],
  };
}

acp.agent({ name: "studyloop-acp-kit" })
  .onRequest(acp.methods.agent.initialize, ({ params }) => {
    report({ initialize: params });
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: { loadSession: false },
      authMethods: [],
      agentInfo: { name: "studyloop-acp-kit (test double on @agentclientprotocol/sdk)", version: "1" },
    };
  })
  .onRequest(acp.methods.agent.session.new, ({ params }) => {
    const sessionId = `kit-session-${sessions.size + 1}`;
    sessions.set(sessionId, { cwd: params.cwd });
    return { sessionId };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const said = params.prompt.filter((b) => b.type === "text").map((b) => b.text).join("");
    const words = said.trim().split(/\s+/);
    const script = scripts[words[0]];
    const { cwd } = sessions.get(params.sessionId) || {};
    if (!script) {
      await say(client, params.sessionId, text("kit ready"));
      return { stopReason: "end_turn" };
    }
    return { stopReason: await script({ client, sessionId: params.sessionId, cwd, words }) };
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    report({ cancel: params });
  })
  .connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
