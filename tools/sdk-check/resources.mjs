// File resources with live updates, driven by the official TypeScript SDK
// client over stdio, streamable HTTP and (2024-11-05) SSE: list, templates,
// read, subscribe; a change made by another process (this script, writing
// the file) must reach the subscriber within 1 s; after unsubscribing,
// nothing more arrives. Then the ACL: under a policy (acl-files.yaml), an
// agent whose tools include no file tool neither lists, nor reads, nor
// subscribes, on each transport. check.mjs runs this; the helpers it passes
// are its reporting and server fixtures.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

// The update must arrive within this long of the write.
const WITHIN_MS = 1000;
// Changes measured per transport.
const ROUNDS = 5;

// fileURI is the resource URI of an absolute path, as the server names it.
const fileURI = (p) => pathToFileURL(p).href;

// Updates collects notifications/resources/updated as they arrive.
class Updates {
  constructor(client) {
    this.seen = [];
    this.waiters = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      const at = Date.now();
      this.seen.push({ uri: n.params.uri, at });
      this.waiters = this.waiters.filter((w) => (w.uri === n.params.uri ? (w.resolve(at), false) : true));
    });
  }
  // next resolves with the arrival time of the next update for uri, or
  // null after ms.
  next(uri, ms) {
    return new Promise((resolve) => {
      const timer = setTimeout(() => { this.waiters = this.waiters.filter((w) => w !== waiter); resolve(null); }, ms);
      const waiter = { uri, resolve: (at) => { clearTimeout(timer); resolve(at); } };
      this.waiters.push(waiter);
    });
  }
  count(uri) { return this.seen.filter((s) => s.uri === uri).length; }
}

// replace changes a file as another process would: written beside it, then
// renamed over it (one event, as an editor's save).
function replace(file, content) {
  const tmp = path.join(path.dirname(path.dirname(file)), `.tmp-${path.basename(file)}`);
  fs.writeFileSync(tmp, content);
  fs.renameSync(tmp, file);
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

// liveUpdates runs the subscribe/change/notify checks on one connected
// client; label names the transport. It returns the latencies measured.
async function liveUpdates(h, client, root, label) {
  const { check, j } = h;
  const file = path.join(root, 'watched.txt');
  const sentinel = path.join(root, 'sentinel.txt');
  const uri = fileURI(file);
  const latencies = [];
  const caps = client.getServerCapabilities() ?? {};
  check(`${label}: resources capability with subscribe`, caps.resources?.subscribe === true, j(caps.resources));
  const { resources } = await client.listResources();
  check(`${label}: resources/list names the root's files`, resources.some((r) => r.uri === uri && r.name === 'watched.txt'), j(resources.map((r) => r.uri)));
  const { resourceTemplates } = await client.listResourceTemplates();
  check(`${label}: the file:///{path} template`, resourceTemplates.some((t) => t.uriTemplate === 'file:///{path}'), j(resourceTemplates));
  const read = await client.readResource({ uri });
  check(`${label}: resources/read returns the text`, read.contents?.[0]?.text === 'v0\n' && read.contents[0].mimeType === 'text/plain', j(read.contents));
  const missing = await client.readResource({ uri: fileURI(path.join(root, 'nope.txt')) }).then(() => null, (e) => e);
  check(`${label}: a missing file is "Resource not found"`, missing && /not found/i.test(missing.message), String(missing));

  const updates = new Updates(client);
  await client.subscribeResource({ uri });
  await client.subscribeResource({ uri: fileURI(sentinel) });
  for (let i = 1; i <= ROUNDS; i++) {
    const arrived = updates.next(uri, 5000);
    const t0 = Date.now();
    fs.writeFileSync(file, `v${i}\n`);
    const at = await arrived;
    if (at === null) { check(`${label}: update ${i} arrives`, false, 'no notifications/resources/updated within 5 s'); return latencies; }
    latencies.push(at - t0);
  }
  check(`${label}: every update arrives within ${WITHIN_MS} ms of the write`, latencies.every((ms) => ms < WITHIN_MS), `${latencies.join(', ')} ms`);
  const after = await client.readResource({ uri });
  check(`${label}: a read after the update sees the new content`, after.contents?.[0]?.text === `v${ROUNDS}\n`, j(after.contents));

  // An editor's save (rename over the file) is a change too.
  const renamed = updates.next(uri, 5000);
  replace(file, 'saved by an editor\n');
  check(`${label}: a file replaced by rename is reported`, (await renamed) !== null);

  // Unsubscribed: the sentinel, changed after the file, arrives alone.
  await client.unsubscribeResource({ uri });
  const before = updates.count(uri);
  const sentinelArrived = updates.next(fileURI(sentinel), 5000);
  replace(file, 'after unsubscribe\n');
  replace(sentinel, 'poke\n');
  check(`${label}: the sentinel's update arrives`, (await sentinelArrived) !== null);
  check(`${label}: no update after unsubscribe`, updates.count(uri) === before, `${updates.count(uri) - before} more`);
  await client.unsubscribeResource({ uri: fileURI(sentinel) });
  return latencies;
}

// denied checks that an agent without file tools sees no file resource.
async function denied(h, client, root, label) {
  const { check, j } = h;
  const uri = fileURI(path.join(root, 'watched.txt'));
  const { tools } = await client.listTools();
  check(`${label}: the agent has tools, none of them file tools`, tools.length > 0 && !tools.some((t) => t.name.startsWith('file_')), j(tools.map((t) => t.name)));
  const { resources } = await client.listResources();
  check(`${label}: resources/list is empty`, resources.length === 0, j(resources));
  const { resourceTemplates } = await client.listResourceTemplates();
  check(`${label}: resources/templates/list is empty`, resourceTemplates.length === 0, j(resourceTemplates));
  const read = await client.readResource({ uri }).then(() => null, (e) => e);
  check(`${label}: resources/read is "Resource not found"`, read && /not found/i.test(read.message), String(read));
  const sub = await client.subscribeResource({ uri }).then(() => null, (e) => e);
  check(`${label}: resources/subscribe is refused`, sub && /not found/i.test(sub.message), String(sub));
}

// allowed checks that the policy's file agent does read, so the refusals
// above come from the policy and not from a broken server.
async function allowed(h, client, root, label) {
  const uri = fileURI(path.join(root, 'watched.txt'));
  const read = await client.readResource({ uri }).then((r) => r, (e) => e);
  h.check(`${label}: the file agent reads the same URI`, read?.contents?.[0]?.text === 'v0\n', String(read?.message ?? h.j(read)));
}

function freshRoot(h, name) {
  const root = h.makeRoot(name);
  fs.writeFileSync(path.join(root, 'watched.txt'), 'v0\n');
  fs.writeFileSync(path.join(root, 'sentinel.txt'), 's\n');
  return root;
}

// startServer runs devtools over HTTP (with the SSE transport too) with env
// added; it resolves once the server reports its address.
async function startServer(h, args, env) {
  const child = spawn(h.bin, ['--transport', 'http', '--port', '0', '--sse', ...args], {
    env: { ...h.serverEnv('res-http'), ...env }, stdio: ['ignore', 'ignore', 'pipe'],
  });
  h.children.add(child);
  child.on('exit', () => h.children.delete(child));
  const log = new h.StderrLog(child.stderr);
  const ready = await h.waitFor(() => log.find((l) => l.addr), 10000);
  if (!ready) { child.kill('SIGKILL'); throw new Error(`server did not start: ${h.j(log.bad)}`); }
  return {
    base: `http://${ready.addr}`,
    async stop() { child.kill('SIGTERM'); if (child.exitCode === null) await once(child, 'exit'); },
  };
}

async function connect(h, transport) {
  const client = h.newClient();
  await client.connect(transport);
  return client;
}

export async function runResources(h) {
  const latencies = {};
  const policy = path.join(h.here, 'acl-files.yaml');
  const filesToken = `files-${Math.random().toString(36).slice(2)}-${Date.now()}`;
  const noFilesToken = `nofiles-${Math.random().toString(36).slice(2)}-${Date.now()}`;

  h.setSection('resources');
  await h.step('stdio: live updates', async () => {
    const root = freshRoot(h, 'res-stdio');
    const c = await connect(h, new StdioClientTransport({ command: h.bin, args: ['--root', root], env: h.serverEnv('res-stdio'), stderr: 'ignore' }));
    try { latencies.stdio = await liveUpdates(h, c, root, 'stdio'); } finally { await c.close(); }
  });

  await h.step('http and sse: live updates', async () => {
    const root = freshRoot(h, 'res-http');
    const srv = await startServer(h, ['--root', root], { MCP_AUTH_TOKEN: filesToken });
    const headers = { Authorization: `Bearer ${filesToken}` };
    try {
      const c = await connect(h, new StreamableHTTPClientTransport(new URL('/mcp', srv.base), { requestInit: { headers } }));
      try { latencies.http = await liveUpdates(h, c, root, 'http'); } finally { await c.close(); }
      // A fresh root state for the SSE round.
      fs.writeFileSync(path.join(root, 'watched.txt'), 'v0\n');
      const s = await connect(h, new SSEClientTransport(new URL('/sse', srv.base), { requestInit: { headers } }));
      try { latencies.sse = await liveUpdates(h, s, root, 'sse'); } finally { await s.close(); }
    } finally { await srv.stop(); }
  });

  await h.step('acl over stdio', async () => {
    const root = freshRoot(h, 'res-acl-stdio');
    const stdio = (agent) => new StdioClientTransport({
      command: h.bin, args: ['--root', root, '--acl', policy], env: { ...h.serverEnv('res-acl'), MCP_AGENT: agent }, stderr: 'ignore',
    });
    const no = await connect(h, stdio('nofiles'));
    try { await denied(h, no, root, 'stdio acl'); } finally { await no.close(); }
    const yes = await connect(h, stdio('files'));
    try { await allowed(h, yes, root, 'stdio acl'); } finally { await yes.close(); }
  });

  await h.step('acl over http and sse', async () => {
    const root = freshRoot(h, 'res-acl-http');
    const srv = await startServer(h, ['--root', root, '--acl', policy], { MCP_AGENT_TOKENS: `files=${filesToken},nofiles=${noFilesToken}` });
    const as = (token) => ({ requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    try {
      for (const [label, make] of [
        ['http acl', (t) => new StreamableHTTPClientTransport(new URL('/mcp', srv.base), as(t))],
        ['sse acl', (t) => new SSEClientTransport(new URL('/sse', srv.base), as(t))],
      ]) {
        const no = await connect(h, make(noFilesToken));
        try { await denied(h, no, root, label); } finally { await no.close(); }
        const yes = await connect(h, make(filesToken));
        try { await allowed(h, yes, root, label); } finally { await yes.close(); }
      }
    } finally { await srv.stop(); }
  });

  await h.step('watch cap configuration', async () => {
    const child = spawn(h.bin, ['--watch-max-files', '0'], { env: h.serverEnv('res-bad'), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    const [code] = await once(child, 'exit');
    h.check('--watch-max-files 0 is a configuration error: exit 2 naming the flag', code === 2 && stderr.includes('watch-max-files'), `exit ${code}: ${stderr.trim()}`);
  });

  for (const [transport, ms] of Object.entries(latencies)) {
    if (ms?.length) console.log(`  update latency ${transport}: min ${Math.min(...ms)} ms, median ${median(ms)} ms, max ${Math.max(...ms)} ms (${ms.join(', ')})`);
  }
  return latencies;
}
