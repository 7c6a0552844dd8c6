// The shared frame of the per-server SDK checks (gmail.mjs, sheets.mjs):
// reporting, a scratch data directory per transport, and one run of a
// server's suite over stdio and one over streamable HTTP, each with the
// official TypeScript SDK client.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const VERBOSE = process.env.SDK_CHECK_VERBOSE === '1';

export const j = (v) => JSON.stringify(v);
// errorBody is the fleet's structured error in a failed tool result.
export const errorBody = (res) => { try { return JSON.parse(res.content[0].text); } catch { return undefined; } };
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export async function waitFor(pred, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) { const v = pred(); if (v) return v; await sleep(20); }
  return pred();
}

// harness returns check/step for a server's suite and run(), which plays the
// suite over both transports and exits with the result. env adds variables
// to the server's minimal environment; onStdio runs extra checks on the
// stdio client before the suite.
export function harness(server, bin, env = {}) {
  let failed = 0;
  let section = '';
  const check = (name, cond, detail = '') => {
    console.log(`${cond ? 'ok  ' : 'FAIL'} ${section}: ${name}${cond ? '' : ` — ${detail}`}`);
    if (!cond) failed++;
    return !!cond;
  };
  const step = async (name, fn) => {
    try { await fn(); } catch (e) { check(name, false, `threw ${e?.stack ?? e}`); }
  };
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), `sdk-check-${server}-`));
  const serverEnv = (name) => {
    const data = path.join(scratch, name);
    fs.mkdirSync(data, { recursive: true });
    return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: data, MCP_DATA_DIR: data, MCP_LOG_LEVEL: 'debug', ...env };
  };
  const newClient = () => new Client({ name: 'mcp-fleet-sdk-check', version: '1.0.0' }, { capabilities: {} });

  async function stdio(suite, onStdio) {
    section = 'stdio';
    const env = serverEnv('stdio');
    const transport = new StdioClientTransport({ command: bin, args: [], env, stderr: 'pipe' });
    const bad = [];
    readline.createInterface({ input: transport.stderr }).on('line', (line) => {
      if (VERBOSE) console.error(`  [server] ${line}`);
      try { JSON.parse(line); } catch { bad.push(line); }
    });
    const client = newClient();
    await client.connect(transport);
    check(`serverInfo names ${server}`, client.getServerVersion()?.name === server, j(client.getServerVersion()));
    if (onStdio) onStdio(client);
    await suite(client, env.MCP_DATA_DIR);
    await client.close();
    check('stderr is JSON lines only', bad.length === 0, j(bad.slice(0, 3)));
  }

  async function http(suite) {
    section = 'http';
    const env = serverEnv('http');
    const token = 'sdk-check-token-0123456789abcdef';
    const child = spawn(bin, ['--transport', 'http', '--port', '0'], { env: { ...env, MCP_AUTH_TOKEN: token }, stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      const lines = [];
      readline.createInterface({ input: child.stderr }).on('line', (line) => {
        if (VERBOSE) console.error(`  [server] ${line}`);
        try { lines.push(JSON.parse(line)); } catch { /* reported by the stdio run */ }
      });
      const ready = await waitFor(() => lines.find((l) => l.addr), 10000);
      if (!check('HTTP server reports its address', ready)) return;
      const transport = new StreamableHTTPClientTransport(new URL(`http://${ready.addr}/mcp`),
        { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
      const client = newClient();
      await client.connect(transport);
      await suite(client, env.MCP_DATA_DIR);
      await client.close();
    } finally {
      child.kill('SIGTERM');
    }
  }

  async function run(suite, onStdio) {
    if (!fs.existsSync(bin)) {
      console.error(`no server binary at ${bin}; run make build (or pass the path)`);
      process.exit(2);
    }
    await step('stdio', () => stdio(suite, onStdio));
    await step('http', () => http(suite));
    fs.rmSync(scratch, { recursive: true, force: true });
    console.log(failed === 0 ? 'all checks passed' : `${failed} check(s) failed`);
    process.exit(failed === 0 ? 0 : 1);
  }

  return { check, step, run };
}
