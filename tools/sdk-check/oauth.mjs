// OAuth 2.1 end to end: a real authorization server (oidc-provider, in this
// process, on 127.0.0.1) in front of all five servers over streamable HTTP,
// each started with MCP_OAUTH_* and a policy whose `identities:` map the test
// users to agents of configs/acl.yaml.
//
// For each server, the official TypeScript SDK client runs its own flow with
// a headless OAuthClientProvider: 401 → protected resource metadata → AS
// metadata → dynamic client registration → PKCE authorization (followed here
// with a cookie jar, login and consent given automatically) → finishAuth →
// reconnect, then calls a read-only tool as the agent its identity maps to.
// Then, on the same session, tokens that must not get in: one for another
// server (wrong audience), an expired one, one from a second issuer, alg
// none, one signed with a foreign key, one without the required scope, and
// one whose identity maps to no agent; each gets its 401 or 403 with the
// expected WWW-Authenticate, the server logs the refusal with its reason,
// and its audit log shows that the tool did not run. A client holding a
// token without the required scope is sent back to authorize for it (the
// SDK's 403 insufficient_scope handling). The metadata at both well-known
// paths, the exact challenge of a request without a token, and a static
// agent token (MCP_AGENT_TOKENS) beside OAuth are checked as well. The
// table at the end lists every flow tried.
//
//   make build && cd tools/sdk-check && npm ci && node oauth.mjs [path/to/bin]
//
// Exit status 0 when every check passes. SDK_CHECK_VERBOSE=1 prints server
// stderr and the authorization server's redirects.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as jose from 'jose';

import { j, sleep, waitFor } from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.resolve(process.argv[2] ?? path.join(here, '../../bin'));
const VERBOSE = process.env.SDK_CHECK_VERBOSE === '1';
const t0 = Date.now();

// oidc-provider warns at start that it runs on its development defaults
// (in-memory storage, Node 20): true of a throwaway test server, and noise here.
const warn = console.warn;
console.warn = (...a) => { if (!String(a[0]).includes('oidc-provider WARNING')) warn(...a); };
const { default: Provider } = await import('oidc-provider');

// The scopes the servers advertise and require. fleet:orchestrator is
// advertised by supabase only: the policy maps whoever holds it there.
const TOOLS_SCOPE = 'mcp:tools';
const OTHER_SCOPE = 'mcp:other';
const ORCH_SCOPE = 'fleet:orchestrator';

// The test users of the authorization server and the groups claim each gets.
const ACCOUNTS = {
  alice: [], bob: ['flight-desk'], carol: ['mail-desk'], dave: ['client-desk'], erin: [], mallory: ['visitors'],
};

// Each server, the user who signs in to it, the agent of configs/acl.yaml
// that identity maps to, and a read-only tool that agent may call.
const SERVERS = [
  { name: 'devtools', account: 'alice', agent: 'developer', tool: 'system_info', args: {} },
  { name: 'avinode', account: 'bob', agent: 'flight_search', tool: 'search_airports', args: { query: 'teterboro' } },
  { name: 'gmail', account: 'carol', agent: 'communication', tool: 'list_templates', args: {} },
  { name: 'sheets', account: 'dave', agent: 'client_data', tool: 'list_clients', args: { limit: 2 } },
  { name: 'supabase', account: 'erin', agent: 'orchestrator', tool: 'supabase_list_tables', args: {}, scopes: [TOOLS_SCOPE, ORCH_SCOPE] },
];

// The identities block appended to the shipped policy: one rule per kind of
// matcher (subject, groups, subject and groups, scopes). mallory matches none.
const IDENTITIES = `
identities:
  - subject: alice
    agent: developer
  - groups: [flight-desk]
    agent: flight_search
  - groups: [mail-desk]
    agent: communication
  - subject: dave
    groups: [client-desk]
    agent: client_data
  - scopes: [${ORCH_SCOPE}]
    agent: orchestrator
`;

// ------------------------------------------------------------ reporting

let failed = 0;
const rows = [];
function record(server, flow, expected, got, ok) {
  rows.push({ server, flow, expected, got, ok: !!ok });
  if (!ok) failed++;
  if (VERBOSE || !ok) console.log(`${ok ? 'ok  ' : 'FAIL'} ${server}: ${flow} — expected ${expected}, got ${got}`);
  return !!ok;
}
async function step(server, flow, fn) {
  try { await fn(); } catch (e) { record(server, flow, 'no exception', `threw ${e?.stack ?? e}`, false); }
}
function printTable() {
  const head = { server: 'server', flow: 'flow', expected: 'expected', got: 'got', ok: 'result' };
  const cols = ['server', 'flow', 'expected', 'got'];
  const cell = (r, c) => String(r[c]).slice(0, 150);
  const w = Object.fromEntries(cols.map((c) => [c, Math.max(...[head, ...rows].map((r) => cell(r, c).length))]));
  const line = (r, res) => `${cols.map((c) => cell(r, c).padEnd(w[c])).join('  ')}  ${res}`;
  console.log(line(head, 'result'));
  console.log(cols.map((c) => '-'.repeat(w[c])).join('  ') + '  ------');
  for (const r of rows) console.log(line(r, r.ok ? 'pass' : 'FAIL'));
}

// ------------------------------------------------------------ the authorization server

// profiles says, per registered client, which user signs in through it and
// how long its access tokens live: the headless flow has no person to ask.
const profiles = new Map();

// startAS runs an oidc-provider on 127.0.0.1:0 with open dynamic client
// registration, PKCE (required for public clients by default) and resource
// indicators that issue RS256 JWT access tokens for any resource this run
// serves. Login and consent are given at once for the client's user.
async function startAS(name, resources) {
  const server = http.createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const op = new Provider(issuer, {
    cookies: { keys: [crypto.randomBytes(16).toString('hex')] },
    // A resource scope also listed here shows up as a missing OIDC scope
    // too; the consent below grants both kinds.
    scopes: ['openid', 'offline_access', TOOLS_SCOPE, OTHER_SCOPE, ORCH_SCOPE],
    ttl: { Interaction: 300, Session: 300, Grant: 300, AuthorizationCode: 60,
      AccessToken: (ctx, token) => token.resourceServer?.accessTokenTTL ?? 300 },
    findAccount: async (ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => undefined,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (ctx, resource, client) => {
          if (!resources.has(resource)) throw new Provider.errors.InvalidTarget(`unknown resource ${resource}`);
          return {
            scope: [TOOLS_SCOPE, OTHER_SCOPE, ORCH_SCOPE].join(' '),
            accessTokenFormat: 'jwt',
            accessTokenTTL: profiles.get(client.clientId)?.ttl ?? 300,
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    extraTokenClaims: async (ctx, token) => (token.accountId ? { groups: ACCOUNTS[token.accountId] ?? [] } : undefined),
    interactions: { url: (ctx, i) => `/interaction/${i.uid}` },
  });
  const callback = op.callback();
  server.on('request', async (req, res) => {
    if (!req.url.startsWith('/interaction/')) return callback(req, res);
    try {
      const d = await op.interactionDetails(req, res);
      const account = profiles.get(d.params.client_id)?.account;
      if (!account) throw new Error(`no test user for client ${d.params.client_id}`);
      const grant = d.grantId ? await op.Grant.find(d.grantId) : new op.Grant({ accountId: account, clientId: d.params.client_id });
      const missing = d.prompt.details;
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
      for (const [ind, sc] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(ind, sc.join(' '));
      const grantId = await grant.save();
      await op.interactionFinished(req, res, { login: { accountId: account }, consent: { grantId } }, { mergeWithLastSubmission: false });
    } catch (e) {
      res.statusCode = 500;
      res.end(`interaction failed: ${e.message}`);
    }
  });
  const meta = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
  const jwks = await (await fetch(meta.jwks_uri)).json();
  return { name, issuer, meta, jwks, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
}

// followAuthorization plays the user agent from the authorization URL to
// the redirect back to the client, keeping oidc-provider's interaction
// cookies, and returns the code (checking the RFC 9207 iss).
async function followAuthorization(url, redirectUrl, issuer) {
  const jar = new Map();
  let next = url.toString();
  for (let i = 0; i < 12; i++) {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(next, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    for (const c of res.headers.getSetCookie()) {
      const kv = c.split(';')[0];
      const eq = kv.indexOf('=');
      jar.set(kv.slice(0, eq).trim(), kv.slice(eq + 1));
    }
    const loc = res.headers.get('location');
    if (VERBOSE) console.error(`  [as] ${res.status} ${next} → ${loc}`);
    if (!loc) throw new Error(`authorization stopped with ${res.status} at ${next}: ${(await res.text()).slice(0, 300)}`);
    await res.arrayBuffer();
    next = new URL(loc, next).toString();
    if (next.startsWith(redirectUrl)) {
      const u = new URL(next);
      if (u.searchParams.get('error')) throw new Error(`authorization error: ${u.searchParams.get('error')}: ${u.searchParams.get('error_description')}`);
      if (u.searchParams.get('iss') !== issuer) throw new Error(`authorization response iss ${u.searchParams.get('iss')}, want ${issuer}`);
      return u.searchParams.get('code');
    }
  }
  throw new Error('authorization did not come back to the client within 12 redirects');
}

const REDIRECT_URL = 'http://127.0.0.1:9/callback';

// HeadlessProvider is the SDK's OAuthClientProvider for a client with no
// browser: it keeps everything in memory and answers the authorization
// redirect by following it itself.
class HeadlessProvider {
  constructor(account, issuer) { this.account = account; this.issuer = issuer; this.code = undefined; }
  get redirectUrl() { return REDIRECT_URL; }
  get clientMetadata() {
    return {
      client_name: `sdk-check oauth ${this.account}`, redirect_uris: [REDIRECT_URL],
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() { return this.client; }
  saveClientInformation(info) { this.client = info; profiles.set(info.client_id, { account: this.account }); }
  tokens() { return this.saved; }
  saveTokens(t) { this.saved = t; }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
  async redirectToAuthorization(url) {
    this.authorizeURL = url;
    this.code = await followAuthorization(url, REDIRECT_URL, this.issuer);
  }
}

// mint gets an access token the way a client would (registration, PKCE
// authorization, code exchange) with what the SDK's flow does not choose:
// another user, another resource, a narrower scope, a short lifetime.
async function mint(as, { account, resource, scope, ttl }) {
  const reg = await (await fetch(as.meta.registration_endpoint, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: j({ client_name: `sdk-check mint ${account}`, redirect_uris: [REDIRECT_URL], token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'], response_types: ['code'] }),
  })).json();
  if (!reg.client_id) throw new Error(`registration failed: ${j(reg)}`);
  profiles.set(reg.client_id, { account, ttl });
  const verifier = crypto.randomBytes(32).toString('base64url');
  const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
  const u = new URL(as.meta.authorization_endpoint);
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: reg.client_id, redirect_uri: REDIRECT_URL, scope,
    resource, code_challenge: challenge, code_challenge_method: 'S256', state: crypto.randomUUID() })) u.searchParams.set(k, v);
  const code = await followAuthorization(u, REDIRECT_URL, as.issuer);
  const tok = await (await fetch(as.meta.token_endpoint, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URL, client_id: reg.client_id, code_verifier: verifier, resource }),
  })).json();
  if (!tok.access_token) throw new Error(`token request failed: ${j(tok)}`);
  return tok.access_token;
}

// ------------------------------------------------------------ the servers

const children = new Set();
process.on('exit', () => { for (const c of children) { try { c.kill('SIGKILL'); } catch { /* gone */ } } });

async function freePort() {
  const s = net.createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

// startServer runs bin/<name>-mcp over HTTP on a free port (the resource
// URI names the port, so it is chosen before the start) with OAuth, the
// policy and a static token for the same agent.
async function startServer(spec, as, scratch, acl) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const data = path.join(scratch, spec.name);
  fs.mkdirSync(data, { recursive: true });
  const staticToken = `static-${spec.name}-${crypto.randomBytes(12).toString('hex')}`;
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: data, MCP_DATA_DIR: data, MCP_LOG_LEVEL: 'info',
    MCP_OAUTH_ISSUER: as.issuer,
    MCP_OAUTH_RESOURCE: `${base}/mcp`,
    MCP_OAUTH_SCOPES: (spec.scopes ?? [TOOLS_SCOPE]).join(','),
    MCP_OAUTH_REQUIRED_SCOPES: TOOLS_SCOPE,
    // No leeway: a token is expired one second after its exp.
    MCP_OAUTH_CLOCK_SKEW: '0s',
    MCP_AGENT_TOKENS: `${spec.agent}=${staticToken}`,
  };
  const args = ['--transport', 'http', '--port', String(port), '--acl', acl];
  if (spec.name === 'devtools') args.push('--root', data);
  const child = spawn(path.join(BIN, `${spec.name}-mcp`), args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const lines = [];
  const raw = [];
  readline.createInterface({ input: child.stderr }).on('line', (line) => {
    if (VERBOSE) console.error(`  [${spec.name}] ${line}`);
    raw.push(line);
    try { lines.push(JSON.parse(line)); } catch { /* kept in raw */ }
  });
  const end = Date.now() + 10000;
  while (Date.now() < end && !lines.some((l) => l.addr) && child.exitCode === null) await sleep(20);
  if (!lines.some((l) => l.addr)) {
    child.kill('SIGKILL');
    throw new Error(`${spec.name} did not start (exit ${child.exitCode}): ${raw.slice(-5).join(' | ')}`);
  }
  return {
    ...spec, base, url: new URL(`${base}/mcp`), resource: `${base}/mcp`, lines, staticToken,
    toolCalls: () => lines.filter((l) => l.event === 'tool_call' && l.tool === spec.tool),
    stop: () => { child.kill('SIGTERM'); },
  };
}

const newClient = () => new Client({ name: 'mcp-fleet-sdk-check-oauth', version: '1.0.0' }, { capabilities: {} });

// sdkFlow is the SDK client's own OAuth flow against the server, ending in
// a connected client and the provider that holds its tokens.
async function sdkFlow(srv, as) {
  const provider = new HeadlessProvider(srv.account, as.issuer);
  const first = newClient();
  let redirected = false;
  try {
    await first.connect(new StreamableHTTPClientTransport(srv.url, { authProvider: provider }));
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
    redirected = true;
  }
  if (!redirected) throw new Error('connect without a token did not ask for authorization');
  if (!provider.code) throw new Error('no authorization code came back');
  const transport = new StreamableHTTPClientTransport(srv.url, { authProvider: provider });
  await transport.finishAuth(provider.code);
  const client = newClient();
  await client.connect(new StreamableHTTPClientTransport(srv.url, { authProvider: provider }));
  return { client, provider };
}

// rawCall posts a tools/call on an open session with the given bearer
// token and returns the status, the challenge and the body.
async function rawCall(srv, session, token, protocolVersion) {
  const headers = {
    'content-type': 'application/json', accept: 'application/json, text/event-stream',
    'mcp-session-id': session, 'mcp-protocol-version': protocolVersion,
  };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const res = await fetch(srv.url, {
    method: 'POST', headers,
    body: j({ jsonrpc: '2.0', id: 99, method: 'tools/call', params: { name: srv.tool, arguments: srv.args } }),
  });
  return { status: res.status, www: res.headers.get('www-authenticate') ?? '', body: await res.text() };
}

// challenge parses a Bearer WWW-Authenticate value into its parameters.
function challenge(www) {
  const m = /^Bearer\s+(.*)$/i.exec(www.trim());
  if (!m) return {};
  const out = {};
  for (const p of m[1].matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/gi)) out[p[1]] = p[2];
  return out;
}

// ------------------------------------------------------------ forged tokens

const b64 = (v) => Buffer.from(j(v)).toString('base64url');
function parts(token) {
  const [h, p] = token.split('.');
  return { header: JSON.parse(Buffer.from(h, 'base64url')), payload: JSON.parse(Buffer.from(p, 'base64url')) };
}
const algNone = (token) => `${b64({ alg: 'none', typ: 'at+jwt' })}.${b64(parts(token).payload)}.`;
// foreignKey signs a good token's claims again, with its kid, under a key
// the authorization server never published.
async function foreignKey(token, key) {
  const { header, payload } = parts(token);
  return new jose.SignJWT(payload).setProtectedHeader({ alg: 'RS256', typ: header.typ, kid: header.kid }).sign(key);
}

// ------------------------------------------------------------ the run

async function main() {
  for (const s of SERVERS) {
    if (!fs.existsSync(path.join(BIN, `${s.name}-mcp`))) {
      console.error(`no server binary at ${path.join(BIN, `${s.name}-mcp`)}; run make build (or pass the bin directory)`);
      process.exit(2);
    }
  }
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-check-oauth-'));
  const acl = path.join(scratch, 'acl.yaml');
  fs.writeFileSync(acl, fs.readFileSync(path.join(here, '../../configs/acl.yaml'), 'utf8') + IDENTITIES);

  const resources = new Set();
  const as = await startAS('main', resources);
  const other = await startAS('second', resources);
  const foreign = (await jose.generateKeyPair('RS256')).privateKey;
  const servers = await Promise.all(SERVERS.map((s) => startServer(s, as, scratch, acl)));
  for (const s of servers) resources.add(s.resource);

  // Short-lived tokens first, so that they have expired when they are used.
  const expiring = await Promise.all(servers.map((s) => mint(as, { account: s.account, resource: s.resource, scope: TOOLS_SCOPE, ttl: 1 })));
  const mintedAt = Date.now();

  try {
    await Promise.all(servers.map((srv, i) => checkServer(srv, servers[(i + 1) % servers.length], as, other, foreign, expiring[i], mintedAt)));
  } finally {
    for (const s of servers) s.stop();
    await as.close();
    await other.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  const order = SERVERS.map((s) => s.name);
  rows.sort((a, b) => order.indexOf(a.server) - order.indexOf(b.server));
  printTable();
  console.log(`${rows.length} flows in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  console.log(failed === 0 ? 'all checks passed' : `${failed} check(s) failed`);
  process.exit(failed === 0 ? 0 : 1);
}

async function checkServer(srv, next, as, other, foreign, expired, mintedAt) {
  const S = srv.name;
  const prm = `${srv.base}/.well-known/oauth-protected-resource`;
  const scopes = srv.scopes ?? [TOOLS_SCOPE];

  await step(S, 'PRM at both well-known paths', async () => {
    for (const p of [`${prm}/mcp`, prm]) {
      const res = await fetch(p);
      const body = res.status === 200 ? await res.json() : {};
      record(S, `PRM GET ${p.slice(srv.base.length)}`, '200, resource, authorization_servers, scopes, CORS *',
        `${res.status} resource=${body.resource} as=${body.authorization_servers} scopes=${body.scopes_supported} cors=${res.headers.get('access-control-allow-origin')}`,
        res.status === 200 && body.resource === srv.resource && j(body.authorization_servers) === j([as.issuer])
        && j(body.scopes_supported) === j(scopes) && res.headers.get('access-control-allow-origin') === '*');
    }
  });

  await step(S, 'no token', async () => {
    const res = await fetch(srv.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: j({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }) });
    const want = `Bearer resource_metadata="${prm}/mcp", scope="${scopes.join(' ')}"`;
    const got = res.headers.get('www-authenticate');
    record(S, 'no token: 401 + exact WWW-Authenticate', `401 ${want}`, `${res.status} ${got}`, res.status === 401 && got === want);
  });

  let session; let protocolVersion; let happy;
  await step(S, 'SDK OAuth flow', async () => {
    happy = await sdkFlow(srv, as);
    const res = await happy.client.callTool({ name: srv.tool, arguments: srv.args });
    // The audit line is written once the answer is out.
    const call = await waitFor(() => srv.toolCalls()[0], 2000);
    const tok = parts(happy.provider.tokens().access_token).payload;
    record(S, `SDK flow (401→PRM→AS→DCR→PKCE→finishAuth) as ${srv.account}, ${srv.tool}`, `ok, audit agent=${srv.agent} auth=oauth sub=${srv.account}`,
      `${res.isError ? 'error' : 'ok'}, audit agent=${call?.agent} auth=${call?.auth} sub=${call?.sub}`,
      !res.isError && call?.agent === srv.agent && call?.auth === 'oauth' && call?.sub === srv.account
      && call?.client_id === happy.provider.clientInformation()?.client_id && tok.aud === srv.resource && tok.iss === as.issuer);
    session = happy.client.transport.sessionId;
    protocolVersion = happy.client.transport.protocolVersion ?? '2025-06-18';
  });
  if (!session) return;

  await step(S, 'static token', async () => {
    const c = newClient();
    await c.connect(new StreamableHTTPClientTransport(srv.url, { requestInit: { headers: { Authorization: `Bearer ${srv.staticToken}` } } }));
    const res = await c.callTool({ name: srv.tool, arguments: srv.args });
    const call = await waitFor(() => srv.toolCalls()[1], 2000);
    record(S, 'static MCP_AGENT_TOKENS token beside OAuth', `ok, audit agent=${srv.agent} auth=token`,
      `${res.isError ? 'error' : 'ok'}, audit agent=${call?.agent} auth=${call?.auth}`, !res.isError && call?.agent === srv.agent && call?.auth === 'token');
    await c.close();
  });

  const ran = srv.toolCalls().length;
  const good = happy.provider.tokens().access_token;
  // Each: how to get the token, the status and error= it must get, and the
  // reasons the server may log for the refusal (a second issuer's key is
  // unknown here before its iss is read).
  const negatives = [
    ['token for another server (wrong aud)', () => mint(as, { account: srv.account, resource: next.resource, scope: TOOLS_SCOPE }), 401, 'invalid_token', ['aud']],
    ['expired token', async () => { await sleep(Math.max(0, mintedAt + 2100 - Date.now())); return expired; }, 401, 'invalid_token', ['exp']],
    ['token from a second issuer', () => mint(other, { account: srv.account, resource: srv.resource, scope: TOOLS_SCOPE }), 401, 'invalid_token', ['kid', 'iss']],
    ['alg none', async () => algNone(good), 401, 'invalid_token', ['alg']],
    ['signed with a foreign key, same kid', () => foreignKey(good, foreign), 401, 'invalid_token', ['sig']],
    [`scope ${OTHER_SCOPE} only (required ${TOOLS_SCOPE})`, () => mint(as, { account: srv.account, resource: srv.resource, scope: OTHER_SCOPE }), 403, 'insufficient_scope', ['scope']],
    ['identity mapped to no agent (mallory)', () => mint(as, { account: 'mallory', resource: srv.resource, scope: TOOLS_SCOPE }), 403, undefined, ['unmapped']],
  ];
  // Concurrently, but reported in this order.
  const results = await Promise.all(negatives.map(async ([flow, get, status, error]) => {
    try {
      return { r: await rawCall(srv, session, await get(), protocolVersion) };
    } catch (e) {
      return { e };
    }
  }));
  const refused = () => srv.lines.filter((l) => l.event === 'auth_refused');
  await waitFor(() => refused().length >= negatives.length, 2000);
  negatives.forEach(([flow, , status, error, reasons], i) => {
    const { r, e } = results[i];
    if (e) return record(S, flow, 'no exception', `threw ${e?.stack ?? e}`, false);
    const ch = challenge(r.www);
    let ok = r.status === status && ch.resource_metadata === `${prm}/mcp` && ch.error === error;
    if (error === 'insufficient_scope') ok &&= (ch.scope ?? '').split(' ').includes(TOOLS_SCOPE);
    const logged = refused().find((l) => reasons.includes(l.reason) && l.status === status);
    const shown = (st, err, scope, reason) => `${st} error=${err ?? '(none)'}${scope ? ` scope="${scope}"` : ''}, logged ${reason}`;
    record(S, flow, shown(status, error, error === 'insufficient_scope' ? `…${TOOLS_SCOPE}` : '', reasons.join('|')),
      shown(r.status, ch.error, ch.scope && ch.error ? ch.scope : '', logged?.reason), ok && logged);
  });

  await step(S, 'nothing ran', async () => {
    await sleep(200);
    const after = srv.toolCalls().length;
    record(S, 'refused requests ran no tool (audit log)', `${ran} tool_call lines`, `${after}`, after === ran);
  });

  // A client holding a token without the required scope: the SDK reads the
  // 403's scope (the scopes held and the required ones), authorizes again
  // asking for it, and goes on. The token keeps the server's other scopes
  // (supabase's identity is mapped by one).
  await step(S, 'SDK upscope', async () => {
    const provider = new HeadlessProvider(srv.account, as.issuer);
    const held = [OTHER_SCOPE, ...(srv.scopes ?? []).filter((x) => x !== TOOLS_SCOPE)].join(' ');
    provider.saveTokens({ access_token: await mint(as, { account: srv.account, resource: srv.resource, scope: held }), token_type: 'Bearer' });
    let reauthorized = false;
    try {
      await newClient().connect(new StreamableHTTPClientTransport(srv.url, { authProvider: provider }));
    } catch (e) {
      if (!(e instanceof UnauthorizedError)) throw e;
      reauthorized = true;
    }
    if (reauthorized) await new StreamableHTTPClientTransport(srv.url, { authProvider: provider }).finishAuth(provider.code);
    const c = newClient();
    await c.connect(new StreamableHTTPClientTransport(srv.url, { authProvider: provider }));
    const res = await c.callTool({ name: srv.tool, arguments: srv.args });
    const scope = parts(provider.tokens().access_token).payload.scope ?? '';
    const asked = new URL(provider.authorizeURL ?? 'http://x/').searchParams.get('scope');
    record(S, `SDK on 403 insufficient_scope (token with ${held} only)`, `authorizes again for ${TOOLS_SCOPE}, tool ok`,
      `${reauthorized ? 'authorized again' : 'no new authorization'} asking scope="${asked}", new token scope="${scope}", ${res.isError ? 'error' : 'ok'}`,
      reauthorized && scope.split(' ').includes(TOOLS_SCOPE) && !res.isError);
    await c.close();
  });
  await happy.client.close();
}

await main();
