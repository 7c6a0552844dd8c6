// Builds the supabase server's PostgREST cases with Supabase's official
// client, @supabase/postgrest-js (pinned in package.json), and writes the
// requests it sends — method, path, query string, the headers that carry
// meaning, body — to servers/supabase/internal/rest/testdata/. A Go test
// renders the same cases with the server's own renderer and compares; it
// needs only the checked-in table, not Node.js.
//
//   npm ci && node generate.mjs
//
// Each case is a tool call (op + arguments, as an agent writes them) and the
// postgrest-js calls that express it:
//   - a read asks for one row more than its limit (the server does, to tell
//     whether more rows exist), so limit n is .limit(n + 1) and an offset is
//     .range(offset, offset + n);
//   - inserts leave missing columns to their defaults (defaultToNull: false)
//     and return the rows (.select());
//   - updates and deletes return the rows and carry the server's guard of
//     100 affected rows (.select().maxAffected(100));
//   - or groups are strings in postgrest-js (.or('a.eq.1,b.eq.2')); they are
//     written here with PostgREST's documented quoting: values holding
//     , . : ( ) " or \ (or starting with { or a blank) in double quotes with
//     backslash escapes.

import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'
import { PostgrestClient } from '@supabase/postgrest-js'

const here = dirname(fileURLToPath(import.meta.url))
const out = join(here, '../../servers/supabase/internal/rest/testdata/postgrestjs_cases.json')
const pkg = JSON.parse((await import('node:fs')).readFileSync(join(here, 'node_modules/@supabase/postgrest-js/package.json'), 'utf8'))

const REST = 'https://project.supabase.co/rest/v1'
// A JWT-shaped key, as Supabase's legacy anon and service_role keys are.
const KEY = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIn0.dGVzdC1zaWduYXR1cmU'
const DEFAULT_LIMIT = 100
const MAX_AFFECTED = 100
const HEADERS = ['accept-profile', 'apikey', 'authorization', 'content-profile', 'content-type', 'prefer']

const cases = [
  // The agents' documented calls.
  ['orchestrator: workflows of a request', 'query', { table: 'iso_workflows', filters: { request_id: 'req-123' }, select: 'id, state, created_at' }],
  ['orchestrator: the request', 'query', { table: 'iso_requests', filters: { id: 'req-123' }, select: '*' }],
  ['orchestrator: create a workflow', 'insert', { table: 'iso_workflows', data: { request_id: 'req-123', state: 'CREATED', priority: 'high', metadata: { urgency: 'urgent' } } }],
  ['orchestrator: transition', 'update', { table: 'iso_workflows', filters: { request_id: 'req-123' }, data: { state: 'ANALYZING' } }],
  ['client data: check the cache', 'query', { table: 'client_cache', filters: { email: 'john@example.com' } }],
  ['client data: cache a profile', 'insert', { table: 'client_cache', data: { client_id: 'client-456', name: 'John Smith', email: 'john@example.com', vip_status: 'gold', cached_at: '2025-11-14T12:00:00.000Z' } }],
  ['flight search: save options', 'insert', { table: 'flight_options', data: { request_id: 'req-123', rfp_id: 'rfp-456', flights: [{ aircraft: 'Citation X', price: 48200 }], empty_legs: [] } }],
  ['proposal analysis: quotes', 'query', { table: 'quotes', filters: { rfp_id: 'rfp-123' }, select: '*' }],
  ['proposal analysis: scores', 'rpc', { function: 'calculate_quote_scores', params: { quotes: [{ id: 'quote-456', total_price_usd: 48200 }], client_preferences: { max_budget: 60000 }, weights: { price: 0.3, safety: 0.35, speed: 0.15, comfort: 0.2 } } }],
  ['proposal analysis: save a score', 'insert', { table: 'quote_scores', data: { rfp_id: 'rfp-123', quote_id: 'quote-456', price_score: 85, safety_score: 92, speed_score: 78, comfort_score: 88, total_score: 87, rank: 1 } }],
  ['communication: top proposals', 'query', { table: 'ranked_proposals', filters: { request_id: 'req-123' }, orderBy: { column: 'rank', ascending: true }, limit: 3 }],
  ['communication: mark sent', 'update', { table: 'iso_workflows', filters: { request_id: 'req-123' }, data: { state: 'COMPLETED', email_sent_at: '2025-11-14T15:30:00.000Z', email_message_id: 'msg-789' } }],
  ['error monitor: log', 'insert', { table: 'agent_errors', data: { workflow_id: 'wf-123', agent_type: 'flight_search', task_id: 'task-456', error_type: 'avinode_timeout', error_message: 'API request timed out after 30s', retry_count: 1, stack_trace: 'Error: timeout\n  at x', occurred_at: '2025-11-14T15:31:00.000Z' } }],
  ['error monitor: retry count', 'query', { table: 'agent_errors', filters: { task_id: 'task-456' }, select: 'retry_count' }],
  ['error monitor: fail a workflow', 'update', { table: 'iso_workflows', filters: { id: 'wf-123' }, data: { state: 'FAILED', failed_at: '2025-11-14T15:32:00.000Z', failure_reason: 'Max retries exceeded (3) for Avinode API' } }],
  // Operators and values.
  ['operators', 'query', { table: 'quotes', filters: { total_price_usd: { gte: 30000, lt: 50000 }, status: { neq: 'expired' }, safety_rating: { gt: 4.5 }, flight_time_minutes: { lte: 180 } } }],
  ['like and ilike', 'query', { table: 'client_cache', filters: { email: { ilike: '%@example.com' }, name: { like: 'John*' } } }],
  ['in with reserved characters', 'query', { table: 'client_cache', filters: { name: { in: ['Smith, John', '(VIP)', 'plain', 'dot.ted', 'O"Neil', 'a b'] } } }],
  ['in with numbers', 'query', { table: 'agent_errors', filters: { retry_count: { in: [1, 2, 3] } } }],
  ['not in', 'query', { table: 'iso_workflows', filters: { state: { not: { in: ['FAILED', 'CANCELLED, LATE'] } } } }],
  ['not eq', 'query', { table: 'iso_workflows', filters: { state: { not: { eq: 'FAILED' } } } }],
  ['is null, true', 'query', { table: 'iso_workflows', filters: { email_sent_at: null, failed_at: { is: null } } }],
  ['eq keeps reserved characters raw', 'query', { table: 'client_cache', filters: { name: 'Smith, John (VIP) "Jr." \\ x', email: 'a+b@example.com' } }],
  ['unicode and spaces', 'query', { table: 'client_cache', filters: { name: 'Zoë Ångström ✈ & co' } }],
  ['or group', 'query', { table: 'iso_workflows', filters: { or: [{ priority: 'high' }, { state: { in: ['FAILED', 'CANCELLED'] } }] } }],
  ['or with quoting and nesting', 'query', { table: 'client_cache', filters: { vip_status: 'gold', or: [{ name: 'Smith, John' }, { email: { ilike: '%@jet.example' } }, { and: [{ company: '(none)' }, { phone: { is: null } }] }] } }],
  ['order, offset, count', 'query', { table: 'quotes', select: 'id,total_price_usd', orderBy: [{ column: 'total_price_usd', ascending: false, nullsFirst: false }, { column: 'id' }], limit: 10, offset: 20, count: true }],
  ['embedded relation', 'query', { table: 'quotes', select: 'id, total_price_usd, iso_requests(client_email, passengers)', filters: { rfp_id: 'rfp-123' } }],
  ['bulk insert with missing columns', 'insert', { table: 'agent_errors', data: [{ agent_type: 'a', error_type: 'x', retry_count: 0 }, { agent_type: 'b', error_type: 'y', task_id: 't-1' }], select: 'id,task_id' }],
  ['upsert', 'insert', { table: 'client_cache', data: { email: 'john@example.com', vip_status: 'platinum' }, onConflict: 'email' }],
  ['upsert ignoring duplicates', 'insert', { table: 'client_cache', data: [{ email: 'a@example.com', name: 'A' }, { email: 'b@example.com', name: 'B' }], onConflict: 'email', ignoreDuplicates: true }],
  ['delete', 'delete', { table: 'agent_errors', filters: { task_id: 'task-456', retry_count: { gte: 3 } }, select: 'id' }],
  ['rpc without arguments', 'rpc', { function: 'refresh_rankings' }],
  ['schema profile on a read', 'query', { table: 'events', schema: 'api', filters: { id: 1 } }],
  ['schema profile on a write', 'insert', { table: 'events', schema: 'api', data: { id: 1 } }],
]

// logicValue quotes a value inside or=(…)/and=(…) as PostgREST documents.
function logicValue(v) {
  if (typeof v !== 'string') return `${v}`
  if (v === '' || /[,.:()"\\]/.test(v) || /^[{ \t]/.test(v) || /[ \t]$/.test(v)) {
    return `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`
  }
  return v
}

function listValue(v) {
  // Element quoting inside in.(…) of or-trees: the same as postgrest-js's
  // in(): , ( ) quoted.
  if (typeof v === 'string' && /[,()]/.test(v)) return `"${v}"`
  return `${v}`
}

function condString(col, op, v, not) {
  const prefix = not ? 'not.' : ''
  if (op === 'in') return `${col}.${prefix}in.(${v.map(listValue).join(',')})`
  if (op === 'is') return `${col}.${prefix}is.${v}`
  return `${col}.${prefix}${op}.${logicValue(v)}`
}

function logicItems(obj) {
  const parts = []
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'or' || k === 'and') {
      parts.push(`${k}(${v.map((o) => logicGroup(o)).join(',')})`)
    } else if (v === null) {
      parts.push(`${k}.is.null`)
    } else if (typeof v !== 'object') {
      parts.push(condString(k, 'eq', v, false))
    } else {
      for (const [op, val] of Object.entries(v)) {
        if (op === 'not') {
          const [[inner, iv]] = Object.entries(val)
          parts.push(condString(k, inner, iv, true))
        } else parts.push(condString(k, op, val, false))
      }
    }
  }
  return parts
}

function logicGroup(obj) {
  const items = logicItems(obj)
  return items.length === 1 ? items[0] : `and(${items.join(',')})`
}

function applyFilters(b, filters = {}) {
  for (const [k, v] of Object.entries(filters)) {
    if (k === 'or') {
      b = b.or(v.map((o) => logicGroup(o)).join(','))
    } else if (v === null) {
      b = b.is(k, null)
    } else if (typeof v !== 'object') {
      b = b.eq(k, v)
    } else {
      for (const [op, val] of Object.entries(v)) {
        if (op === 'not') {
          const [[inner, iv]] = Object.entries(val)
          b = inner === 'in' ? b.notIn(k, iv) : b.not(k, inner, iv)
        } else if (op === 'in') b = b.in(k, val)
        else if (op === 'is') b = b.is(k, val)
        else b = b[op](k, val)
      }
    }
  }
  return b
}

function build(client, op, a) {
  const from = () => (a.schema ? client.schema(a.schema) : client).from(a.table)
  switch (op) {
    case 'query': {
      let b = from().select(a.select ?? '*', a.count ? { count: 'exact' } : undefined)
      b = applyFilters(b, a.filters)
      const orders = a.orderBy ? (Array.isArray(a.orderBy) ? a.orderBy : [a.orderBy]) : []
      for (const o of orders) b = b.order(o.column, { ascending: o.ascending ?? true, nullsFirst: o.nullsFirst })
      const limit = a.limit ?? DEFAULT_LIMIT
      if (a.offset) return b.range(a.offset, a.offset + limit)
      return b.limit(limit + 1)
    }
    case 'insert': {
      const b = a.onConflict
        ? from().upsert(a.data, { onConflict: a.onConflict, ignoreDuplicates: a.ignoreDuplicates ?? false, defaultToNull: false })
        : from().insert(a.data, { defaultToNull: false })
      return b.select(a.select ?? '*')
    }
    case 'update':
      return applyFilters(from().update(a.data), a.filters).select(a.select ?? '*').maxAffected(MAX_AFFECTED)
    case 'delete':
      return applyFilters(from().delete(), a.filters).select(a.select ?? '*').maxAffected(MAX_AFFECTED)
    case 'rpc':
      return (a.schema ? client.schema(a.schema) : client).rpc(a.function, a.params)
  }
  throw new Error(`unknown op ${op}`)
}

const table = []
for (const [name, op, args] of cases) {
  let seen
  const fetch = async (url, init) => {
    seen = { url: new URL(url), init }
    return new Response('[]', { status: 200, headers: { 'Content-Type': 'application/json', 'Content-Range': '*/0' } })
  }
  const client = new PostgrestClient(REST, { headers: { apikey: KEY, Authorization: `Bearer ${KEY}` }, fetch })
  await build(client, op, args)
  const headers = {}
  for (const [k, v] of Object.entries(seen.init.headers)) {
    if (HEADERS.includes(k.toLowerCase())) headers[k.toLowerCase()] = v
  }
  table.push({
    name,
    op,
    args,
    method: seen.init.method,
    path: seen.url.pathname.replace(/^\/rest\/v1/, ''),
    query: seen.url.search.replace(/^\?/, ''),
    headers,
    body: seen.init.body === undefined ? null : seen.init.body,
  })
}

writeFileSync(out, JSON.stringify({ client: `@supabase/postgrest-js ${pkg.version}`, rest: REST, key: KEY, default_limit: DEFAULT_LIMIT, max_affected: MAX_AFFECTED, cases: table }, null, 2) + '\n')
console.log(`wrote ${table.length} cases to ${out}`)
