// Large results through the official TypeScript SDK client over stdio: a
// server asked for far more than its result budget (--max-result-bytes,
// 512 KiB by default) must answer with the part that fits, say that it cut
// and how to get the rest, and keep the session alive. Each case spawns its
// server on its own data, calls its tools, and checks every result's size as
// sent (text and structuredContent together); add a server by adding a case.
//
//   node large.mjs [case…]     (default: every case; binaries from ../../bin)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const binDir = path.resolve(here, '../../bin');
const BUDGET = 512 * 1024; // the kit's default result budget
const MB = 1024 * 1024;
const j = (v) => JSON.stringify(v);

let failed = 0;
let section = '';
function check(name, cond, detail = '') {
  console.log(`${cond ? 'ok  ' : 'FAIL'} ${section}: ${name}${cond ? '' : ` — ${detail}`}`);
  if (!cond) failed++;
  return !!cond;
}
const sizes = [];

// sent is what a result costs as the client received it: the text content
// and structuredContent, as JSON.
function sent(res) {
  return Buffer.byteLength(j({ content: res.content, structuredContent: res.structuredContent }));
}

// call calls a tool, checks the result is no error and within the budget,
// and records its size.
async function call(client, label, name, args) {
  const t0 = Date.now();
  const res = await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  const ms = Date.now() - t0;
  const n = sent(res);
  sizes.push({ case: section, call: label, bytes: n, ms });
  check(`${label}: no error`, !res.isError, res.content?.[0]?.text?.slice(0, 300));
  check(`${label}: ${n} bytes, within the ${BUDGET}-byte budget`, n <= BUDGET, `${n} bytes`);
  check(`${label}: structuredContent present`, res.structuredContent && typeof res.structuredContent === 'object');
  return res.structuredContent ?? {};
}

// devtools: a root holding a 30 MB text file; file_read pages it, and
// shell_execute prints all of it.
async function devtools(client, dir) {
  const big = path.join(dir, 'root', 'big.txt');
  const size = fs.statSync(big).size;

  const first = await call(client, 'file_read 30 MB, no window', 'file_read', { path: 'big.txt' });
  check('file_read reports the whole size', first.size === size, `${first.size} vs ${size}`);
  check('file_read is truncated', first.truncated === true, j({ truncated: first.truncated, lines: first.lines }));
  check('file_read gives the next line', Number.isInteger(first.next_offset) && first.next_offset === first.lines?.end + 1, j(first.lines));
  check('file_read says how to get the rest', typeof first.rest === 'string' && first.rest.includes(`offset ${first.next_offset}`), first.rest);
  check('file_read content starts the file', first.content?.startsWith('line 1 ') && first.byte_start === 0);

  const second = await call(client, 'file_read next page (offset)', 'file_read', { path: 'big.txt', offset: first.next_offset });
  check('the next page starts at next_offset', second.lines?.start === first.next_offset, j(second.lines));
  check('the next page starts where the first ended', second.byte_start === first.byte_end, `${second.byte_start} vs ${first.byte_end}`);
  check('the next page is the file there', second.content?.startsWith(`line ${first.next_offset} `), second.content?.slice(0, 40));
  check('the next page is truncated too', second.truncated === true && Number.isInteger(second.next_offset));

  const b64 = await call(client, 'file_read base64 from a byte offset', 'file_read', { path: 'big.txt', encoding: 'base64', byte_offset: second.byte_end });
  const raw = Buffer.from(b64.content ?? '', 'base64');
  const want = Buffer.alloc(raw.length);
  const fd = fs.openSync(big, 'r');
  fs.readSync(fd, want, 0, raw.length, second.byte_end);
  fs.closeSync(fd);
  check('base64 page holds the bytes at byte_offset', raw.length > 0 && raw.equals(want) && b64.truncated === true && b64.next_byte_offset === second.byte_end + raw.length);

  const out = await call(client, 'shell_execute cat 30 MB', 'shell_execute', { argv: ['cat', 'big.txt'] });
  check('shell_execute is truncated', out.truncated === true, j({ truncated: out.truncated }));
  check('shell_execute reports the bytes it captured', out.stdout_bytes > BUDGET && out.stdout_bytes <= 10 * MB, String(out.stdout_bytes));
  check('shell_execute stopped the program at the output cap', out.output_capped === true);
  check('shell_execute keeps the start and the end', out.stdout?.startsWith('line 1 ') && out.stdout_tail?.length > 0 &&
    out.stdout.length + out.stdout_tail.length + out.stdout_omitted === out.stdout_bytes,
  j({ head: out.stdout?.length, tail: out.stdout_tail?.length, omitted: out.stdout_omitted, total: out.stdout_bytes }));
  check('shell_execute says how to get the rest', typeof out.rest === 'string' && out.rest.includes('file_read'), out.rest);

  const after = await call(client, 'system_info after the large results', 'system_info', {});
  check('the session survives: a further call works', after.server === 'devtools', j(after).slice(0, 200));
}

// supabase: 1000 rows of 20 KB on the embedded database, inserted 100 at a
// time, then read back page by page with next_offset.
async function supabase(client) {
  const wide = 'y'.repeat(20 * 1024);
  for (let b = 0; b < 10; b++) {
    const data = [];
    for (let i = 0; i < 100; i++) {
      const id = `bulk-${String(b * 100 + i).padStart(4, '0')}`;
      data.push([{ column: 'agent_type', value: 'bulk' }, { column: 'error_type', value: 'large' },
        { column: 'task_id', value: id }, { column: 'stack_trace', value: wide }]);
    }
    const res = await client.callTool({ name: 'supabase_insert', arguments: { table: 'agent_errors', select: 'task_id', data } },
      undefined, { timeout: 120000 });
    if (!check(`insert batch ${b + 1} of 10`, !res.isError && res.structuredContent?.row_count === 100,
      res.content?.[0]?.text?.slice(0, 300))) return;
  }
  const read = { table: 'agent_errors', select: 'task_id, stack_trace', filters: [{ column: 'agent_type', op: 'eq', value: 'bulk' }],
    orderBy: [{ column: 'task_id' }], limit: 1000 };
  const first = await call(client, 'supabase_query 1000 × 20 KB, first page', 'supabase_query', { ...read, offset: 0 });
  check('the first page is truncated', first.truncated === true && Number.isInteger(first.next_offset) && first.next_offset > 0,
    j({ truncated: first.truncated, next_offset: first.next_offset }));
  check('the first page holds whole rows', first.rows?.length === first.next_offset && first.rows?.[0]?.stack_trace === wide);
  let seen = first.rows?.length ?? 0;
  let next = first.next_offset;
  let pages = 1;
  let largest = sent({ content: [], structuredContent: first });
  while (next !== undefined && pages < 200) {
    const res = await client.callTool({ name: 'supabase_query', arguments: { ...read, offset: next } }, undefined, { timeout: 120000 });
    pages++;
    largest = Math.max(largest, sent(res));
    if (res.isError || sent(res) > BUDGET) {
      check(`page ${pages} within the budget`, false, `${sent(res)} bytes: ${res.content?.[0]?.text?.slice(0, 200)}`);
      return;
    }
    const page = res.structuredContent;
    if (page.rows?.[0]?.task_id !== `bulk-${String(next).padStart(4, '0')}`) {
      check(`page ${pages} starts at row ${next}`, false, page.rows?.[0]?.task_id);
      return;
    }
    seen += page.rows.length;
    next = page.truncated ? page.next_offset : undefined;
  }
  sizes.push({ case: section, call: `all pages (${pages}), the largest`, bytes: largest, ms: 0 });
  check(`every page (${pages}) within the budget, and they hold all 1000 rows, each once`, seen === 1000, `${seen} rows in ${pages} pages`);
  const after = await call(client, 'supabase_list_tables after the large results', 'supabase_list_tables', {});
  check('the session survives: a further call works', JSON.stringify(after).includes('agent_errors'));
}

const cases = {
  devtools: {
    bin: path.join(binDir, 'devtools-mcp'),
    // prepare fills dir and returns the server's arguments and environment.
    prepare(dir) {
      const root = path.join(dir, 'root');
      fs.mkdirSync(root, { recursive: true });
      const fd = fs.openSync(path.join(root, 'big.txt'), 'w');
      const pad = 'x'.repeat(88);
      let chunk = [];
      let written = 0;
      for (let i = 1; written < 30 * MB; i++) {
        const line = `line ${i} ${pad}\n`;
        chunk.push(line);
        written += line.length;
        if (chunk.length === 10000) { fs.writeSync(fd, chunk.join('')); chunk = []; }
      }
      fs.writeSync(fd, chunk.join(''));
      fs.closeSync(fd);
      return { args: ['--root', root], env: {} };
    },
    run: devtools,
  },
  supabase: {
    bin: path.join(binDir, 'supabase-mcp'),
    prepare() { return { args: [], env: {} }; }, // the embedded database, created in the data directory
    run: supabase,
  },
};

async function runCase(name, c) {
  section = name;
  if (!fs.existsSync(c.bin)) {
    check('server binary', false, `no ${c.bin}; run make build`);
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `sdk-large-${name}-`));
  try {
    const { args, env } = await c.prepare(dir);
    const transport = new StdioClientTransport({
      command: c.bin, args, stderr: 'ignore',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, MCP_DATA_DIR: path.join(dir, 'data'), ...env },
    });
    const client = new Client({ name: 'mcp-fleet-sdk-large', version: '1.0.0' }, { capabilities: {} });
    await client.connect(transport);
    await client.listTools(); // the SDK checks structuredContent against the outputSchemas it lists
    try {
      await c.run(client, dir);
    } finally {
      await client.close();
    }
  } catch (e) {
    check('run', false, `threw ${e?.stack ?? e}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const wanted = process.argv.slice(2);
for (const name of wanted.length ? wanted : Object.keys(cases)) {
  if (!cases[name]) {
    console.error(`no case ${name} (have: ${Object.keys(cases).join(', ')})`);
    process.exit(2);
  }
  await runCase(name, cases[name]);
}
console.log('\nresult sizes as sent (text + structuredContent):');
for (const s of sizes) {
  console.log(`  ${s.case.padEnd(10)} ${s.call.padEnd(40)} ${String(s.bytes).padStart(8)} bytes (${(100 * s.bytes / BUDGET).toFixed(1)}% of ${BUDGET})  ${s.ms} ms`);
}
console.log(failed === 0 ? '\nlarge: all checks passed' : `\nlarge: ${failed} check(s) failed`);
process.exit(failed === 0 ? 0 : 1);
