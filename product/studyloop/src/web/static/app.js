// StudyLoop web console: a small single-page app with no build step and no
// third-party code (the server's CSP is default-src 'self'). Views: Dashboard,
// live session console (PTY bytes or ACP chat over one WebSocket), Plans, Today.
// State the browser tests wait on is mirrored into data-* attributes.
"use strict";

const $ = (id) => document.getElementById(id);
const VIEWS = ["dashboard", "study-session", "study-plans", "today", "labs"];
const PURPOSE_LABELS = {
  study: "Study session — study mentor",
  planning: "Planning session — study-plan architect",
  focus: "Focus session",
};

async function api(path, options = {}) {
  const init = { headers: { "Content-Type": "application/json" }, ...options };
  if (init.body && typeof init.body !== "string") init.body = JSON.stringify(init.body);
  const res = await fetch(path, init);
  let body = {};
  try { body = await res.json(); } catch (_) { body = {}; }
  // Every answer is the envelope (docs/using-studyloop.md "The JSON envelope"): a failure
  // {"error": {code, message, details}}, a success {"schema_version", "command", "result"},
  // unwrapped here once so every view reads the result itself.
  let error = body && typeof body.error === "object" && body.error ? body.error : null;
  if (error) body = {};
  else if (res.ok && body && body.schema_version === 1 && "result" in body) body = body.result ?? {};
  else if (res.ok) {
    error = { code: "internal", message: "the answer is not the JSON envelope", details: null };
    body = {};
  }
  // The server refuses the API without the launch token (its cookie comes from the printed URL).
  if (res.status === 403 && String(error?.message || "").includes("launch token")) show($("token-needed"), true);
  return { status: res.status, ok: res.ok && !error, body, error };
}

function show(el, visible) { el.hidden = !visible; }
function setError(el, text) { el.textContent = text || ""; show(el, Boolean(text)); }

// ---------------------------------------------------------------- routing
function route() {
  const name = (location.hash || "#dashboard").slice(1);
  const view = VIEWS.includes(name) ? name : "dashboard";
  for (const v of VIEWS) show($("view-" + v), v === view);
  document.querySelectorAll("[data-nav]").forEach((a) =>
    a.classList.toggle("active", a.dataset.nav === view));
  if (view === "dashboard") loadDashboard();
  if (view === "study-session") attachConsole();
  if (view === "study-plans") loadPlans();
  if (view === "today") loadToday();
  if (view === "labs") loadLabs();
  refreshLabsEntry();
}

// ---------------------------------------------------------------- dashboard
let resolvedAgent = null;

async function loadOptions() {
  const { ok, body } = await api("/api/session/options");
  const select = $("start-agent");
  select.textContent = "";
  const agents = ok && Array.isArray(body.agents) ? body.agents : [];
  for (const a of agents) {
    const opt = document.createElement("option");
    opt.value = a.name;
    opt.textContent = a.name + (a.installed === false ? " (not installed)" : "");
    select.appendChild(opt);
  }
  resolvedAgent = body.default_agent || (agents[0] && agents[0].name) || null;
  if (resolvedAgent) select.value = resolvedAgent;
  document.body.dataset.agentResolved = resolvedAgent ? "true" : "false";
}

async function loadDashboard() {
  const { body } = await api("/api/session/state");
  const active = Boolean(body.active);
  show($("dash-active"), active);
  show($("start-form"), !active);
  if (active) {
    $("dash-topic").textContent = body.topic || "";
    $("dash-agent").textContent = body.agent || "";
    $("dash-transport").textContent = body.transport || "cli";
  }
  const last = body.last_release;
  $("dash-last").textContent = last ? `Last session: ${last.topic || ""} (${last.reason || "ended"})` : "";
}

async function startSession(payload, errorEl) {
  setError(errorEl, "");
  const { status, body, error } = await api("/api/session/start", { method: "POST", body: payload });
  if (status !== 201) {
    const install = error?.details?.install_hint;
    const hint = install ? ` — ${install}` : "";
    setError(errorEl, `${error?.message || "Could not start the session"} (HTTP ${status})${hint}`);
    return null;
  }
  if (body.persona_text) sessionStorage.setItem("persona:" + body.study_session_id, body.persona_text);
  if (body.resumed) sessionStorage.setItem("resumed:" + body.study_session_id, "1");
  location.hash = "#study-session";
  return body;
}

// ---------------------------------------------------------------- console
// `turn` numbers the prompt in progress (every shown item carries it as
// data-turn); `tools` maps tool call ids to their line; `plan` is the plan shown.
const consoleState = {
  ws: null, id: null, mode: "none", hiddenTurn: false, current: null, currentSource: "",
  turn: 0, turnText: false, tools: new Map(), plan: null,
};

// A new prompt opens a turn: the items the agent sends are numbered with it.
function beginTurn() {
  endSegment();
  consoleState.turn += 1;
  consoleState.turnText = false;
}

function consoleAttr(name, value) { $("agent-console").dataset[name] = String(value); }

async function attachConsole() {
  const { body } = await api("/api/session/state");
  const active = Boolean(body.active) && (body.transport === "pty" || body.transport === "acp");
  show($("console-idle"), !active);
  renderConsoleDrill(body);
  $("console-purpose").textContent = active ? (PURPOSE_LABELS[body.purpose] || PURPOSE_LABELS.focus) : "";
  if (!active) { closeSocket(); return; }
  if (consoleState.ws && consoleState.id === body.study_session_id) return;
  closeSocket();
  consoleState.id = body.study_session_id;
  setConsoleLive(true);
  consoleAttr("stopped", false);
  consoleState.mode = body.transport === "acp" ? "acp-chat" : "pty";
  consoleAttr("mode", consoleState.mode);
  show($("pty-screen"), consoleState.mode === "pty");
  show($("acp-log"), consoleState.mode === "acp-chat");
  show($("console-form"), true);
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(`${proto}//${location.host}${body.ws_url}`);
  ws.binaryType = "arraybuffer";
  consoleState.ws = ws;
  ws.onopen = () => { consoleAttr("connected", true); $("console-status").textContent = "Connected"; };
  ws.onclose = () => {
    consoleAttr("connected", false);
    if (consoleState.ws === ws) consoleState.ws = null;
  };
  ws.onmessage = (ev) => {
    if (typeof ev.data !== "string") { ptyWrite(new Uint8Array(ev.data)); return; }
    let frame;
    try { frame = JSON.parse(ev.data); } catch (_) { return; }
    onFrame(frame);
  };
}

function closeSocket() {
  if (consoleState.ws) consoleState.ws.close();
  consoleState.ws = null;
  consoleAttr("connected", false);
}

function send(frame) {
  if (consoleState.ws && consoleState.ws.readyState === WebSocket.OPEN) {
    consoleState.ws.send(JSON.stringify(frame));
    return true;
  }
  return false;
}

function onFrame(frame) {
  switch (frame.type) {
    case "started": {
      $("console-status").textContent = `Agent: ${frame.agent || "?"}`;
      const key = "persona:" + consoleState.id;
      const persona = sessionStorage.getItem(key);
      if (consoleState.mode === "acp-chat" && persona && !sessionStorage.getItem(key + ":sent")) {
        // The persona is the first prompt; its reply is not shown, except on a
        // resume, where it is the mentor's review of the last session.
        consoleState.hiddenTurn = !sessionStorage.getItem("resumed:" + consoleState.id);
        consoleAttr("busy", true);
        beginTurn();
        send({ type: "input", data: persona });
        sessionStorage.setItem(key + ":sent", "1");
      }
      break;
    }
    case "agent_message": onAgentMessage(frame.kind, frame.payload || {}); break;
    case "transport_error": addMessage("system", "Error: " + frame.message, "final"); break;
    case "attach_superseded": addMessage("system", "This console was opened elsewhere.", "final"); break;
    case "gap": {
      const note = frame.message || `${frame.dropped} messages were dropped here.`;
      if (consoleState.mode === "pty") ptyWrite(new TextEncoder().encode(`\r\n[studyloop: ${note}]\r\n`));
      else addMessage("system", note, "final");
      break;
    }
    case "stopped":
      // Nothing can be answered or sent any more: the server answered every
      // pending permission request `cancelled` as the session ended.
      endSegment();
      withdrawPermissions("cancelled: the session ended");
      addMessage("system", `Session ended (${frame.reason || "exit"})`, "final");
      setConsoleLive(false);
      consoleAttr("busy", false);
      consoleAttr("stopped", true);
      break;
    default: break;
  }
}

// A turn is shown as the ordered sequence of its updates, as editors that
// speak ACP do: text, thoughts, tool calls (one line per call, updated in place
// as its status changes), the plan (replaced whole by each update, per the
// spec) and permission requests. Any item other than text ends the text bubble
// above it, so text streamed after a tool call reads below the tool line.
function onAgentMessage(kind, payload) {
  const hidden = consoleState.hiddenTurn;
  if (kind === "agent_chunk") {
    if (!hidden) appendText("assistant", contentText(payload));
  } else if (kind === "agent_thought") {
    if (!hidden) appendText("thought", contentText(payload));
  } else if (kind === "tool_call" || kind === "tool_call_update") {
    if (!hidden) showTool(payload);
  } else if (kind === "plan") {
    if (!hidden) showPlan(payload);
  } else if (kind === "request_permission") {
    askPermission(payload);
  } else if (kind === "permission_cancelled") {
    // The server answered it `cancelled` (the session is ending).
    withdrawPermissions(`cancelled: ${payload.why || "the session ended"}`, payload._request_id);
  } else if (kind === "turn_end") {
    endSegment();
    // A request the turn left unanswered no longer stands (the agent cancelled it).
    withdrawPermissions("no longer asked: the turn ended");
    if (!hidden && !consoleState.turnText) addMessage("assistant", "", "final");
    // A turn that did not end normally says so, or a cut-off reply looks whole.
    const note = stopNote(payload.reason);
    if (note && !hidden) addMessage("system", note, "final").dataset.stopReason = payload.reason;
    consoleState.hiddenTurn = false;
    consoleAttr("busy", false);
    consoleAttr("turns", Number($("agent-console").dataset.turns || 0) + 1);
  }
}

function contentText(payload) {
  return payload.content && typeof payload.content.text === "string" ? payload.content.text : "";
}

// Streams `text` into the open bubble of `role`, or opens one after whatever
// came last. The mentor writes Markdown: re-rendered whole as it streams.
function appendText(role, text) {
  const open = consoleState.current;
  if (!open || open.dataset.role !== role) {
    endSegment();
    consoleState.current = addMessage(role, "", "streaming");
    consoleState.currentSource = "";
  }
  consoleState.currentSource += text;
  if (role === "assistant") {
    consoleState.turnText = true;
    renderMarkdown(consoleState.current, consoleState.currentSource);
  } else {
    consoleState.current.textContent = "Thinking: " + consoleState.currentSource;
  }
}

// Closes the open text bubble: the next text starts a new one below.
function endSegment() {
  if (consoleState.current) consoleState.current.dataset.status = "final";
  consoleState.current = null;
}

const TOOL_STATUS = { pending: "pending", in_progress: "running", completed: "done", failed: "failed" };

// One line per tool call: created by its first update (normally `tool_call`),
// then changed in place by every `tool_call_update` (only the fields sent change).
function showTool(payload) {
  const id = payload.toolCallId || "";
  let li = consoleState.tools.get(id);
  if (!li) {
    endSegment();
    li = addMessage("tool", "", "final");
    li.dataset.toolCallId = id;
    consoleState.tools.set(id, li);
  }
  if (payload.title) li.dataset.title = payload.title;
  if (payload.status) li.dataset.toolStatus = payload.status;
  const status = li.dataset.toolStatus;
  const shown = status ? ` (${TOOL_STATUS[status] || status})` : "";
  li.textContent = `Tool: ${li.dataset.title || id}${shown}`;
}

const PLAN_MARK = { completed: "✓", in_progress: "▸", pending: "○" };

// The agent's plan: each update is the whole plan, so it replaces the plan
// shown in this turn (in place) or opens one after the last item.
function showPlan(payload) {
  let li = consoleState.plan;
  if (!li || li.dataset.turn !== String(consoleState.turn)) {
    endSegment();
    li = addMessage("plan", "", "final");
    consoleState.plan = li;
  }
  li.textContent = "Plan:";
  const list = document.createElement("ol");
  for (const e of Array.isArray(payload.entries) ? payload.entries : []) {
    const item = document.createElement("li");
    item.dataset.status = e.status || "";
    item.textContent = `${PLAN_MARK[e.status] || "○"} ${e.content || ""}`;
    list.appendChild(item);
  }
  li.appendChild(list);
}

// What the learner reads when a turn ends for a reason other than `end_turn`
// (ACP's stopReason); `error` already showed its own message.
const STOP_NOTES = {
  max_tokens: "Reply cut off: the model hit its token limit. Ask it to continue, or for a shorter answer.",
  max_turn_requests: "Reply cut off: the agent hit its limit of model requests for one turn. Ask it to continue.",
  refusal: "The model refused to answer this message.",
  cancelled: "Reply cancelled before it finished.",
};
function stopNote(reason) {
  if (!reason || reason === "end_turn" || reason === "error") return null;
  return STOP_NOTES[reason] || `The turn ended early (stop reason: ${reason}).`;
}

// A permission request is always the learner's to answer, in the persona turn
// too (whose text stays hidden): nothing is granted on their behalf. One that
// offers no option cannot be answered, so it is refused and the learner told.
function askPermission(payload) {
  const options = Array.isArray(payload.options) ? payload.options : [];
  const answer = (optionId) => send({
    type: "permission_response", requestId: payload._request_id,
    outcome: optionId ? { outcome: "selected", optionId } : { outcome: "cancelled" },
  });
  endSegment();
  const title = (payload.toolCall && payload.toolCall.title) || "The agent asks for permission";
  const asked = consoleState.hiddenTurn ? `While reading its instructions, the mentor asks: ${title}` : title;
  const li = addMessage("permission", asked, "pending");
  li.dataset.requestId = String(payload._request_id);
  if (options.length === 0) {
    answer(null);
    li.dataset.status = "refused";
    li.appendChild(document.createTextNode(" (refused: the request offered no option to choose)"));
    return;
  }
  for (const o of options) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = o.name || o.optionId;
    b.dataset.optionId = o.optionId;
    b.dataset.kind = o.kind || "";
    b.onclick = () => {
      if (!answer(o.optionId)) return;
      li.dataset.status = "final";
      li.querySelectorAll("button").forEach((x) => { x.disabled = true; });
      li.appendChild(document.createTextNode(` (you chose: ${b.textContent})`));
    };
    li.appendChild(document.createTextNode(" "));
    li.appendChild(b);
  }
}

// Disables the buttons of the permission requests still waiting (only
// `requestId` when given) and says why.
function withdrawPermissions(why, requestId) {
  document.querySelectorAll('#acp-log .acp-msg[data-role="permission"][data-status="pending"]').forEach((li) => {
    if (requestId !== undefined && li.dataset.requestId !== String(requestId)) return;
    li.dataset.status = "withdrawn";
    li.querySelectorAll("button").forEach((b) => { b.disabled = true; });
    const note = document.createElement("span");
    note.className = "permission-note";
    note.textContent = ` (${why})`;
    li.appendChild(note);
  });
}

// The message box and its buttons: live while a session runs, off once it ended.
function setConsoleLive(live) {
  for (const id of ["console-input", "console-send", "console-stop"]) $(id).disabled = !live;
}

function addMessage(role, text, status) {
  const li = document.createElement("li");
  li.className = "acp-msg";
  li.dataset.role = role;
  li.dataset.status = status;
  li.dataset.turn = String(consoleState.turn);
  li.textContent = text;
  const log = $("acp-log");
  log.appendChild(li);
  log.scrollTop = log.scrollHeight;
  return li;
}

// PTY bytes: decoded as UTF-8 and stripped of terminal control sequences. It is
// a readable transcript, not a terminal emulator.
const decoder = new TextDecoder();
const ANSI = /\x1b\[[0-9;?]*[ -\/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78DEHMc]/g;
function ptyWrite(bytes) {
  const screen = $("pty-screen");
  const text = decoder.decode(bytes, { stream: true }).replace(ANSI, "").replace(/\r\n/g, "\n").replace(/\r/g, "");
  screen.textContent = (screen.textContent + text).slice(-200000);
  screen.scrollTop = screen.scrollHeight;
}

function sendInput() {
  const input = $("console-input");
  const text = input.value;
  if (!text.trim()) return;
  if (consoleState.mode === "pty") {
    send({ type: "input", data: text + "\r" });
  } else {
    if ($("agent-console").dataset.busy === "true") return;
    if (!send({ type: "input", data: text })) return;
    beginTurn();
    addMessage("user", text, "final");
    consoleAttr("busy", true);
  }
  input.value = "";
}

// ---------------------------------------------------------------- plans
let openPlanId = null;

async function loadPlans() {
  if (!resolvedAgent) await loadOptions();
  const { status, body, error } = await api("/api/plans");
  const list = $("plans-list");
  list.textContent = "";
  const plans = status === 200 && Array.isArray(body.plans) ? body.plans : [];
  for (const p of plans) {
    const li = document.createElement("li");
    li.dataset.planId = p.plan_id || "";
    li.setAttribute("data-testid", "plan-row");
    const open = document.createElement("button");
    open.type = "button";
    open.className = "link";
    open.textContent = p.title || li.dataset.planId;
    open.addEventListener("click", () => loadPlanDetail(p.plan_id));
    const meta = document.createElement("span");
    meta.className = "muted";
    meta.textContent = ` ${p.status || ""} · ${p.milestone_done}/${p.milestone_total} milestones`;
    li.append(open, meta);
    list.appendChild(li);
  }
  const why = error?.code === "scope_unconfigured" ? error.message : `Plans are unavailable (HTTP ${status}).`;
  $("plans-empty").textContent = status === 200 ? "No plans yet." : why;
  show($("plans-empty"), plans.length === 0);
  if (openPlanId && plans.some((p) => p.plan_id === openPlanId)) await loadPlanDetail(openPlanId);
  else show($("plan-detail"), false);
  document.body.dataset.plansReady = "true";
}

async function loadPlanDetail(planId) {
  const { status, body, error } = await api(`/api/plans/${encodeURIComponent(planId)}`);
  const box = $("plan-detail");
  if (status !== 200) { setError($("plans-error"), error?.message || `HTTP ${status}`); show(box, false); return; }
  openPlanId = planId;
  box.dataset.planId = planId;
  // The revision this view shows: a change sends it back, so a change made meanwhile
  // (by the agent, another tab) is refused instead of overwritten (issue 30 item 2).
  box.dataset.revision = body.revision || "";
  $("plan-detail-title").textContent = body.title || planId;
  $("plan-detail-status").textContent = `${body.status} · ${body.milestone_done}/${body.milestone_total} milestones done`;
  $("plan-detail-why").textContent = body.mission && body.mission.why ? `Why: ${body.mission.why}` : "";
  const ms = $("plan-milestones");
  ms.textContent = "";
  for (const m of body.milestones || []) {
    const li = document.createElement("li");
    const label = document.createElement("label");
    const box2 = document.createElement("input");
    box2.type = "checkbox";
    box2.checked = Boolean(m.done);
    box2.setAttribute("data-testid", "plan-milestone");
    box2.dataset.index = String(m.index);
    box2.addEventListener("change", () => setMilestone(planId, m.index, box2.checked));
    label.append(box2, document.createTextNode(" " + m.title));
    li.appendChild(label);
    ms.appendChild(li);
  }
  const r = body.readiness || { blockers: [], nudges: [] };
  const notes = $("plan-readiness");
  notes.textContent = "";
  for (const [cls, items] of [["blocker", r.blockers || []], ["nudge", r.nudges || []]]) {
    for (const text of items) {
      const li = document.createElement("li");
      li.className = cls;
      li.textContent = text;
      notes.appendChild(li);
    }
  }
  show(box, true);
}

async function setMilestone(planId, index, done) {
  const if_revision = $("plan-detail").dataset.revision;
  const { status, error } = await api(`/api/plans/${encodeURIComponent(planId)}/milestones/${index}/toggle`,
    { method: "POST", body: { done, if_revision } });
  // A stale revision (409) says the plan changed meanwhile; the reload below shows it.
  setError($("plans-error"), status === 200 ? "" : (error?.message || `HTTP ${status}`));
  await loadPlans();
}

async function planWithArchitect() {
  const button = $("plan-architect");
  button.disabled = true;
  try {
    const topic = $("plan-subject").value.trim() || "Study plan";
    await startSession({ topic, energy: 5, agent: resolvedAgent, transport: "pty", purpose: "planning" }, $("plans-error"));
  } finally {
    button.disabled = false;
  }
}

// ---------------------------------------------------------------- today
function recommendation(rec, plans, primary) {
  const card = document.createElement("div");
  card.className = primary ? "today-card" : "today-alternate";
  const h = document.createElement(primary ? "h2" : "h3");
  h.textContent = rec.title || "Nothing scheduled";
  card.appendChild(h);
  const meta = document.createElement("p");
  meta.className = "muted";
  meta.textContent = `${rec.minutes || "?"} min · ${rec.reason || ""}`;
  card.appendChild(meta);
  const ref = Array.isArray(rec.plan_refs) && rec.plan_refs[0];
  const plan = ref ? plans.find((p) => p.plan_id === ref.plan_id) : null;
  if (plan) {
    const line = document.createElement("p");
    line.className = "today-plan";
    line.textContent = `Advances plan: ${plan.title}` + (plan.next_milestone ? ` — next: ${plan.next_milestone}` : "");
    card.appendChild(line);
  }
  return card;
}

async function loadToday() {
  const holder = $("today-cards");
  holder.textContent = "";
  const { status, body, error } = await api("/api/now");
  if (status !== 200) { setError($("today-error"), error?.message || `Today's plan is unavailable (HTTP ${status}).`); return; }
  setError($("today-error"), "");
  const plans = Array.isArray(body.active_plans) ? body.active_plans : [];
  const first = recommendation(body.primary || {}, plans, true);
  if (body.starter) first.classList.add("today-starter");
  holder.appendChild(first);
  for (const alt of body.alternates || []) holder.appendChild(recommendation(alt, plans, false));
  document.body.dataset.todayReady = "true";
}

// ---------------------------------------------------------------- labs
// One sidebar entry, shown only while the lockfile lists a module. The
// browser shows drills and their commands and asks the server to bind one to
// the study session; it never runs one.
async function refreshLabsEntry() {
  const { ok, body } = await api("/api/labs");
  const modules = ok && Array.isArray(body.modules) ? body.modules : [];
  show($("nav-labs"), modules.length > 0);
  return modules;
}

async function loadLabs() {
  const holder = $("labs-modules");
  const [modules, state] = await Promise.all([refreshLabsEntry(), api("/api/session/state")]);
  labs.active = state.body.active ? state.body.drill || null : null;
  holder.textContent = "";
  for (const m of modules) {
    const card = document.createElement("div");
    card.className = "card";
    card.dataset.testid = "labs-module";
    const h = document.createElement("h2");
    h.textContent = `${m.id} ${m.version}` + (m.intact ? "" : " — snapshot changed after install; remove and add it again");
    card.appendChild(h);
    for (const d of m.drills || []) card.appendChild(drillCard(d));
    holder.appendChild(card);
  }
}

function drillCard(d) {
  const box = document.createElement("div");
  box.className = "drill";
  box.dataset.testid = "labs-drill";
  box.dataset.drill = d.id;
  const title = document.createElement("h3");
  title.textContent = d.id;
  const prompt = document.createElement("p");
  prompt.textContent = d.prompt;
  const criteria = document.createElement("ul");
  for (const c of d.successCriteria || []) {
    const li = document.createElement("li");
    li.textContent = c;
    criteria.appendChild(li);
  }
  const active = Boolean(labs.active && labs.active.id === d.id);
  box.dataset.active = String(active);
  const commands = document.createElement("pre");
  commands.dataset.testid = "labs-commands";
  commands.textContent = (d.commands || []).join("\n");
  commands.hidden = !active;
  const start = document.createElement("button");
  start.type = "button";
  start.textContent = "Start drill";
  start.dataset.testid = "labs-start";
  start.hidden = active;
  const cancel = document.createElement("button");
  cancel.type = "button";
  cancel.textContent = "Cancel drill";
  cancel.dataset.testid = "labs-cancel";
  cancel.hidden = !active;
  const status = document.createElement("p");
  status.className = "muted";
  status.dataset.testid = "labs-drill-status";
  status.setAttribute("role", "status");
  if (labs.notice && labs.notice.id === d.id) {
    status.textContent = labs.notice.text;
    status.classList.toggle("error", Boolean(labs.notice.error));
  }
  start.addEventListener("click", () => startDrill(d, start));
  cancel.addEventListener("click", () => cancelDrill(d.id));
  box.append(title, prompt, criteria, start, cancel, commands, status);
  return box;
}

// The drill bound to the live session (server-side, from /api/session/state)
// and the last message to show on a drill's card.
const labs = { active: null, notice: null };

function mentorText(mentor) {
  return mentor === "told" ? "Mentor told." : `Mentor ${mentor || "not told"}.`;
}

// Start drill: the server binds the drill to the live session or starts one
// through the same start path as the dashboard; nothing runs here.
async function startDrill(d, button) {
  button.disabled = true;
  const session = {
    agent: $("start-agent").value || resolvedAgent,
    transport: $("start-transport").value,
    energy: Number($("start-energy").value) || 5,
  };
  const { status, body, error } = await api("/api/labs/drill/start", { method: "POST", body: { drill: d.id, session } });
  button.disabled = false;
  if (status !== 200 && status !== 201) {
    labs.notice = { id: d.id, error: true, text: `${error?.message || "Could not start the drill"} (HTTP ${status})` };
    loadLabs();
    return;
  }
  const started = Boolean(body.started_session);
  const how = started ? "Started a study session for this drill." : "Drill bound to your live study session.";
  labs.notice = { id: d.id, text: `${how} ${mentorText(body.mentor)} Run the commands below in your terminal.` };
  document.body.dataset.drillSession = started ? "started" : "bound";
  const s = body.session;
  if (s && s.persona_text) sessionStorage.setItem("persona:" + s.study_session_id, s.persona_text);
  // A new session needs its console attached (the ACP persona is sent from
  // there, and a session nobody attaches to is released).
  if (status === 201) { location.hash = "#study-session"; return; }
  loadLabs();
}

async function cancelDrill(id) {
  const { status, body, error } = await api("/api/labs/drill/cancel", { method: "POST", body: { drill: id } });
  labs.notice = status === 200
    ? { id, text: `Drill cancelled. ${mentorText(body.mentor)} The study session${body.started_session ? " it started" : ""} keeps running; end it from the console or the dashboard.` }
    : { id, error: true, text: `${error?.message || "Could not cancel the drill"} (HTTP ${status})` };
  document.body.dataset.drillSession = status === 200 ? "cancelled" : document.body.dataset.drillSession || "";
  if (location.hash === "#labs") loadLabs(); else renderConsoleDrill();
}

// The active drill's commands and Cancel drill above the live console.
async function renderConsoleDrill(state) {
  const body = state || (await api("/api/session/state")).body;
  labs.active = body.active ? body.drill || null : null;
  const d = labs.active;
  show($("console-drill"), Boolean(d));
  $("console-drill-status").textContent = labs.notice ? labs.notice.text : "";
  if (!d) return;
  $("console-drill-id").textContent = d.id;
  $("console-drill-commands").textContent = (d.commands || []).join("\n");
}

// ---------------------------------------------------------------- wiring
window.addEventListener("hashchange", route);
document.addEventListener("DOMContentLoaded", async () => {
  $("start-form").addEventListener("submit", (e) => {
    e.preventDefault();
    startSession({
      topic: $("start-topic").value.trim(),
      energy: Number($("start-energy").value) || 5,
      agent: $("start-agent").value || resolvedAgent,
      transport: $("start-transport").value,
      purpose: $("start-purpose").value,
      resume: $("start-resume").checked,
    }, $("dash-error"));
  });
  $("dash-open").addEventListener("click", () => { location.hash = "#study-session"; });
  $("dash-end").addEventListener("click", async () => { await api("/api/session/end", { method: "POST" }); loadDashboard(); });
  $("console-form").addEventListener("submit", (e) => { e.preventDefault(); sendInput(); });
  $("console-input").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); sendInput(); }
  });
  $("console-stop").addEventListener("click", () => { if (!send({ type: "stop" })) api("/api/session/end", { method: "POST" }); });
  $("plan-architect").addEventListener("click", planWithArchitect);
  $("console-drill-cancel").addEventListener("click", () => { if (labs.active) cancelDrill(labs.active.id); });
  await loadOptions();
  route();
});
