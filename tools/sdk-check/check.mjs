// Drives bin/devtools-mcp with the official TypeScript MCP SDK client, as a
// user's MCP client would, over stdio, streamable HTTP and (2024-11-05) SSE,
// and checks what such clients rely on: handshake and protocol version,
// capabilities, tools/prompts listing, tool results and the error body,
// logging/setLevel, cancellation, progress, auth and session handling.
//
//   cd tools/sdk-check && npm ci && node check.mjs [path/to/devtools-mcp]
//
// The file resources and their live updates, over all three transports and
// under a policy, are checked by resources.mjs, which this runs last.
//
// Exit status 0 when every check passes; gaps (features no tool exercises)
// are reported but do not fail. SDK_CHECK_VERBOSE=1 prints server stderr.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  EmptyResultSchema, LATEST_PROTOCOL_VERSION, ListResourcesResultSchema, SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

import { runResources } from './resources.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.resolve(process.argv[2] ?? path.join(here, '../../bin/devtools-mcp'));
const SDK_VERSION = JSON.parse(fs.readFileSync(path.join(here, 'node_modules/@modelcontextprotocol/sdk/package.json'), 'utf8')).version;
const VERBOSE = process.env.SDK_CHECK_VERBOSE === '1';
const EXPECTED_TOOLS = [
  'database_query', 'database_schema', 'database_tables', 'file_delete', 'file_info', 'file_list', 'file_read',
  'file_search', 'file_write', 'shell_execute', 'system_health', 'system_info', 'web_fetch', 'web_request',
];
// A statement that never ends on its own: only cancellation (or the
// statement timeout) stops it.
const ENDLESS_SQL = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c';

// ---------------------------------------------------------------- reporting

const results = [];
let section = '';
function record(status, name, detail) {
  results.push({ status, name: `${section}: ${name}`, detail });
  const mark = { pass: 'ok  ', fail: 'FAIL', gap: 'GAP ' }[status];
  console.log(`${mark} ${section}: ${name}${detail ? ` — ${detail}` : ''}`);
}
function check(name, cond, detail = '') { record(cond ? 'pass' : 'fail', name, cond ? '' : detail); return !!cond; }
function gap(name, detail) { record('gap', name, detail); }
async function step(name, fn) {
  try { await fn(); } catch (e) { record('fail', name, `threw ${e?.stack ?? e}`); }
}
const j = (v) => JSON.stringify(v);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function waitFor(pred, ms, every = 20) {
  const end = Date.now() + ms;
  while (Date.now() < end) { const v = pred(); if (v) return v; await sleep(every); }
  return pred();
}

// ----------------------------------------------------------- server fixtures

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-check-'));
function makeRoot(name) {
  const root = path.join(scratch, name);
  fs.mkdirSync(path.join(root, 'data'), { recursive: true });
  fs.writeFileSync(path.join(root, 'hello.txt'), 'hello from the sdk check\n');
  return root;
}
function serverEnv(name) {
  const data = path.join(scratch, `${name}-data`);
  fs.mkdirSync(data, { recursive: true });
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: data, MCP_DATA_DIR: data,
    DEVTOOLS_DB_PATH: path.join(data, 'devtools.db'), MCP_LOG_LEVEL: 'debug',
  };
}

// Tap wraps a transport and records every JSON-RPC message both ways; an
// optional rewrite may alter outgoing messages (to request older versions).
class Tap {
  constructor(inner, rewrite) { this.inner = inner; this.rewrite = rewrite; this.sent = []; this.received = []; this.errors = []; }
  async start() {
    this.inner.onmessage = (m, extra) => { this.received.push(m); this.onmessage?.(m, extra); };
    this.inner.onerror = (e) => { this.errors.push(e); this.onerror?.(e); };
    this.inner.onclose = () => this.onclose?.();
    return this.inner.start();
  }
  async send(m, opts) {
    if (this.rewrite) m = this.rewrite(m);
    this.sent.push(m);
    return this.inner.send(m, opts);
  }
  async close() { return this.inner.close(); }
  get sessionId() { return this.inner.sessionId; }
  get protocolVersion() { return this.inner.protocolVersion; }
  setProtocolVersion(v) { this.inner.setProtocolVersion?.(v); }
  response(id) { return this.received.find((m) => m.id === id && ('result' in m || 'error' in m)); }
}

// StderrLog collects a server's stderr and checks that every line is JSON.
class StderrLog {
  constructor(stream) {
    this.lines = []; this.bad = [];
    readline.createInterface({ input: stream }).on('line', (line) => {
      if (VERBOSE) console.error(`  [server] ${line}`);
      try { this.lines.push(JSON.parse(line)); } catch { this.bad.push(line); }
    });
  }
  find(pred) { return this.lines.find(pred); }
}

// newClient records the protocol-level errors the SDK reports through
// onerror (a response for an unknown request id, an unparsable message…).
function newClient() {
  const c = new Client({ name: 'mcp-fleet-sdk-check', version: '1.0.0' }, { capabilities: {} });
  c.errors = [];
  c.onerror = (e) => c.errors.push(e);
  return c;
}

function stdioTransport(root, extraArgs = []) {
  return new StdioClientTransport({
    command: BIN, args: ['--root', root, ...extraArgs], env: serverEnv('stdio'), stderr: 'pipe',
  });
}

// HTTP servers still running are killed if the check exits early.
const children = new Set();
process.on('exit', () => { for (const c of children) { try { c.kill('SIGKILL'); } catch { /* gone */ } } });

async function startHTTP(root, token, extraArgs = []) {
  const child = spawn(BIN, ['--transport', 'http', '--port', '0', '--root', root, ...extraArgs], {
    env: { ...serverEnv('http'), MCP_AUTH_TOKEN: token }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const log = new StderrLog(child.stderr);
  let stdout = '';
  child.stdout.on('data', (d) => { stdout += d; });
  const ready = await waitFor(() => log.find((l) => l.addr), 10000);
  if (!ready) { child.kill('SIGKILL'); throw new Error(`HTTP server did not report its address; stderr: ${j(log.bad)}`); }
  return {
    child, log, base: `http://${ready.addr}`, stdout: () => stdout,
    // stop sends SIGTERM and returns the exit code and how long it took.
    async stop() {
      if (child.exitCode !== null) return { code: child.exitCode, ms: 0 };
      const t0 = Date.now();
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
      const [code] = await once(child, 'exit');
      clearTimeout(timer);
      return { code, ms: Date.now() - t0 };
    },
  };
}

// ------------------------------------------------------------ shared checks

// processesMatching lists the pids whose command line contains text (Linux).
function processesMatching(text) {
  const pids = [];
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text)) pids.push(pid);
    } catch { /* gone */ }
  }
  return pids.filter((pid) => Number(pid) !== process.pid);
}

function parseBody(res) {
  const text = res?.content?.find((c) => c.type === 'text')?.text;
  try { return JSON.parse(text); } catch { return undefined; }
}

// suite runs everything every transport must get right. log is the server's
// stderr (audit lines), tap the wrapped transport.
async function suite(client, tap, log, root) {
  const expectVersion = LATEST_PROTOCOL_VERSION;
  await step('initialize result', async () => {
    const initReq = tap.sent.find((m) => m.method === 'initialize');
    const init = tap.response(initReq?.id)?.result;
    check(`client asked for protocol ${expectVersion}`, initReq?.params?.protocolVersion === expectVersion, j(initReq?.params));
    check(`server answered protocolVersion ${expectVersion}`, init?.protocolVersion === expectVersion, `got ${init?.protocolVersion}`);
    const caps = client.getServerCapabilities() ?? {};
    check('capabilities advertise tools, prompts, logging', caps.tools && caps.prompts && caps.logging, j(caps));
    check('serverInfo names the server', client.getServerVersion()?.name === 'devtools', j(client.getServerVersion()));
    check('instructions are sent', typeof client.getInstructions() === 'string' && client.getInstructions().length > 0);
  });

  await step('ping', async () => { check('ping answers', (await client.ping()) !== undefined); });

  await step('tools/list', async () => {
    const { tools, nextCursor } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    check('14 tools, the expected names', j(names) === j(EXPECTED_TOOLS), j(names));
    check('no pagination cursor', nextCursor === undefined, `nextCursor=${nextCursor}`);
    const hints = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'];
    const missing = tools.filter((t) => !hints.every((h) => typeof t.annotations?.[h] === 'boolean')).map((t) => t.name);
    check('every tool has all four boolean annotation hints', missing.length === 0, `missing on ${missing}`);
    const by = Object.fromEntries(tools.map((t) => [t.name, t]));
    check('file_read is read-only, not destructive', by.file_read?.annotations?.readOnlyHint === true && by.file_read?.annotations?.destructiveHint === false, j(by.file_read?.annotations));
    check('file_write is destructive, not read-only', by.file_write?.annotations?.readOnlyHint === false && by.file_write?.annotations?.destructiveHint === true, j(by.file_write?.annotations));
    check('web_fetch is open-world', by.web_fetch?.annotations?.openWorldHint === true, j(by.web_fetch?.annotations));
    check('every tool has a title and an object input schema', tools.every((t) => (t.title || t.annotations?.title) && t.inputSchema?.type === 'object'));
    const ajv = new AjvJsonSchemaValidator();
    const broken = [];
    for (const t of tools) { try { ajv.getValidator(t.inputSchema); } catch (e) { broken.push(`${t.name}: ${e.message}`); } }
    check('every input schema compiles with the SDK\'s Ajv validator', broken.length === 0, broken.join('; '));
    if (!broken.length) {
      const v = ajv.getValidator(by.file_read.inputSchema);
      check('Ajv agrees with the server on file_read arguments', v({ path: 'x' }).valid && !v({}).valid && !v({ path: 'x', extra: 1 }).valid);
    }
  });

  await step('capabilities not offered', async () => {
    const e = await client.request({ method: 'completion/complete', params: { ref: { type: 'ref/prompt', name: 'tool-descriptions' }, argument: { name: 'x', value: '' } } }, EmptyResultSchema).then(() => null, (err) => err);
    check('completion/complete → -32601 method not found', e && e.code === -32601, String(e));
  });

  await step('resources', async () => {
    const caps = client.getServerCapabilities() ?? {};
    check('capabilities advertise resources with subscribe', caps.resources?.subscribe === true, j(caps.resources));
    const r = await client.request({ method: 'resources/list', params: {} }, ListResourcesResultSchema);
    const hello = r.resources.find((x) => x.name === 'hello.txt');
    check('resources/list names hello.txt by its file:// URI', hello?.uri === `file://${root}/hello.txt`, j(r.resources));
    const read = hello && await client.readResource({ uri: hello.uri });
    check('resources/read returns its text', read?.contents?.[0]?.text === 'hello from the sdk check\n', j(read?.contents));
  });

  await step('prompts', async () => {
    const { prompts } = await client.listPrompts();
    check('prompts/list offers tool-descriptions', prompts.some((p) => p.name === 'tool-descriptions'), j(prompts));
    const p = await client.getPrompt({ name: 'tool-descriptions' });
    const text = p.messages?.[0]?.content?.text ?? '';
    check('tool-descriptions is a user text message', p.messages?.[0]?.role === 'user' && p.messages[0].content.type === 'text', j(p.messages?.[0]));
    const absent = EXPECTED_TOOLS.filter((n) => !text.includes(`## ${n}`));
    check('tool-descriptions describes every tool', absent.length === 0, `missing ${absent}`);
    const unknown = await client.getPrompt({ name: 'no-such-prompt' }).then(() => null, (e) => e);
    check('unknown prompt is a JSON-RPC error', unknown && typeof unknown.code === 'number', String(unknown));
  });

  await step('logging/setLevel', async () => {
    const r = await client.setLoggingLevel('debug');
    check('logging/setLevel debug answers an empty result', r && Object.keys(r).filter((k) => k !== '_meta').length === 0, j(r));
    const bad = await client.request({ method: 'logging/setLevel', params: { level: 'loud' } }, EmptyResultSchema).then(() => null, (e) => e);
    check('logging/setLevel with an unknown level is refused', bad && bad.code === -32602, String(bad));
    await client.setLoggingLevel('warning');
  });

  await step('file_write + file_read', async () => {
    const content = `line one\nünïcödé ✓ ${Date.now()}\n`;
    const w = await client.callTool({ name: 'file_write', arguments: { path: 'data/round.txt', content } });
    check('file_write succeeds', !w.isError, j(w));
    check('file_write has structuredContent.written', w.structuredContent?.written === Buffer.byteLength(content), j(w.structuredContent));
    check('file_write text equals structuredContent', j(parseBody(w)) === j(w.structuredContent));
    check('file landed in the root', fs.readFileSync(path.join(root, 'data/round.txt'), 'utf8') === content);
    const r = await client.callTool({ name: 'file_read', arguments: { path: 'data/round.txt' } });
    check('file_read returns what was written', !r.isError && r.structuredContent?.content === content, j(r.structuredContent));
  });

  await step('validation error', async () => {
    const r = await client.callTool({ name: 'file_read', arguments: { path: 'hello.txt', encoding: 'latin1' } });
    const body = parseBody(r);
    check('isError is true', r.isError === true, j(r));
    check('body is {code, message, data}', body && body.code === 'VALIDATION_ERROR' && typeof body.message === 'string' && typeof body.data === 'object', j(body));
    check('data names field, value and expected', body?.data?.field === 'encoding' && body.data.value === 'latin1' && body.data.expected !== undefined, j(body?.data));
    check('data.retryable is false', body?.data?.retryable === false, j(body?.data));
    // The SDK checks any structuredContent against the tool's outputSchema,
    // errors included: an error of a tool with one is text only.
    check('an error has no structuredContent (file_read has an outputSchema)', r.structuredContent === undefined, j(r.structuredContent));
    const m = await client.callTool({ name: 'file_read', arguments: {} });
    check('missing required argument names the field', parseBody(m)?.data?.field === 'path', j(parseBody(m)));
    const nf = await client.callTool({ name: 'file_read', arguments: { path: 'nope.txt' } });
    check('missing file is NOT_FOUND', nf.isError && parseBody(nf)?.code === 'NOT_FOUND', j(parseBody(nf)));
    const unk = await client.callTool({ name: 'no_such_tool', arguments: {} }).then((v) => v, (e) => e);
    check('unknown tool is an error (JSON-RPC error or isError)', unk instanceof Error ? typeof unk.code === 'number' : unk.isError === true, String(unk?.message ?? j(unk)));
  });

  await step('progress', async () => {
    // shell_execute reports progress every second while a command runs: block
    // cat on a FIFO for 1.6 s (its time limit) with a progress token.
    const fifo = path.join(root, 'data', 'progress.fifo');
    try { fs.rmSync(fifo, { force: true }); } catch { /* none */ }
    const mk = spawn('mkfifo', [fifo]);
    const code = await new Promise((r) => mk.on('close', r));
    if (code !== 0) { gap('mkfifo unavailable', 'progress not checked'); return; }
    const seen = [];
    const res = await client.callTool({ name: 'shell_execute', arguments: { argv: ['cat', 'data/progress.fifo'], timeout_ms: 1600 } },
      undefined, { onprogress: (p) => seen.push(p), timeout: 20000 });
    fs.rmSync(fifo, { force: true });
    const tokenSent = tap.sent.filter((m) => m.method === 'tools/call' && m.params?._meta?.progressToken !== undefined).length;
    check('client sent a progress token', tokenSent >= 1, `${tokenSent}`);
    check('the command ran into its time limit', res.structuredContent?.timed_out === true, j(res.structuredContent));
    check('shell_execute sent progress while running', seen.length >= 1, j(seen));
    check('progress is seconds elapsed of the limit', seen.every((p) => typeof p.progress === 'number' && p.total === 1.6), j(seen));
  });

  await step('cancellation', async () => {
    const ac = new AbortController();
    const t0 = Date.now();
    const p = client.callTool({ name: 'database_query', arguments: { query: ENDLESS_SQL, timeout_ms: 30000 } },
      undefined, { signal: ac.signal, timeout: 60000 });
    setTimeout(() => ac.abort(new Error('sdk-check: user cancelled')), 300);
    const err = await p.then(() => null, (e) => e);
    const clientMs = Date.now() - t0;
    check('the aborted call rejects on the client', err !== null, 'resolved instead');
    check('the client sees the cancellation within 1 s', clientMs < 1000, `${clientMs} ms`);
    const cancelled = tap.sent.find((m) => m.method === 'notifications/cancelled');
    check('client sent notifications/cancelled', !!cancelled, j(tap.sent.map((m) => m.method)));
    // The server must stop the statement: its audit line says CANCELLED soon.
    const line = await waitFor(() => log.find((l) => l.event === 'tool_call' && l.tool === 'database_query' && l.args?.query === ENDLESS_SQL), 5000);
    check('server audit line for the cancelled call appears within 5 s', !!line, 'no audit line: the statement kept running');
    if (line) {
      check('server classified it CANCELLED', line.error_code === 'CANCELLED', `error_code=${line.error_code}`);
      const ms = typeof line.duration === 'number' ? line.duration : NaN;
      check('server stopped the statement within 2 s', ms < 2000, `duration ${line.duration}`);
    }
    const id = tap.sent.find((m) => m.method === 'tools/call' && m.params?.arguments?.query === ENDLESS_SQL)?.id;
    await sleep(200);
    check('server sent no response for the cancelled request (spec: SHOULD NOT)', !tap.response(id), j(tap.response(id)));
    const t1 = Date.now();
    const next = await client.callTool({ name: 'database_query', arguments: { query: 'SELECT 41+1 AS answer' } });
    check('next call works after cancelling', !next.isError && j(next.structuredContent?.rows) === j([[42]]), j(next.structuredContent));
    check('next call is fast', Date.now() - t1 < 2000, `${Date.now() - t1} ms`);
  });

  await step('cancellation of a running command', async () => {
    // cat on a FIFO that nobody writes blocks forever: the command must be killed.
    const fifo = path.join(root, 'data', 'never.fifo');
    try { fs.rmSync(fifo, { force: true }); } catch { /* none */ }
    const mk = spawn('mkfifo', [fifo]);
    const [code] = await once(mk, 'exit');
    if (code !== 0) { gap('mkfifo unavailable', 'skipped'); return; }
    const ac = new AbortController();
    const p = client.callTool({ name: 'shell_execute', arguments: { argv: ['cat', 'data/never.fifo'], timeout_ms: 60000 } },
      undefined, { signal: ac.signal, timeout: 70000 });
    await sleep(300);
    ac.abort(new Error('sdk-check: cancel the command'));
    check('the aborted command call rejects', (await p.then(() => null, (e) => e)) !== null);
    const line = await waitFor(() => log.find((l) => l.event === 'tool_call' && l.tool === 'shell_execute' && j(l.args?.argv) === j(['cat', 'data/never.fifo'])), 5000);
    check('server ended the command within 5 s', !!line, 'no audit line: the command kept running');
    if (line) check('command call classified CANCELLED', line.error_code === 'CANCELLED', `outcome=${line.outcome} error_code=${line.error_code}`);
    if (fs.existsSync('/proc/self/cmdline')) {
      const left = await waitFor(() => !processesMatching('never.fifo').length, 3000) ? [] : processesMatching('never.fifo');
      check('the command\'s process was killed', left.length === 0, `still running: pids ${left}`);
    }
    const next = await client.callTool({ name: 'shell_execute', arguments: { argv: ['echo', 'still here'] } });
    check('next command works', next.structuredContent?.stdout === 'still here\n', j(next.structuredContent));
    fs.rmSync(fifo, { force: true });
  });

  const logs = tap.received.filter((m) => m.method === 'notifications/message');
  if (!logs.length) gap('no notifications/message ever sent', 'logging is advertised and logging/setLevel accepted, but the server sends no log messages to clients');
  check('the transport reported no errors', tap.errors.length === 0, tap.errors.map(String).join('; '));
  check('the SDK reported no protocol errors (onerror)', client.errors.length === 0, client.errors.map((e) => e.message).join('; '));
}

// ------------------------------------------------------------------- stdio

async function runStdio() {
  section = 'stdio';
  const root = makeRoot('stdio');
  const inner = stdioTransport(root);
  const log = new StderrLog(inner.stderr);
  const tap = new Tap(inner);
  const client = newClient();
  await client.connect(tap);
  const pid = inner.pid;
  try {
    await suite(client, tap, log, root);
  } finally {
    await client.close();
  }
  const gone = await waitFor(() => { try { process.kill(pid, 0); return false; } catch { return true; } }, 3000);
  check('server exits when the client closes stdin', gone);
  check('every stderr line is JSON', log.bad.length === 0, `non-JSON: ${j(log.bad.slice(0, 3))}`);
  check('stderr has the start-up line', !!log.find((l) => l.message === 'serving stdio'), j(log.lines[0]));
  check('stderr lines carry level and time', log.lines.every((l) => l.level && l.time), j(log.lines.find((l) => !(l.level && l.time))));

  // Older protocol versions the SDK still supports: the server echoes them.
  for (const v of SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v !== LATEST_PROTOCOL_VERSION)) {
    await step(`negotiate ${v}`, async () => {
      const t = new Tap(stdioTransport(root), (m) => (m.method === 'initialize' ? { ...m, params: { ...m.params, protocolVersion: v } } : m));
      const c = newClient();
      await c.connect(t);
      const got = t.response(t.sent.find((m) => m.method === 'initialize').id)?.result?.protocolVersion;
      // A server that does not know the version answers with its latest.
      const known = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
      check(`initialize ${v} → ${known.includes(v) ? v : 'the server latest (2025-11-25)'}`, got === (known.includes(v) ? v : '2025-11-25'), `got ${got}`);
      const { tools } = await c.listTools();
      check(`tools/list works under ${v}`, tools.length === 14);
      await c.close();
    });
  }
}

// ------------------------------------------------------------ streamable HTTP

async function runHTTP() {
  section = 'http';
  const root = makeRoot('http');
  const token = `sdk-check-${Math.random().toString(36).slice(2)}${Date.now()}`;
  const srv = await startHTTP(root, token, ['--sse']);
  const url = new URL('/mcp', srv.base);
  const auth = { Authorization: `Bearer ${token}` };
  try {
    const inner = new StreamableHTTPClientTransport(url, { requestInit: { headers: auth } });
    const tap = new Tap(inner);
    const client = newClient();
    await client.connect(tap);
    check('server issued a session id', typeof inner.sessionId === 'string' && inner.sessionId.length >= 16, inner.sessionId);
    check('client uses the negotiated version header', inner.protocolVersion === LATEST_PROTOCOL_VERSION, inner.protocolVersion);
    await suite(client, tap, srv.log, root);

    await step('auth', async () => {
      const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'x', version: '0' } } };
      const hdrs = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const noTok = await fetch(url, { method: 'POST', headers: hdrs, body: j(init) });
      check('POST without a token → 401', noTok.status === 401, `${noTok.status}`);
      check('401 carries WWW-Authenticate: Bearer', /^Bearer/i.test(noTok.headers.get('www-authenticate') ?? ''), noTok.headers.get('www-authenticate'));
      const badTok = await fetch(url, { method: 'POST', headers: { ...hdrs, Authorization: 'Bearer wrong-token-wrong-token' }, body: j(init) });
      check('POST with a wrong token → 401', badTok.status === 401, `${badTok.status}`);
      const c2 = newClient();
      const e = await c2.connect(new StreamableHTTPClientTransport(url)).then(() => null, (err) => err);
      check('SDK client without a token fails to connect with 401', e && (e.code === 401 || /401/.test(String(e.message))), String(e));
      const sessionNoTok = await fetch(url, { method: 'POST', headers: { ...hdrs, 'mcp-session-id': inner.sessionId, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION }, body: j({ jsonrpc: '2.0', id: 9, method: 'tools/list' }) });
      check('a valid session id without the token → 401', sessionNoTok.status === 401, `${sessionNoTok.status}`);
      const health = await fetch(new URL('/healthz', srv.base));
      check('/healthz is open', health.status === 200);
      const metrics = await fetch(new URL('/metrics', srv.base));
      check('/metrics needs the token', metrics.status === 401, `${metrics.status}`);
    });

    await step('sessions', async () => {
      const hdrs = { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };
      const bogus = await fetch(url, { method: 'POST', headers: { ...hdrs, 'mcp-session-id': 'mcp-session-00000000000000000000000000000000' }, body: j({ jsonrpc: '2.0', id: 9, method: 'tools/list' }) });
      check('unknown session id → 404', bogus.status === 404, `${bogus.status} ${await bogus.text()}`);
      const none = await fetch(url, { method: 'POST', headers: hdrs, body: j({ jsonrpc: '2.0', id: 9, method: 'tools/list' }) });
      check('non-initialize request without a session id → 400', none.status === 400, `${none.status} ${await none.text()}`);
      const badVer = await fetch(url, { method: 'POST', headers: { ...hdrs, 'mcp-session-id': inner.sessionId, 'mcp-protocol-version': '1999-01-01' }, body: j({ jsonrpc: '2.0', id: 11, method: 'ping' }) });
      check('unsupported MCP-Protocol-Version header → 400', badVer.status === 400, `${badVer.status}`);
      // The SDK client holds its session's standalone stream already; a
      // second one on the same session is refused, one on a new session opens.
      const getHdrs = (sid) => ({ ...auth, accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION });
      const second = await fetch(url, { headers: getHdrs(inner.sessionId) });
      check('a second GET stream on a session → 409', second.status === 409, `${second.status} ${await second.text()}`);
      const initRes = await fetch(url, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: j({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '0' } } }) });
      const rawSid = initRes.headers.get('mcp-session-id');
      await initRes.text();
      await fetch(url, { method: 'POST', headers: { ...hdrs, 'mcp-session-id': rawSid }, body: j({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
      const ac = new AbortController();
      const get = await fetch(url, { headers: getHdrs(rawSid), signal: ac.signal });
      check('GET opens the standalone SSE stream of a new session', get.status === 200 && (get.headers.get('content-type') ?? '').startsWith('text/event-stream'), `${get.status} ${get.headers.get('content-type')}`);
      ac.abort();
      await fetch(url, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': rawSid } });
      const delNone = await fetch(url, { method: 'DELETE', headers: auth });
      check('DELETE without a session id → 400', delNone.status === 400, `${delNone.status}`);
      const sid = inner.sessionId;
      await inner.terminateSession();
      check('SDK terminateSession (DELETE) clears its session id', inner.sessionId === undefined, inner.sessionId);
      const after = await fetch(url, { method: 'POST', headers: { ...hdrs, 'mcp-session-id': sid }, body: j({ jsonrpc: '2.0', id: 10, method: 'tools/list' }) });
      check('terminated session → 404', after.status === 404, `${after.status}`);
      const del = await fetch(url, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': sid } });
      check('DELETE of a terminated session → 404', del.status === 404, `${del.status}`);
      await client.close();
      // A fresh client after the DELETE works.
      const c3 = newClient();
      const t3 = new StreamableHTTPClientTransport(url, { requestInit: { headers: auth } });
      await c3.connect(t3);
      check('a new session works after DELETE', (await c3.listTools()).tools.length === 14);
      await t3.terminateSession();
      await c3.close();
    });

    await step('legacy SSE (2024-11-05)', async () => {
      const sse = new SSEClientTransport(new URL('/sse', srv.base), { requestInit: { headers: auth } });
      const stap = new Tap(sse);
      const c = newClient();
      await c.connect(stap);
      const init = stap.response(stap.sent.find((m) => m.method === 'initialize').id)?.result;
      check('SSE: initialize negotiates the SDK latest', init?.protocolVersion === LATEST_PROTOCOL_VERSION, init?.protocolVersion);
      check('SSE: 14 tools', (await c.listTools()).tools.length === 14);
      const r = await c.callTool({ name: 'file_read', arguments: { path: 'hello.txt' } });
      check('SSE: file_read', r.structuredContent?.content === 'hello from the sdk check\n', j(r));
      const v = await c.callTool({ name: 'file_read', arguments: { path: 'hello.txt', encoding: 'latin1' } });
      check('SSE: validation error body', v.isError && parseBody(v)?.code === 'VALIDATION_ERROR');
      const ac = new AbortController();
      const p = c.callTool({ name: 'database_query', arguments: { query: ENDLESS_SQL + ' -- sse', timeout_ms: 30000 } }, undefined, { signal: ac.signal });
      setTimeout(() => ac.abort(), 300);
      await p.catch(() => {});
      const line = await waitFor(() => srv.log.find((l) => l.event === 'tool_call' && l.args?.query === ENDLESS_SQL + ' -- sse'), 5000);
      check('SSE: cancellation stops the statement', line?.error_code === 'CANCELLED', j(line && { error_code: line.error_code, duration: line.duration }));
      const sid = stap.sent.find((m) => m.method === 'tools/call' && m.params?.arguments?.query === ENDLESS_SQL + ' -- sse')?.id;
      await sleep(200);
      check('SSE: no response for the cancelled request', !stap.response(sid), j(stap.response(sid)));
      check('SSE: server usable after cancel', !(await c.callTool({ name: 'database_query', arguments: { query: 'SELECT 1' } })).isError);
      const noTok = await fetch(new URL('/sse', srv.base), { headers: { accept: 'text/event-stream' } });
      check('SSE: /sse without a token → 401', noTok.status === 401, `${noTok.status}`);
      check('SSE: the transport reported no errors', stap.errors.length === 0, stap.errors.map(String).join('; '));
      check('SSE: the SDK reported no protocol errors', c.errors.length === 0, c.errors.map((e) => e.message).join('; '));
      await c.close();
    });
  } finally {
    const { code, ms } = await srv.stop();
    check('server exits 0 on SIGTERM', code === 0, `exit ${code}`);
    check('server exits within 2 s of SIGTERM (no call in flight)', ms < 2000, `${ms} ms`);
    check('nothing on stdout in HTTP mode', srv.stdout() === '', srv.stdout().slice(0, 200));
    check('every stderr line is JSON', srv.log.bad.length === 0, j(srv.log.bad.slice(0, 3)));
    check('the token never appears in the log', !srv.log.lines.some((l) => j(l).includes(token)));
  }
}

// -------------------------------------------------------------------- main

const deadline = setTimeout(() => { console.error('sdk-check: overall time limit (90 s) exceeded'); process.exit(2); }, 90000);
deadline.unref();
if (!fs.existsSync(BIN)) { console.error(`sdk-check: ${BIN} not found; run make build`); process.exit(2); }
console.log(`sdk-check: @modelcontextprotocol/sdk ${SDK_VERSION} (latest protocol ${LATEST_PROTOCOL_VERSION}) against ${BIN}`);
const t0 = Date.now();
try {
  await runStdio();
  await runHTTP();
  await runResources({
    bin: BIN, here, check, step, j, waitFor, makeRoot, serverEnv, newClient, StderrLog, children,
    setSection: (name) => { section = name; },
  });
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
const failed = results.filter((r) => r.status === 'fail');
const gaps = results.filter((r) => r.status === 'gap');
console.log(`\nsdk-check: ${results.length - failed.length - gaps.length} passed, ${failed.length} failed, ${gaps.length} gaps, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
for (const f of failed) console.log(`  FAIL ${f.name}${f.detail ? ` — ${f.detail}` : ''}`);
for (const g of gaps) console.log(`  GAP  ${g.name} — ${g.detail}`);
process.exit(failed.length ? 1 : 0);
