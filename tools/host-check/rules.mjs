// The providers' published request rules for a function tool, applied to
// what each host SDK actually puts on the wire (see hosts.mjs). Every rule
// names the provider document it comes from, so a rule can be checked
// against the source rather than trusted; a rule returns reasons, each
// naming the keyword and the schema path (`properties.to.items`) at fault,
// because the fix is made in the tool's schema and must know where.
//
// Where the providers' own documents disagree with each other, the comment
// says which one is followed and why.
import Ajv2020 from 'ajv/dist/2020.js';

// -------------------------------------------------------------- schema walk

// walk visits every subschema of root, depth first, with its path. Paths use
// the schema's own keywords (properties.x, items, anyOf[1], $defs.y) so a
// reason points at the exact place in the tool's inputSchema.
export function walk(root, visit) {
  const seen = new Set();
  const go = (s, p, depth) => {
    if (s === null || typeof s !== 'object' || Array.isArray(s) || seen.has(s)) return;
    seen.add(s);
    visit(s, p, depth);
    const at = (k) => (p ? `${p}.${k}` : k);
    for (const key of ['properties', '$defs', 'definitions', 'patternProperties']) {
      if (s[key] && typeof s[key] === 'object') {
        for (const [name, sub] of Object.entries(s[key])) go(sub, at(`${key}.${name}`), depth + (key === 'properties' ? 1 : 0));
      }
    }
    for (const key of ['items', 'additionalProperties', 'not', 'contains', 'propertyNames', 'if', 'then', 'else']) {
      if (s[key] && typeof s[key] === 'object') {
        if (Array.isArray(s[key])) s[key].forEach((sub, i) => go(sub, at(`${key}[${i}]`), depth));
        else go(s[key], at(key), depth);
      }
    }
    for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems']) {
      if (Array.isArray(s[key])) s[key].forEach((sub, i) => go(sub, at(`${key}[${i}]`), depth));
    }
  };
  go(root, '', 1);
}

const where = (p) => (p ? `at ${p}` : 'at the root');
const typesOf = (s) => (Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type]);

// Every host sends the schema as JSON Schema (MCP: "inputSchema: a JSON
// Schema object defining the expected parameters"; OpenAI: "parameters ...
// described as a JSON Schema object"; Anthropic: "input_schema: JSON schema
// for this tool's input"). MCP's default dialect is 2020-12, so the schema
// must be valid against that meta-schema: a malformed schema is refused by
// every provider before any subset rule applies.
const ajv = new Ajv2020({ strict: false, validateFormats: false });
export function validJSONSchema(schema) {
  if (ajv.validateSchema(schema)) return [];
  return ajv.errors.map((e) => `not a valid JSON Schema (2020-12): ${e.instancePath || '/'} ${e.message}`);
}

// objectRoot: every provider wants the parameters to be one object whose
// properties are the arguments.
function objectRoot(schema, field) {
  if (schema === null || typeof schema !== 'object') return [`${field} is missing`];
  if (schema.type !== 'object') return [`${field}.type is ${JSON.stringify(schema.type)}, not "object"`];
  return [];
}

// ------------------------------------------------------------------ OpenAI

// OpenAI API reference, FunctionTool / ChatCompletionFunctions: "name: The
// name of the function to be called. Must be a-z, A-Z, 0-9, or contain
// underscores and dashes, with a maximum length of 64."
export const OPENAI_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
// The API refuses a longer function description with string_above_max_length
// on tools[i].description ("Expected a string with maximum length 1024").
export const OPENAI_DESCRIPTION_MAX = 1024;

// openAI checks one tool as the Responses API receives it
// ({type, name, description, parameters, strict}).
export function openAI(tool) {
  const reasons = [];
  if (tool.type !== 'function') reasons.push(`tool type ${JSON.stringify(tool.type)}, not "function"`);
  if (!OPENAI_NAME.test(tool.name ?? '')) reasons.push(`name ${JSON.stringify(tool.name)} does not match ${OPENAI_NAME}`);
  const d = tool.description ?? '';
  if (d.length > OPENAI_DESCRIPTION_MAX) reasons.push(`description is ${d.length} characters; OpenAI allows at most ${OPENAI_DESCRIPTION_MAX}`);
  reasons.push(...objectRoot(tool.parameters, 'parameters'));
  if (tool.parameters && typeof tool.parameters === 'object') reasons.push(...validJSONSchema(tool.parameters));
  return reasons;
}

// OpenAI Structured Outputs guide, "Supported schemas" (strict: true).
// Supported types: string, number, boolean, integer, object, array, enum,
// anyOf. Supported properties: strings pattern, format (and, since the May
// 2025 expansion, minLength/maxLength); numbers multipleOf, maximum,
// exclusiveMaximum, minimum, exclusiveMinimum; arrays minItems, maxItems.
// Objects: properties, required, additionalProperties. Definitions: $defs
// and $ref. Annotations (title, description, default, examples) carry no
// constraint; OpenAI's own Agents SDK treats them as metadata in strict mode
// and api.openai.com accepts them (Azure OpenAI has been reported to refuse
// a non-null default: an Azure-specific rule, not applied here).
// Unsupported for all models: allOf, not, dependentRequired,
// dependentSchemas, if/then/else; and for objects patternProperties,
// unevaluatedProperties, propertyNames, minProperties, maxProperties; for
// arrays unevaluatedItems, contains, minContains, maxContains, uniqueItems.
const STRICT_KEYWORDS = new Set([
  'type', 'description', 'title', 'default', 'examples', '$comment', 'deprecated', 'readOnly', 'writeOnly',
  'enum', 'const', 'anyOf', '$ref', '$defs', 'definitions', '$schema', '$id', '$anchor',
  'properties', 'required', 'additionalProperties',
  'items', 'minItems', 'maxItems',
  'pattern', 'format', 'minLength', 'maxLength',
  'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
]);
// "Supported string formats: date-time, time, date, duration, email,
// hostname, ipv4, ipv6, uuid."
const STRICT_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
const STRICT_TYPES = new Set(['string', 'number', 'boolean', 'integer', 'object', 'array', 'null']);
// "A schema may have up to 5000 object properties total, with up to 10
// levels of nesting"; "up to 1000 enum values across all enum properties".
const STRICT_MAX_PROPERTIES = 5000;
const STRICT_MAX_DEPTH = 10;
const STRICT_MAX_ENUM_VALUES = 1000;

// openAIStrict checks a tool that must go out with strict: true.
export function openAIStrict(tool) {
  const reasons = openAI(tool);
  // The Agents SDK falls back to strict: false when it cannot convert a
  // schema; the request then succeeds but without the strict guarantee, so
  // for a strict host that is a rejection. hosts.mjs adds the SDK's reason.
  if (tool.strict !== true) reasons.push('sent with strict: false (the SDK could not convert it to strict mode)');
  const p = tool.parameters;
  if (!p || typeof p !== 'object') return reasons;
  // "The root level object must be an object, and not use anyOf."
  if (p.anyOf) reasons.push('the root uses anyOf');
  let properties = 0;
  let enums = 0;
  walk(p, (s, path, depth) => {
    for (const k of Object.keys(s)) {
      if (!STRICT_KEYWORDS.has(k)) reasons.push(`keyword ${k} ${where(path)} is not supported in strict mode`);
    }
    const types = typesOf(s);
    if (types.length === 0 && !s.anyOf && !s.$ref && !s.enum && !('const' in s)) {
      reasons.push(`no type ${where(path)}: strict mode needs every schema typed (type, anyOf, enum or $ref)`);
    }
    for (const t of types) if (!STRICT_TYPES.has(t)) reasons.push(`type ${JSON.stringify(t)} ${where(path)} is not supported`);
    if (typeof s.format === 'string' && !STRICT_FORMATS.has(s.format)) reasons.push(`format ${JSON.stringify(s.format)} ${where(path)} is not a supported string format`);
    if (depth > STRICT_MAX_DEPTH) reasons.push(`nesting depth ${depth} ${where(path)} exceeds ${STRICT_MAX_DEPTH}`);
    if (Array.isArray(s.enum)) enums += s.enum.length;
    // "additionalProperties: false must always be set in objects" and "all
    // fields or function parameters must be specified as required".
    if (types.includes('object') || s.properties) {
      if (s.additionalProperties !== false) reasons.push(`object ${where(path)} lacks additionalProperties: false`);
      const props = Object.keys(s.properties ?? {});
      properties += props.length;
      const req = new Set(s.required ?? []);
      const optional = props.filter((k) => !req.has(k));
      if (optional.length) reasons.push(`object ${where(path)} does not list every property as required (missing: ${optional.join(', ')})`);
    }
  });
  if (properties > STRICT_MAX_PROPERTIES) reasons.push(`${properties} object properties in total exceed ${STRICT_MAX_PROPERTIES}`);
  if (enums > STRICT_MAX_ENUM_VALUES) reasons.push(`${enums} enum values exceed ${STRICT_MAX_ENUM_VALUES}`);
  return reasons;
}

// ------------------------------------------------------------------ Gemini

// Gemini API reference, FunctionDeclaration: "name: Must start with a
// letter or an underscore. Must be a-z, A-Z, 0-9, or contain underscores,
// dots, colons and dashes, with a maximum length of 64."
export const GEMINI_NAME = /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/;
// FunctionDeclaration.parameters: "Parameter names must start with a letter
// or an underscore and must only contain chars a-z, A-Z, 0-9, or
// underscores with a maximum length of 64."
export const GEMINI_PARAM = /^[a-zA-Z_][a-zA-Z0-9_]{0,63}$/;
// The Schema object ("a select subset of an OpenAPI 3.0 schema object")
// has these fields, and parametersJsonSchema adds the JSON Schema keywords
// listed in the structured-output guide's "JSON Schema support" (anyOf,
// $ref, $defs, additionalProperties, prefixItems). Anything else is not in
// the subset.
const GEMINI_KEYWORDS = new Set([
  'type', 'format', 'title', 'description', 'nullable', 'default', 'example',
  'enum', 'items', 'minItems', 'maxItems', 'prefixItems',
  'properties', 'required', 'propertyOrdering', 'minProperties', 'maxProperties', 'additionalProperties',
  'minimum', 'maximum', 'minLength', 'maxLength', 'pattern',
  'anyOf', '$ref', '$defs', '$id', '$anchor',
]);
// Schema.format: "Supported formats: for NUMBER type: float, double; for
// INTEGER type: int32, int64; for STRING type: enum, date-time"; the JSON
// Schema support list adds date and time for strings. Other string formats
// (email, uri, ...) are not supported.
const GEMINI_FORMATS = {
  string: new Set(['enum', 'date-time', 'date', 'time']),
  integer: new Set(['int32', 'int64']),
  number: new Set(['float', 'double']),
};
const GEMINI_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);

// geminiSchema checks one schema sent as parametersJsonSchema or
// responseJsonSchema.
function geminiSchema(schema, field) {
  const reasons = [];
  walk(schema, (s, path) => {
    const at = path ? `${field}.${path}` : field;
    for (const k of Object.keys(s)) {
      if (!GEMINI_KEYWORDS.has(k)) reasons.push(`keyword ${k} at ${at} is not in Gemini's schema subset`);
    }
    // The Schema has one `type`; in JSON Schema form a list is understood
    // only as "this type or null" (type: ["string", "null"]). Alternatives
    // of different types are written as anyOf.
    const types = typesOf(s);
    for (const t of types) if (!GEMINI_TYPES.has(t)) reasons.push(`type ${JSON.stringify(t)} at ${at} is not a Gemini type`);
    const nonNull = types.filter((t) => t !== 'null');
    if (Array.isArray(s.type) && nonNull.length > 1) {
      reasons.push(`type ${JSON.stringify(s.type)} at ${at}: Gemini takes one type per schema (or one type and "null"); use anyOf for alternatives`);
    }
    if (s.format !== undefined) {
      const allowed = nonNull.length === 1 ? GEMINI_FORMATS[nonNull[0]] : undefined;
      if (!allowed || !allowed.has(s.format)) {
        reasons.push(`format ${JSON.stringify(s.format)} at ${at} is not supported for type ${JSON.stringify(s.type)} (supported: ${allowed ? [...allowed].join(', ') : 'none'})`);
      }
    }
  });
  return reasons;
}

// gemini checks one FunctionDeclaration as @google/genai builds it.
export function gemini(decl) {
  const reasons = [];
  if (!GEMINI_NAME.test(decl.name ?? '')) reasons.push(`name ${JSON.stringify(decl.name)} does not match ${GEMINI_NAME}`);
  // FunctionDeclaration.parametersJsonSchema: "The schema must describe an
  // object where the properties are the parameters to the function."
  const p = decl.parametersJsonSchema ?? decl.parameters;
  const field = decl.parametersJsonSchema ? 'parametersJsonSchema' : 'parameters';
  if (p !== undefined) {
    reasons.push(...objectRoot(p, field));
    for (const name of Object.keys(p.properties ?? {})) {
      if (!GEMINI_PARAM.test(name)) reasons.push(`parameter name ${JSON.stringify(name)} does not match ${GEMINI_PARAM}`);
    }
    reasons.push(...validJSONSchema(p), ...geminiSchema(p, field));
  }
  if (decl.responseJsonSchema !== undefined) {
    reasons.push(...validJSONSchema(decl.responseJsonSchema), ...geminiSchema(decl.responseJsonSchema, 'responseJsonSchema'));
  }
  return reasons;
}

// --------------------------------------------------------------- Anthropic

// Anthropic Messages API, tools[].name: "Name of the tool. This is how the
// tool will be called by the model and in tool_use blocks." and must match
// ^[a-zA-Z0-9_-]{1,64}$ (the request is refused otherwise).
export const ANTHROPIC_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

// anthropic checks one tool as the SDK's mcpTool helper builds it. original
// is the MCP inputSchema: the helper forces input_schema.type to "object",
// which would hide a tool whose schema is not an object at all, so the
// original's type is checked too.
export function anthropic(tool, original) {
  const reasons = [];
  if (!ANTHROPIC_NAME.test(tool.name ?? '')) reasons.push(`name ${JSON.stringify(tool.name)} does not match ${ANTHROPIC_NAME}`);
  // input_schema: "JSON schema for this tool's input. This defines the shape
  // of the input that your tool accepts"; its type is the literal "object".
  reasons.push(...objectRoot(tool.input_schema, 'input_schema'));
  if (original && original.type !== 'object') reasons.push(`inputSchema.type is ${JSON.stringify(original.type)}; the SDK helper replaced it with "object"`);
  if (tool.input_schema && typeof tool.input_schema === 'object') {
    // The helper writes properties/required: null when the MCP schema has
    // none (the SDK's type allows it); null is not a JSON Schema value, so
    // validate the schema without those placeholders.
    const s = { ...tool.input_schema };
    for (const k of ['properties', 'required']) if (s[k] === null) delete s[k];
    reasons.push(...validJSONSchema(s));
  }
  return reasons;
}

// ------------------------------------------------------------ Vercel AI SDK

// vercel checks one tool as generateText hands it to the language model
// (LanguageModelV4FunctionTool). The AI SDK's tool() contract: "inputSchema:
// the schema of the input that the tool expects"; function tools are called
// with a JSON object, so the schema must describe an object. The provider
// adapters forward the schema unchanged (@ai-sdk/google as
// parametersJsonSchema, @ai-sdk/openai as parameters), so an agent on the
// AI SDK with those providers meets the gemini and openai rules as well.
export function vercel(tool) {
  const reasons = [];
  if (tool.type !== 'function') reasons.push(`tool type ${JSON.stringify(tool.type)}, not "function"`);
  reasons.push(...objectRoot(tool.inputSchema, 'inputSchema'));
  if (tool.inputSchema && typeof tool.inputSchema === 'object') reasons.push(...validJSONSchema(tool.inputSchema));
  return reasons;
}
