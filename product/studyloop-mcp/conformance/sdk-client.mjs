// studyloop-mcp driven by the official TypeScript SDK client (@modelcontextprotocol/sdk,
// pinned in package-lock.json) over its real stdio transport, as a harness would.
// Run by product/studyloop-mcp/tests/it/sdk_client.rs:
//   node sdk-client.mjs <path of studyloop-mcp>   (HOME, STUDYLOOP_PLANS_DIR from the env)
// Prints one JSON summary line; exits 1 naming every failed expectation.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  SUPPORTED_PROTOCOL_VERSIONS,
  InitializeResultSchema,
  EmptyResultSchema,
  ListToolsResultSchema,
  CallToolResultSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import Ajv2020 from 'ajv/dist/2020.js';

const bin = process.argv[2];
const failures = [];
const expect = (ok, what) => {
  if (!ok) failures.push(what);
};
const transport = () =>
  new StdioClientTransport({
    command: bin,
    args: [],
    env: { HOME: process.env.HOME, PATH: '/usr/bin:/bin', STUDYLOOP_PLANS_DIR: process.env.STUDYLOOP_PLANS_DIR },
    stderr: 'inherit',
  });
const info = { name: 'studyloop-sdk-test', version: '0' };

// 1. initialize under every version this SDK knows (a raw initialize: Client.connect
//    always asks for the latest). The server must agree to each version it knows,
//    and answer a version it does not know with one both sides support.
const negotiated = {};
for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
  const c = new Client(info, { capabilities: {} });
  await Protocol.prototype.connect.call(c, transport());
  try {
    const r = await c.request(
      { method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: info } },
      InitializeResultSchema,
    );
    negotiated[version] = r.protocolVersion;
    expect(SUPPORTED_PROTOCOL_VERSIONS.includes(r.protocolVersion), `${version}: answered ${r.protocolVersion}, which the SDK does not support`);
    if (version !== '2024-10-07') expect(r.protocolVersion === version, `${version}: answered ${r.protocolVersion}`);
    expect(r.serverInfo?.name === 'studyloop' && r.capabilities?.tools, `${version}: ${JSON.stringify(r)}`);
    await c.notification({ method: 'notifications/initialized' });
    const tools = await c.request({ method: 'tools/list', params: {} }, ListToolsResultSchema);
    expect(tools.tools.length === 13, `${version}: ${tools.tools.length} tools`);
    await c.request({ method: 'ping' }, EmptyResultSchema);
    // Arguments the schema forbids: -32602 up to 2025-06-18; from 2025-11-25 on
    // (SEP-1303) a tool execution error the model reads.
    const bad = { method: 'tools/call', params: { name: 'update_study_plan', arguments: { plan_id: 'x', topics: 'sql' } } };
    if (r.protocolVersion >= '2025-11-25') {
      const res = await c.request(bad, CallToolResultSchema);
      expect(res.isError === true && /^invalid: .*`topics`/.test(res.content?.[0]?.text ?? ''), `${version}: ${JSON.stringify(res).slice(0, 200)}`);
      expect(res.structuredContent?.error?.code === 'invalid_input' && res.structuredContent.error.details?.violations?.length > 0, `${version}: ${JSON.stringify(res.structuredContent)}`);
    } else {
      try {
        const res = await c.request(bad, CallToolResultSchema);
        failures.push(`${version}: bad arguments answered ${JSON.stringify(res).slice(0, 200)}`);
      } catch (e) {
        expect(e instanceof McpError && e.code === -32602 && /`topics`/.test(e.message), `${version}: ${e}`);
      }
    }
  } catch (e) {
    failures.push(`${version}: ${e}`);
  }
  await c.close();
}

// 2. The full session at the SDK's latest version: the SDK client's own connect.
const client = new Client(info, { capabilities: {} });
await client.connect(transport());
expect(client.getServerVersion()?.name === 'studyloop', 'serverInfo');
const { tools } = await client.listTools();
// Compile each inputSchema and outputSchema with an independent validator (Ajv, 2020-12, strict).
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
const validators = {};
for (const t of tools) {
  try {
    validators[t.name] = ajv.compile(t.inputSchema);
    ajv.compile(t.outputSchema);
  } catch (e) {
    failures.push(`${t.name}: a listed schema does not compile: ${e.message}`);
  }
}

// Each tool called with arguments its schema accepts (a plan's life; the live session
// the test's state file describes: a topic, a search, the end), then with arguments
// it forbids. The SDK validates each result's structuredContent (a success's and a
// refusal's: the envelope, issue 30 item 1) against the tool's outputSchema itself.
const valid = [
  ['list_study_plans', {}],
  ['get_planning_interview', {}],
  ['create_study_plan', { title: 'SQL windows', plan_id: 'sql', request_id: 'req-sql', answers: { why: 'reports', success: ['a running total'], milestones: ['OVER', 'Frames'] } }],
  ['get_study_plan', { plan_id: 'sql', include_markdown: true, include_history: true }],
  ['update_study_plan', { plan_id: 'sql', topics: ['sql'], energy_floor: 3 }],
  ['set_study_plan_status', { plan_id: 'sql', status: 'active' }],
  ['set_study_plan_milestone', { plan_id: 'sql', index: 0, done: true }],
  ['evaluate_study_plan', { plan_id: 'sql', phase: 'mid', record: true }],
  ['record_plan_learning', { plan_id: 'sql', title: 'Frames', body: 'ROWS vs RANGE' }],
  ['delete_study_plan', { plan_id: 'sql', confirmed: true }],
  ['log_topic', { topic: 'window frames', status: 'win' }],
  ['session_search', { query: 'window' }],
  ['end_session', {}],
];
// A change names the revision the last result carried (issue 30 item 2), as a client does.
const changes = new Set(['update_study_plan', 'set_study_plan_status', 'set_study_plan_milestone',
  'evaluate_study_plan', 'record_plan_learning', 'delete_study_plan']);
let revision = null;
const invalid = {
  list_study_plans: { status: 'finished' },
  get_planning_interview: { extra: 1 },
  create_study_plan: { title: 'X', answers: 'nope' },
  get_study_plan: { plan_id: 'sql', include_markdown: null },
  update_study_plan: { plan_id: 'sql', topics: 'sql' },
  set_study_plan_status: { plan_id: 'sql' },
  set_study_plan_milestone: { plan_id: 'sql', index: '0', done: true },
  evaluate_study_plan: { plan_id: 'sql', phase: 'never' },
  record_plan_learning: { plan_id: 'sql', title: 7 },
  delete_study_plan: { plan_id: 'sql', confirmed: 'yes' },
  log_topic: { topic: ['a'] },
  session_search: { query: 'q', limit: 0 },
  end_session: { now: true },
};
let calledOk = 0;
let refused = 0;
for (const [name, given] of valid) {
  const args = changes.has(name) ? { ...given, if_revision: revision } : given;
  expect(validators[name]?.(args), `${name}: Ajv rejects the valid arguments ${JSON.stringify(args)}`);
  try {
    const r = await client.callTool({ name, arguments: args });
    const env = r.structuredContent;
    expect(!r.isError && env?.schema_version === 1 && typeof env.command === 'string' && env.result && typeof env.result === 'object', `${name}: ${JSON.stringify(r).slice(0, 300)}`);
    if (typeof env?.result?.revision === 'string') revision = env.result.revision;
    calledOk += 1;
  } catch (e) {
    failures.push(`${name} ${JSON.stringify(args)}: ${e}`);
  }
  const bad = invalid[name];
  expect(validators[name] && !validators[name](bad), `${name}: Ajv accepts the invalid arguments ${JSON.stringify(bad)}`);
  // This session negotiated the SDK's latest (2025-11-25): a tool error (SEP-1303).
  try {
    const r = await client.callTool({ name, arguments: bad });
    const text = r.content?.[0]?.text ?? '';
    expect(r.isError === true && text.startsWith(`invalid: invalid arguments for \`${name}\``), `${name} ${JSON.stringify(bad)}: ${JSON.stringify(r).slice(0, 300)}`);
    expect(r.structuredContent?.error?.code === 'invalid_input' && r.structuredContent.error.message === text, `${name}: ${JSON.stringify(r.structuredContent).slice(0, 300)}`);
    if (r.isError) refused += 1;
  } catch (e) {
    failures.push(`${name} ${JSON.stringify(bad)}: ${e}`);
  }
}
expect(calledOk === 13 && refused === 13, `called ${calledOk}, refused ${refused}`);
// A refusal of the tool itself (the plan is gone): the failure envelope, which the
// SDK validates against the outputSchema like a success, so it must not throw.
try {
  const r = await client.callTool({ name: 'get_study_plan', arguments: { plan_id: 'sql' } });
  const e = r.structuredContent?.error;
  expect(r.isError === true && e?.code === 'not_found' && e.message === r.content?.[0]?.text && e.details?.plan_code === 'not_found', `not_found: ${JSON.stringify(r).slice(0, 300)}`);
} catch (e) {
  failures.push(`get_study_plan of a deleted plan threw: ${e}`);
}

// 3. ping; a cancelled request (the SDK sends notifications/cancelled); the session
//    survives both; an unknown method is -32601.
await client.ping();
const ac = new AbortController();
const pending = client.callTool({ name: 'list_study_plans', arguments: {} }, undefined, { signal: ac.signal });
ac.abort('the test cancels it');
let cancelled = false;
try {
  await pending;
} catch {
  cancelled = true;
}
expect(cancelled, 'an aborted call did not reject');
await client.ping();
const after = await client.callTool({ name: 'list_study_plans', arguments: {} });
expect(!after.isError, 'a call after the cancellation failed');
let unknownCode = null;
try {
  await client.request({ method: 'studyloop/no_such_method', params: {} }, EmptyResultSchema);
} catch (e) {
  unknownCode = e instanceof McpError ? e.code : String(e);
}
expect(unknownCode === -32601, `unknown method: ${unknownCode}`);
await client.close();

console.log(JSON.stringify({ negotiated, tools: tools.length, calledOk, refused, cancelled, unknownCode, failures }));
process.exit(failures.length === 0 ? 0 : 1);
