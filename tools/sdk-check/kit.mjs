// Drives the kit's test server (shared/kit/internal/testserver) with the
// official TypeScript MCP SDK client over stdio and streamable HTTP: a tool
// asks the user a question in the middle of a call (elicitation), the
// client's answer comes back to the same call, and a declined question is
// reported as declined; a client that cannot ask gets a clear refusal.
//
//   cd tools/sdk-check && npm ci && node kit.mjs [path/to/kit-testserver]
//
// Exit status 0 when every check passes.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.resolve(process.argv[2] ?? path.join(here, '../../bin/kit-testserver'));
const results = [];
let section = '';
function check(name, cond, detail = '') {
  results.push(!!cond);
  console.log(`${cond ? 'ok  ' : 'FAIL'} ${section}: ${name}${!cond && detail ? ` — ${detail}` : ''}`);
}
const j = (v) => JSON.stringify(v);
const body = (res) => res?.structuredContent ?? JSON.parse(res?.content?.[0]?.text ?? 'null');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-check-kit-'));
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: scratch, MCP_DATA_DIR: scratch };

function newClient(answer) {
  const caps = answer ? { elicitation: {} } : {};
  const client = new Client({ name: 'sdk-check-kit', version: '1' }, { capabilities: caps });
  const asked = [];
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params.message);
      return answer(req.params);
    });
  }
  return { client, asked };
}

async function scenario(connect) {
  {
    const { client, asked } = newClient(() => ({ action: 'accept', content: { ok: true } }));
    await connect(client);
    const res = await client.callTool({ name: 'confirm', arguments: { action: 'send the proposal' } });
    const b = body(res);
    check('the question reached the user', asked.length === 1 && asked[0].includes('send the proposal'), j(asked));
    check('the answer came back to the same call', !res.isError && b.action === 'accept' && b.done === true && b.content?.ok === true, j(res));
    await client.close();
  }
  {
    const { client } = newClient(() => ({ action: 'decline' }));
    await connect(client);
    const b = body(await client.callTool({ name: 'confirm', arguments: { action: 'delete everything' } }));
    check('a declined question is reported as declined', b.action === 'decline' && b.done === false, j(b));
    await client.close();
  }
  {
    const { client } = newClient(null);
    await connect(client);
    const res = await client.callTool({ name: 'confirm', arguments: { action: 'x' } });
    check('a client that cannot ask gets a clear refusal', res.isError && body(res).code === 'PERMISSION_DENIED' &&
      body(res).message.includes('elicitation'), j(res));
    await client.close();
  }
}

async function main() {
  section = 'stdio';
  await scenario((client) => client.connect(new StdioClientTransport({ command: BIN, args: [], env, stderr: 'ignore' })));

  section = 'http';
  const token = 'sdk-check-kit-token-0123456789';
  const child = spawn(BIN, ['--transport', 'http', '--port', '0'], { env: { ...env, MCP_AUTH_TOKEN: token }, stdio: ['ignore', 'ignore', 'pipe'] });
  const addr = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no address')), 10000);
    readline.createInterface({ input: child.stderr }).on('line', (line) => {
      try { const l = JSON.parse(line); if (l.addr && l.message?.includes('/mcp')) { clearTimeout(timer); resolve(l.addr); } } catch { /* not JSON */ }
    });
  });
  try {
    await scenario((client) => client.connect(new StreamableHTTPClientTransport(new URL(`http://${addr}/mcp`),
      { requestInit: { headers: { Authorization: `Bearer ${token}` } } })));
  } finally {
    child.kill('SIGTERM');
  }
  const failed = results.filter((r) => !r).length;
  console.log(failed ? `${failed} of ${results.length} kit checks failed` : `all ${results.length} kit checks passed`);
  process.exit(failed ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(1); });
