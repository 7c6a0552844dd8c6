// The five servers as a host starts them: over stdio, without an ACL policy
// (so every tool is listed), each start on its own throwaway data directory
// so nothing a check does touches a developer's state. Each server names one
// cheap read-only tool for the round trips and a string its real result
// contains, which must reach the fake model's second turn.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const BIN_DIR = path.resolve(process.env.HOST_CHECK_BIN ?? path.join(here, '../../bin'));

export const SERVERS = [
  { name: 'devtools', roundTrip: { tool: 'system_info', args: {}, expect: '"server":"devtools"' } },
  { name: 'avinode', roundTrip: { tool: 'search_airports', args: { query: 'KTEB' }, expect: 'Teterboro' } },
  { name: 'gmail', roundTrip: { tool: 'list_templates', args: {}, expect: 'booking_confirmation' } },
  { name: 'sheets', roundTrip: { tool: 'list_clients', args: {}, expect: 'CL-001' } },
  { name: 'supabase', roundTrip: { tool: 'supabase_list_tables', args: {}, expect: 'iso_workflows' } },
];

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'host-check-'));
let starts = 0;
export function removeScratch() { fs.rmSync(scratch, { recursive: true, force: true }); }

// launch returns the command line of one fresh start of server s: a new
// data directory (MCP_DATA_DIR, and HOME so no stored sign-in or config of
// the developer is found), devtools confined to it with --root. No
// MCP_ACL_FILE: the policy would hide tools from the listing.
export function launch(s) {
  const data = path.join(scratch, `${s.name}-${++starts}`);
  fs.mkdirSync(data, { recursive: true });
  return {
    command: path.join(BIN_DIR, `${s.name}-mcp`),
    args: s.name === 'devtools' ? ['--root', data] : [],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: data, MCP_DATA_DIR: data, MCP_LOG_LEVEL: 'error' },
  };
}
