// The rules must be able to fail: each one is shown a schema the provider
// refuses and one it takes. Run with `node --test`.
import assert from 'node:assert/strict';
import test from 'node:test';

import * as rules from './rules.mjs';

const obj = (properties, extra = {}) => ({ type: 'object', properties, additionalProperties: false, required: Object.keys(properties), ...extra });
const has = (reasons, re) => assert.ok(reasons.some((r) => re.test(r)), `no reason matching ${re} in ${JSON.stringify(reasons)}`);

test('openai: name, description length, object parameters', () => {
  const ok = { type: 'function', name: 'list_clients', description: 'd', parameters: obj({ a: { type: 'string' } }), strict: false };
  assert.deepEqual(rules.openAI(ok), []);
  has(rules.openAI({ ...ok, name: 'list.clients' }), /name "list.clients" does not match/);
  has(rules.openAI({ ...ok, description: 'x'.repeat(1025) }), /description is 1025 characters/);
  assert.deepEqual(rules.openAI({ ...ok, description: 'x'.repeat(1024) }), []);
  has(rules.openAI({ ...ok, parameters: { type: 'array' } }), /parameters.type is "array"/);
  has(rules.openAI({ ...ok, parameters: { type: 'object', properties: { a: { type: 'strnig' } } } }), /not a valid JSON Schema/);
});

test('openai strict: strict flag, keywords, types, formats, closed objects', () => {
  const ok = { type: 'function', name: 't', description: 'd', strict: true, parameters: obj({ a: { type: ['string', 'null'], format: 'email', maxLength: 5, default: null } }) };
  assert.deepEqual(rules.openAIStrict(ok), []);
  has(rules.openAIStrict({ ...ok, strict: false }), /sent with strict: false/);
  has(rules.openAIStrict({ ...ok, parameters: obj({ u: obj({ x: { type: 'string' } }, { minProperties: 1 }) }) }), /keyword minProperties at properties.u is not supported/);
  has(rules.openAIStrict({ ...ok, parameters: obj({ f: { description: 'anything' } }) }), /no type at properties.f/);
  has(rules.openAIStrict({ ...ok, parameters: obj({ f: { type: 'string', format: 'uri' } }) }), /format "uri" at properties.f/);
  has(rules.openAIStrict({ ...ok, parameters: obj({ m: { type: 'object', additionalProperties: { type: 'string' } } }) }), /object at properties.m lacks additionalProperties: false/);
  has(rules.openAIStrict({ ...ok, parameters: { ...obj({ a: { type: 'string' } }), required: [] } }), /missing: a/);
  has(rules.openAIStrict({ ...ok, parameters: { ...obj({}), anyOf: [obj({})] } }), /root uses anyOf/);
  assert.deepEqual(rules.openAIStrict({ ...ok, parameters: obj({ v: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] } }) }), []);
});

test('gemini: names, one type per schema, formats, keyword subset', () => {
  const ok = { name: 'send_email', parametersJsonSchema: obj({ to: { type: ['array', 'null'], items: { type: 'string' } }, at: { type: 'string', format: 'date-time' }, n: { type: 'integer', format: 'int64' } }) };
  assert.deepEqual(rules.gemini(ok), []);
  has(rules.gemini({ ...ok, name: '1tool' }), /name "1tool" does not match/);
  has(rules.gemini({ ...ok, parametersJsonSchema: obj({ to: { type: ['string', 'array'] } }) }), /type \["string","array"\] at parametersJsonSchema.properties.to/);
  has(rules.gemini({ ...ok, parametersJsonSchema: obj({ e: { type: 'string', format: 'email' } }) }), /format "email" at parametersJsonSchema.properties.e/);
  has(rules.gemini({ ...ok, parametersJsonSchema: obj({ n: { type: 'number', format: 'int32' } }) }), /format "int32"/);
  has(rules.gemini({ ...ok, parametersJsonSchema: obj({ c: { type: 'string', const: 'x' } }) }), /keyword const at parametersJsonSchema.properties.c/);
  has(rules.gemini({ ...ok, parametersJsonSchema: obj({ 'a-b': { type: 'string' } }) }), /parameter name "a-b"/);
  has(rules.gemini({ ...ok, responseJsonSchema: obj({ x: { type: ['string', 'number'] } }) }), /at responseJsonSchema.properties.x/);
  assert.deepEqual(rules.gemini({ ...ok, parametersJsonSchema: obj({ v: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] } }) }), []);
});

test('anthropic: name and object input_schema', () => {
  const ok = { name: 'get_client', description: 'd', input_schema: { type: 'object', properties: null, required: null } };
  assert.deepEqual(rules.anthropic(ok, { type: 'object' }), []);
  has(rules.anthropic({ ...ok, name: 'x'.repeat(65) }), /does not match/);
  has(rules.anthropic(ok, { type: 'array' }), /inputSchema.type is "array"/);
});

test('vercel: function tool with an object schema', () => {
  const ok = { type: 'function', name: 't', inputSchema: obj({}) };
  assert.deepEqual(rules.vercel(ok), []);
  has(rules.vercel({ ...ok, inputSchema: { type: 'string' } }), /inputSchema.type is "string"/);
  has(rules.vercel({ ...ok, inputSchema: undefined }), /inputSchema is missing/);
});
