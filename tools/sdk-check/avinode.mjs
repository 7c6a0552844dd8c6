// Drives bin/avinode-mcp with the official TypeScript MCP SDK client, as a
// user's MCP client would, over stdio and streamable HTTP, through a whole
// trip's lifecycle on the simulated marketplace (no credentials): find the
// airports, create the trip, subscribe to its quotes and hear them arrive
// (the operators' answers travel as webhook pointer events the server
// processes itself), list those events, read the quotes as a tool and as a
// resource, message an operator and read the reply, refuse bad input, cancel
// the trip.
//
//   cd tools/sdk-check && npm ci && node avinode.mjs [path/to/avinode-mcp]
//
// Exit status 0 when every check passes. SDK_CHECK_VERBOSE=1 prints server
// stderr.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.resolve(process.argv[2] ?? path.join(here, '../../bin/avinode-mcp'));
const SDK_VERSION = JSON.parse(fs.readFileSync(path.join(here, 'node_modules/@modelcontextprotocol/sdk/package.json'), 'utf8')).version;
const VERBOSE = process.env.SDK_CHECK_VERBOSE === '1';
const EXPECTED_TOOLS = [
  'cancel_trip', 'create_trip', 'create_watch', 'delete_watch', 'find_trips', 'get_messages', 'get_quotes', 'get_rfq', 'get_trip',
  'list_watches', 'list_webhook_events', 'requeue_webhook_event', 'search_airports', 'search_empty_legs', 'send_message',
];

// ---------------------------------------------------------------- reporting

const results = [];
let section = '';
function record(ok, name, detail) {
  results.push({ ok, name: `${section}: ${name}` });
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${section}: ${name}${!ok && detail ? ` — ${detail}` : ''}`);
}
function check(name, cond, detail = '') { record(!!cond, name, detail); return !!cond; }
async function step(name, fn) {
  try { await fn(); } catch (e) { record(false, name, `threw ${e?.stack ?? e}`); }
}
const j = (v) => JSON.stringify(v);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function waitFor(pred, ms, every = 50) {
  const end = Date.now() + ms;
  while (Date.now() < end) { const v = await pred(); if (v) return v; await sleep(every); }
  return pred();
}

// ----------------------------------------------------------- server fixtures

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-check-avinode-'));
function serverEnv(name) {
  const data = path.join(scratch, name);
  fs.mkdirSync(data, { recursive: true });
  // The simulated marketplace, its operators answering within seconds.
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: data, MCP_DATA_DIR: data, MCP_LOG_LEVEL: 'debug',
    AVINODE_MOCK_FIRST_RESPONSE: '1s', AVINODE_MOCK_RESPONSE_WINDOW: '4s',
  };
}

function logLines(stream, sink) {
  readline.createInterface({ input: stream }).on('line', (line) => {
    if (VERBOSE) console.error(`  [server] ${line}`);
    try { sink.push(JSON.parse(line)); } catch { sink.bad = (sink.bad ?? 0) + 1; }
  });
}

const children = new Set();
process.on('exit', () => { for (const c of children) { try { c.kill('SIGKILL'); } catch { /* gone */ } } });

async function startHTTP(token) {
  const child = spawn(BIN, ['--transport', 'http', '--port', '0'], {
    env: { ...serverEnv('http'), MCP_AUTH_TOKEN: token }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const log = [];
  logLines(child.stderr, log);
  const ready = await waitFor(() => log.find((l) => l.addr), 10000);
  if (!ready) { child.kill('SIGKILL'); throw new Error('the HTTP server did not report its address'); }
  return {
    base: `http://${ready.addr}`,
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
      const [code] = await once(child, 'exit');
      clearTimeout(timer);
      return code;
    },
  };
}

// ------------------------------------------------------------ the lifecycle

function body(res) {
  if (res?.structuredContent) return res.structuredContent;
  try { return JSON.parse(res?.content?.find((c) => c.type === 'text')?.text); } catch { return undefined; }
}

function inDays(n) {
  const d = new Date(Date.now() + n * 86400000);
  d.setUTCHours(14, 0, 0, 0);
  return d.toISOString().replace('.000Z', 'Z');
}

async function lifecycle(client) {
  const updates = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updates.push(n.params.uri); });

  await step('initialize', async () => {
    check('serverInfo names avinode', client.getServerVersion()?.name === 'avinode', j(client.getServerVersion()));
    const caps = client.getServerCapabilities() ?? {};
    check('resources with subscribe', caps.resources?.subscribe === true, j(caps));
  });

  await step('tools/list', async () => {
    const { tools } = await client.listTools();
    check('the fifteen avinode tools', j(tools.map((t) => t.name).sort()) === j(EXPECTED_TOOLS), j(tools.map((t) => t.name)));
    const hints = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'];
    check('every tool states its four hints', tools.every((t) => hints.every((h) => typeof t.annotations?.[h] === 'boolean')));
    const ct = tools.find((t) => t.name === 'create_trip');
    check('create_trip requires the common-case arguments',
      j([...(ct?.inputSchema?.required ?? [])].sort()) === j(['arrival_airport', 'departure_airport', 'departure_date', 'passengers']),
      j(ct?.inputSchema?.required));
  });

  let from; let to;
  await step('search_airports', async () => {
    from = body(await client.callTool({ name: 'search_airports', arguments: { query: 'teterboro' } }))?.airports?.[0]?.icao;
    to = body(await client.callTool({ name: 'search_airports', arguments: { query: 'van nuys' } }))?.airports?.[0]?.icao;
    check('Teterboro is KTEB, Van Nuys KVNY', from === 'KTEB' && to === 'KVNY', `${from} ${to}`);
  });

  let trip;
  await step('create_trip', async () => {
    const res = await client.callTool({ name: 'create_trip', arguments: {
      departure_airport: from ?? 'KTEB', arrival_airport: to ?? 'KVNY', passengers: 6, departure_date: inDays(3) } });
    trip = body(res);
    check('a trip id atrip-…', /^atrip-\d+$/.test(trip?.trip_id ?? ''), j(trip));
    check('next_action OPEN_AVINODE with a deep link', trip?.next_action === 'OPEN_AVINODE' && trip?.deep_link?.startsWith('https://'));
    check('the three deep links', trip?.deep_links?.search_in_avinode && trip?.deep_links?.view_in_avinode && trip?.deep_links?.cancel);
    check('operators were asked', trip?.operators_asked > 0, j(trip?.operators_asked));
  });
  if (!trip?.trip_id) return;
  const tripURI = `avinode://trips/${trip.trip_id}`;
  const quotesURI = `${tripURI}/quotes`;

  await step('subscribe and hear the first quote', async () => {
    await client.subscribeResource({ uri: quotesURI });
    await client.subscribeResource({ uri: tripURI });
    const heard = await waitFor(() => updates.includes(quotesURI), 15000);
    check(`notifications/resources/updated for ${quotesURI}`, heard, j(updates));
  });

  let quotes;
  await step('get_quotes', async () => {
    quotes = await waitFor(async () => {
      const q = body(await client.callTool({ name: 'get_quotes', arguments: { trip_id: trip.trip_id } }));
      return q?.quote_status?.pending === 0 || q?.quote_status?.responded === q?.quote_status?.operators_asked ? q : undefined;
    }, 15000, 500);
    quotes ??= body(await client.callTool({ name: 'get_quotes', arguments: { trip_id: trip.trip_id } }));
    const q = quotes?.quotes?.[0];
    check('at least one quote', quotes?.total > 0, j(quotes?.quote_status));
    check('operator, aircraft, tail, price and validity', q?.operator_name && q?.aircraft_type && q?.aircraft_tail &&
      q?.total_price > 0 && q?.currency && q?.valid_until, j(q));
    check('base plus taxes and fees is the total', Math.abs(q?.base_price + q?.taxes_fees - q?.total_price) < 0.01, j(q));
    check('response times', quotes?.quote_status?.first_response_time_minutes !== undefined, j(quotes?.quote_status));
  });

  await step('webhook events', async () => {
    // The simulated operators' answers travelled as webhook pointers that
    // the server's processor fetched.
    const ev = await waitFor(async () => {
      const l = body(await client.callTool({ name: 'list_webhook_events', arguments: { trip_id: trip.trip_id, status: 'completed' } }));
      return l?.total > 0 ? l : undefined;
    }, 10000, 300);
    check('completed pointer events from the simulation', ev?.events?.every((e) => e.source === 'mock' && e.trip_id === trip.trip_id),
      j(ev?.events?.map((e) => [e.event_type, e.status])));
    check('quote_received among them', ev?.events?.some((e) => e.event_type === 'quote_received'), j(ev?.events?.map((e) => e.event_type)));
    check('nothing in the dead letter', ev?.queue?.dead_letter === 0, j(ev?.queue));
    const rq = await client.callTool({ name: 'requeue_webhook_event', arguments: { event_id: ev?.events?.[0]?.event_id } });
    const rqe = JSON.parse(rq.content?.[0]?.text ?? '{}');
    check('a completed event cannot be requeued: CONFLICT', rq.isError && rqe.code === 'CONFLICT', j(rqe));
  });

  await step('resources', async () => {
    const read = await client.readResource({ uri: quotesURI });
    const doc = JSON.parse(read.contents?.[0]?.text ?? 'null');
    check('the quotes resource holds the quotes', doc?.trip_id === trip.trip_id && doc?.total === quotes?.total, j(doc?.total));
    const tripDoc = JSON.parse((await client.readResource({ uri: tripURI })).contents?.[0]?.text ?? 'null');
    check('the trip resource', tripDoc?.trip_id === trip.trip_id && tripDoc?.status === 'open', j(tripDoc?.status));
    const { resources } = await client.listResources();
    check('resources/list names the trip', resources.some((r) => r.uri === tripURI), j(resources.map((r) => r.uri)));
    const { resourceTemplates } = await client.listResourceTemplates();
    check('two resource templates', resourceTemplates.length === 2, j(resourceTemplates.map((t) => t.uriTemplate)));
  });

  await step('message and reply', async () => {
    const rfq = quotes?.quotes?.[0]?.rfq_id;
    const sent = body(await client.callTool({ name: 'send_message', arguments: { rfq_id: rfq, message: 'Is catering included?' } }));
    check('send_message stores the message', /^abuyermsg-\d+$/.test(sent?.message_id ?? ''), j(sent));
    const thread = await waitFor(async () => {
      const t = body(await client.callTool({ name: 'get_messages', arguments: { rfq_id: rfq } }));
      return t?.messages?.some((m) => m.from === 'seller') ? t : undefined;
    }, 10000, 300);
    check('the operator replied', thread?.messages?.at(-1)?.from === 'seller', j(thread?.messages));
  });

  await step('bad input', async () => {
    const res = await client.callTool({ name: 'create_trip', arguments: {
      departure_airport: 'kteb', arrival_airport: 'KVNY', passengers: 6, departure_date: inDays(3) } });
    const err = JSON.parse(res.content?.[0]?.text ?? '{}');
    check('lower-case ICAO: VALIDATION_ERROR naming departure_airport', res.isError && err.code === 'VALIDATION_ERROR' &&
      err.data?.field === 'departure_airport', j(err));
    const nf = await client.callTool({ name: 'get_trip', arguments: { trip_id: 'atrip-1' } });
    const nfe = JSON.parse(nf.content?.[0]?.text ?? '{}');
    check('unknown trip: NOT_FOUND naming trip_id', nf.isError && nfe.code === 'NOT_FOUND' && nfe.data?.field === 'trip_id', j(nfe));
  });

  await step('cancel_trip', async () => {
    const c = body(await client.callTool({ name: 'cancel_trip', arguments: { trip_id: trip.trip_id, reason: 'BY_CLIENT',
      message_to_sellers: 'The client changed plans.' } }));
    check('the trip is cancelled', c?.status === 'cancelled' && c?.cancel_reason === 'BY_CLIENT', j(c?.status));
    check('no RFQ is left open', c?.rfqs?.every((r) => r.status === 'cancelled' || r.status === 'declined'), j(c?.rfqs));
    const t = body(await client.callTool({ name: 'get_trip', arguments: { trip_id: trip.trip_id } }));
    check('get_trip agrees', t?.status === 'cancelled', j(t?.status));
  });
}

// ---------------------------------------------------------------- transports

async function main() {
  console.log(`avinode-mcp ${BIN} with @modelcontextprotocol/sdk ${SDK_VERSION}`);
  if (!fs.existsSync(BIN)) { console.error(`no binary at ${BIN}; run make build`); process.exit(2); }

  section = 'stdio';
  await step('lifecycle', async () => {
    const transport = new StdioClientTransport({ command: BIN, args: [], env: serverEnv('stdio'), stderr: 'pipe' });
    const log = [];
    logLines(transport.stderr, log);
    const client = new Client({ name: 'mcp-fleet-sdk-check', version: '1.0.0' }, { capabilities: {} });
    await client.connect(transport);
    await lifecycle(client);
    await client.close();
    check('stderr is JSON log lines only', !log.bad, `${log.bad} bad lines`);
    check('an audit line per call', log.some((l) => l.event === 'tool_call' && l.tool === 'create_trip'));
  });

  section = 'http';
  await step('lifecycle', async () => {
    const token = `sdk-check-${Math.random().toString(36).slice(2)}-token`;
    const srv = await startHTTP(token);
    const client = new Client({ name: 'mcp-fleet-sdk-check', version: '1.0.0' }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${srv.base}/mcp`),
      { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    await lifecycle(client);
    await client.close();
    check('SIGTERM: clean exit', (await srv.stop()) === 0);
  });

  const failed = results.filter((r) => !r.ok);
  console.log(`\n${results.length - failed.length} passed, ${failed.length} failed`);
  fs.rmSync(scratch, { recursive: true, force: true });
  process.exit(failed.length ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(1); });
