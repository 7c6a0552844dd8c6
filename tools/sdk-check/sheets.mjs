// Drives bin/sheets-mcp with the official TypeScript MCP SDK client, as a
// user's MCP client would, over stdio and streamable HTTP, on the local
// workbook (no credentials): the seven tools and their annotations, typed
// records with fenced text, RAW writes (a formula stays text in the CSV
// file), CONFLICT on a stale expected_updated_at, a flight recorded once, a
// paged read_sheet, schema errors naming the field, and the client resource
// with its update notification.
//
//   make build && cd tools/sdk-check && npm ci && node sheets.mjs [path/to/sheets-mcp]
//
// Exit status 0 when every check passes. SDK_CHECK_VERBOSE=1 prints server
// stderr.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { errorBody, harness, j, waitFor } from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.resolve(process.argv[2] ?? path.join(here, '../../bin/sheets-mcp'));
const TOOLS = ['add_flight_history', 'create_client', 'get_client', 'list_clients', 'read_sheet', 'search_clients', 'update_client'];
const READ_ONLY = ['get_client', 'list_clients', 'read_sheet', 'search_clients'];
const { check, step, run } = harness('sheets', BIN, {});

async function suite(client, data) {
  await step('tools/list', async () => {
    const { tools } = await client.listTools();
    check('the seven tools', j(tools.map((t) => t.name).sort()) === j(TOOLS), j(tools.map((t) => t.name)));
    for (const t of tools) {
      const a = t.annotations ?? {};
      const ro = READ_ONLY.includes(t.name);
      check(`${t.name}: annotations`, a.readOnlyHint === ro && typeof a.destructiveHint === 'boolean' &&
        typeof a.idempotentHint === 'boolean' && a.openWorldHint === false, j(a));
      check(`${t.name}: closed object schema`, t.inputSchema?.type === 'object' && t.inputSchema?.additionalProperties === false);
    }
  });

  let updatedAt;
  await step('get_client', async () => {
    const res = await client.callTool({ name: 'get_client', arguments: { identifier: 'john.doe@example.com' } });
    const c = res.structuredContent;
    check('typed record in structuredContent', c?.client_id === 'CL-001' && c?.history?.total_flights === 12 &&
      c?.history?.last_flight_date === '2025-09-15' && j(c?.history?.preferred_operators) === j(['OP-001', 'OP-003']), j(c));
    check('text part fenced as untrusted data', /<untrusted-data-[0-9a-f]+ source="rows of tab Clients/.test(res.content[0].text), res.content[0].text.slice(0, 200));
    updatedAt = c?.updated_at;
  });

  await step('update_client', async () => {
    const res = await client.callTool({ name: 'update_client', arguments: {
      client_id: 'CL-001', updates: { special_needs: '=1+1', vip_status: 'platinum' }, expected_updated_at: updatedAt } });
    const r = res.structuredContent;
    check('updated, changed fields listed', !res.isError && r?.client?.preferences?.special_needs === '=1+1' &&
      j(r?.changed) === j(['special_needs', 'vip_status']), j(res));
    const csv = fs.readFileSync(path.join(data, 'sheets', 'workbook', 'Clients.csv'), 'utf8');
    check('the formula is stored as text', csv.includes("'=1+1"), csv.split('\n')[1]);
    const stale = await client.callTool({ name: 'update_client', arguments: {
      client_id: 'CL-001', updates: { phone: '+1-555-0000' }, expected_updated_at: updatedAt } });
    const b = errorBody(stale);
    check('stale expected_updated_at is CONFLICT', stale.isError && b?.code === 'CONFLICT' && b?.data?.field === 'expected_updated_at', j(stale));
    const bad = await client.callTool({ name: 'update_client', arguments: { client_id: 'CL-001', updates: { total_flights: 3 } } });
    check('an unknown field is VALIDATION_ERROR', bad.isError && errorBody(bad)?.code === 'VALIDATION_ERROR', j(bad));
  });

  await step('add_flight_history', async () => {
    const args = { client_id: 'CL-004', flight_details: { date: '2025-12-01', route: 'KSFO-KJAC', price: 21000 } };
    const first = (await client.callTool({ name: 'add_flight_history', arguments: args })).structuredContent;
    const again = (await client.callTool({ name: 'add_flight_history', arguments: args })).structuredContent;
    check('recorded once, totals exact', first?.client?.history?.total_flights === 5 && !first?.already_recorded &&
      again?.already_recorded === true && again?.client?.history?.total_flights === 5, j({ first, again }));
  });

  await step('search_clients, list_clients, read_sheet', async () => {
    const s = (await client.callTool({ name: 'search_clients', arguments: { filters: { vip_status: 'gold', min_flights: 10 } } })).structuredContent;
    check('search with filters', s?.total_matches === 2, j(s));
    const l = (await client.callTool({ name: 'list_clients', arguments: { limit: 5 } })).structuredContent;
    check('list pages', l?.clients?.length === 5 && l?.next_cursor === 'CL-005' && l?.total === 12, j(l));
    const r = (await client.callTool({ name: 'read_sheet', arguments: { range: 'Flight_History', limit: 4 } })).structuredContent;
    check('read_sheet rows keyed by header, next_offset', r?.rows?.length === 4 && r?.next_offset === 4 && r?.rows?.[0]?.values?.route === 'KTEB-KPBI', j(r));
    const out = await client.callTool({ name: 'read_sheet', arguments: { range: 'Clients!A1:A5000' } });
    check('a range outside the grid is VALIDATION_ERROR on range', out.isError && errorBody(out)?.data?.field === 'range', j(out));
  });

  await step('resources', async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    check('template sheets://clients/{client_id}', resourceTemplates.some((t) => t.uriTemplate === 'sheets://clients/{client_id}'), j(resourceTemplates));
    const read = await client.readResource({ uri: 'sheets://clients/CL-006' });
    check('read a client record', JSON.parse(read.contents[0].text)?.name === 'Priya Raman', j(read));
    const seen = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { seen.push(n.params.uri); });
    await client.subscribeResource({ uri: 'sheets://clients/CL-006' });
    await client.callTool({ name: 'update_client', arguments: { client_id: 'CL-006', updates: { catering_preference: 'vegan, no sesame' } } });
    check('notifications/resources/updated after update_client', await waitFor(() => seen.includes('sheets://clients/CL-006'), 5000), j(seen));
  });
}

await run(suite, (client) => {
  check('resources capability with subscribe', client.getServerCapabilities()?.resources?.subscribe === true, j(client.getServerCapabilities()));
});
