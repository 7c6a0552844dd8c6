// Host compatibility of every server's tools: each of the five servers is
// started over stdio (no ACL policy, throwaway state) and its tools go
// through the real tool conversion of each LLM host SDK — OpenAI Agents
// (non-strict and strict), Gemini (@google/genai), Anthropic
// (@anthropic-ai/sdk) and the Vercel AI SDK (@ai-sdk/mcp + ai) — and then
// through the provider's published request rules (rules.mjs). A provider
// refuses the whole request when one tool is refused, so one rejection is
// a failure. Then one read-only tool per server makes a round trip through
// the OpenAI agent loop and AI SDK generateText with a scripted model
// (roundtrip.mjs).
//
//   cd tools/host-check && npm ci && node check.mjs [--json out.json]
//
// HOST_CHECK_BIN points at another bin/ directory. Exit status 0 when every
// tool is accepted by every host and every round trip returns the tool's
// result to the model; 1 otherwise; 2 when a binary is missing.
import fs from 'node:fs';
import path from 'node:path';

import { HOSTS, HOST_RUNS } from './hosts.mjs';
import { roundTrips } from './roundtrip.mjs';
import { BIN_DIR, SERVERS, removeScratch } from './servers.mjs';

const args = process.argv.slice(2);
const jsonOut = args.includes('--json') ? args[args.indexOf('--json') + 1] : undefined;
const skipRoundTrips = args.includes('--no-round-trip');
for (const s of SERVERS) {
  const bin = path.join(BIN_DIR, `${s.name}-mcp`);
  if (!fs.existsSync(bin)) {
    console.error(`no server binary at ${bin}; run make build`);
    process.exit(2);
  }
}

// results[server][host][tool] = reasons (empty: accepted).
const results = {};
const errors = [];
for (const s of SERVERS) {
  results[s.name] = {};
  const listedBy = {};
  for (const hostRun of HOST_RUNS) {
    try {
      const { listed, result } = await hostRun(s);
      for (const [host, tools] of Object.entries(result)) {
        results[s.name][host] = tools;
        listedBy[host] = listed;
      }
    } catch (e) {
      errors.push(`${s.name}: ${hostRun.name} failed: ${e?.stack ?? e}`);
    }
  }
  // Every host must see the same tools: one that lists fewer has lost some
  // on the way, which is as bad as a refusal.
  const counts = new Set(Object.values(listedBy));
  if (counts.size > 1) errors.push(`${s.name}: hosts listed different numbers of tools: ${JSON.stringify(listedBy)}`);
}

// ------------------------------------------------------------------- table

const pad = (v, n) => String(v).padEnd(n);
const cell = (tools) => (tools ? `${Object.values(tools).filter((r) => r.length === 0).length}/${Object.keys(tools).length}` : 'error');
console.log(`${pad('server', 10)}${HOSTS.map((h) => pad(h, 15)).join('')}`);
let accepted = 0;
let total = 0;
for (const s of SERVERS) {
  const row = HOSTS.map((h) => {
    const tools = results[s.name][h];
    if (tools) {
      total += Object.keys(tools).length;
      accepted += Object.values(tools).filter((r) => r.length === 0).length;
    }
    return pad(cell(tools), 15);
  });
  console.log(`${pad(s.name, 10)}${row.join('')}`);
}
console.log(`\n${accepted} of ${total} tool × host pairs accepted`);

const rejections = [];
for (const s of SERVERS) {
  for (const h of HOSTS) {
    for (const [tool, reasons] of Object.entries(results[s.name][h] ?? {})) {
      if (reasons.length) rejections.push({ server: s.name, host: h, tool, reasons });
    }
  }
}
if (rejections.length) {
  console.log('\nrejections:');
  for (const r of rejections) {
    console.log(`  ${r.server} ${r.tool} × ${r.host}:`);
    for (const reason of r.reasons) console.log(`    - ${reason}`);
  }
}
for (const e of errors) console.log(`ERROR ${e}`);

// ------------------------------------------------------------- round trips

let trips = [];
if (!skipRoundTrips) {
  trips = await roundTrips(SERVERS);
  console.log('\nround trips (scripted model: call the tool, then answer; the tool result must reach the second turn):');
  for (const t of trips) console.log(`  ${t.ok ? 'ok  ' : 'FAIL'} ${t.server} ${t.tool} × ${t.host}${t.ok ? '' : ` — ${t.detail}`}`);
}
removeScratch();

if (jsonOut) {
  const doc = {
    hosts: HOSTS, accepted, total,
    servers: Object.fromEntries(SERVERS.map((s) => [s.name, Object.fromEntries(HOSTS.map((h) => [h, {
      accepted: Object.values(results[s.name][h] ?? {}).filter((r) => r.length === 0).length,
      total: Object.keys(results[s.name][h] ?? {}).length,
      rejected: Object.fromEntries(Object.entries(results[s.name][h] ?? {}).filter(([, r]) => r.length)),
    }]))])),
    roundTrips: trips,
    errors,
  };
  fs.writeFileSync(jsonOut, `${JSON.stringify(doc, null, 2)}\n`);
}

const ok = rejections.length === 0 && errors.length === 0 && trips.every((t) => t.ok);
console.log(ok ? '\nevery host accepts every tool' : '\nhost check failed');
process.exit(ok ? 0 : 1);
