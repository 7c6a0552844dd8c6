// Each host lists a server's tools with its own SDK's MCP client and turns
// them into the request it would send, with the SDK's own conversion code;
// rules.mjs then judges that request. Nothing here rewrites a schema: what
// is checked is what the SDK puts on the wire.
//
// Every host function takes a server (servers.mjs) and returns
// { [host]: { [tool]: reasons[] } } for the host(s) it covers.
import { Agent, MCPServerStdio, Usage, mcpToFunctionTool, run, setTracingDisabled } from '@openai/agents';
import { OpenAIResponsesModel } from '@openai/agents-openai';
import OpenAI from 'openai';
import { validateInputTools } from 'openai/lib/parser';
import { mcpToTool } from '@google/genai';
import { mcpTools as anthropicMcpTools } from '@anthropic-ai/sdk/helpers/beta/mcp';
import { createMCPClient } from '@ai-sdk/mcp';
import { StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { generateText } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import * as rules from './rules.mjs';
import { launch } from './servers.mjs';

// The agent loop would otherwise export traces to OpenAI.
setTracingDisabled(true);
// The Agents SDK logs why a schema could not be made strict, but by default
// replaces the reason with its type ("object") as tool data may be
// sensitive; here the data is only our own schemas, and the reason is the
// finding.
process.env.OPENAI_AGENTS_DONT_LOG_TOOL_DATA = '0';

// captureOpenAIRequest returns the body OpenAIResponsesModel would POST to
// /v1/responses for request, using the openai client with a fetch that
// keeps the body and answers nothing: no network, the real serialization.
async function captureOpenAIRequest(request) {
  let body;
  const client = new OpenAI({
    apiKey: 'host-check', baseURL: 'http://127.0.0.1:9/v1', maxRetries: 0,
    fetch: async (_url, init) => { body = JSON.parse(init.body); throw new Error('host-check: request captured'); },
  });
  await new OpenAIResponsesModel(client, 'gpt-5').getResponse(request).catch(() => {});
  if (!body) throw new Error('OpenAIResponsesModel sent no request');
  return body;
}

// openAIWire runs the agent loop once with MCP tools converted as the
// Agents SDK converts them (strict or not) and returns the tools of the
// Responses API request it would send.
async function openAIWire(server, strict) {
  let tools;
  const model = {
    async getResponse(request) {
      tools = (await captureOpenAIRequest(request)).tools ?? [];
      return { usage: new Usage(), output: [finalMessage('captured')] };
    },
    // eslint-disable-next-line require-yield
    async *getStreamedResponse() { throw new Error('not streamed'); },
  };
  const agent = new Agent({ name: 'host-check', instructions: 'check', model, mcpServers: [server], mcpConfig: { convertSchemasToStrict: strict } });
  await run(agent, 'list your tools', { maxTurns: 1 });
  return tools;
}

export function finalMessage(text) {
  return { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text }] };
}

// strictFallbackReasons converts each MCP tool with convertSchemasToStrict
// through mcpToFunctionTool (what getAllMcpTools calls per tool) and keeps
// the warning the SDK logs when it falls back to non-strict, so a strict
// rejection carries the SDK's own reason.
async function strictFallbackReasons(server, mcpTools) {
  const out = {};
  const warn = console.warn;
  try {
    for (const t of mcpTools) {
      const said = [];
      console.warn = (...a) => said.push(a.map((x) => (x instanceof Error ? x.message : String(x))).join(' '));
      const ft = mcpToFunctionTool(t, server, true);
      if (ft.strict !== true) out[t.name] = said.length ? `Agents SDK: ${said.join('; ')}` : 'Agents SDK: strict conversion fell back to non-strict';
    }
  } finally {
    console.warn = warn;
  }
  return out;
}

// quiet runs fn with console.warn kept from the terminal: the SDK's
// fallback warnings are reported per tool by strictFallbackReasons.
async function quiet(fn) {
  const warn = console.warn;
  console.warn = () => {};
  try { return await fn(); } finally { console.warn = warn; }
}

export async function openAIHosts(s) {
  const server = new MCPServerStdio({ name: s.name, ...launch(s), cacheToolsList: true });
  await server.connect();
  try {
    const listed = await server.listTools();
    const nonStrict = await quiet(() => openAIWire(server, false));
    const strict = await quiet(() => openAIWire(server, true));
    const fallback = await strictFallbackReasons(server, listed);
    const result = { openai: {}, 'openai-strict': {} };
    for (const t of listed) {
      const wire = nonStrict.find((w) => w.name === t.name);
      result.openai[t.name] = wire ? rules.openAI(wire) : ['not in the request the Agents SDK built'];
      const sw = strict.find((w) => w.name === t.name);
      if (!sw) { result['openai-strict'][t.name] = ['not in the request the Agents SDK built']; continue; }
      let reasons = rules.openAIStrict(sw);
      if (fallback[t.name]) {
        // Converting, the SDK lists every property as required (optional
        // ones become nullable); after a fallback that step never ran, so a
        // "not every property required" finding would only restate the
        // fallback. The SDK's reason says what stopped the conversion.
        reasons = reasons.filter((r) => !/does not list every property as required/.test(r));
        reasons.splice(reasons.findIndex((r) => r.startsWith('sent with strict: false')) + 1, 0, fallback[t.name]);
      }
      // The openai package's own gate for strict tools (used by
      // chat.completions.parse / runTools): a tool not marked strict fails it.
      try {
        validateInputTools([{ type: 'function', function: { name: sw.name, description: sw.description, parameters: sw.parameters, strict: sw.strict } }]);
      } catch (e) {
        reasons.push(`openai validateInputTools: ${e.message}`);
      }
      result['openai-strict'][t.name] = reasons;
    }
    return { listed: listed.length, result };
  } finally {
    await server.close();
  }
}

// mcpSdkClient connects the official MCP TypeScript client, which both
// @google/genai's mcpToTool and @anthropic-ai/sdk's mcpTools take.
async function mcpSdkClient(s) {
  const l = launch(s);
  const transport = new StdioClientTransport({ ...l, stderr: 'ignore' });
  const client = new Client({ name: 'mcp-fleet-host-check', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

export async function geminiHost(s) {
  const client = await mcpSdkClient(s);
  try {
    // mcpToTool is the CallableTool generateContent takes; tool() is the
    // Tool it sends (functionDeclarations with parametersJsonSchema).
    const callable = mcpToTool(client);
    const tool = await callable.tool();
    const result = { gemini: {} };
    for (const decl of tool.functionDeclarations ?? []) result.gemini[decl.name] = rules.gemini(decl);
    return { listed: (tool.functionDeclarations ?? []).length, result };
  } finally {
    await client.close();
  }
}

export async function anthropicHost(s) {
  const client = await mcpSdkClient(s);
  try {
    const { tools } = await client.listTools();
    const converted = anthropicMcpTools(tools, client);
    const result = { anthropic: {} };
    converted.forEach((t, i) => {
      // What messages.create would send: the runnable's Claude API fields.
      const { run: _run, parse: _parse, ...wire } = t;
      result.anthropic[t.name] = rules.anthropic(JSON.parse(JSON.stringify(wire)), tools[i].inputSchema);
    });
    return { listed: tools.length, result };
  } finally {
    await client.close();
  }
}

export async function vercelHost(s) {
  const client = await createMCPClient({ transport: new StdioMCPTransport({ ...launch(s), stderr: 'ignore' }) });
  try {
    const tools = await client.tools();
    // generateText prepares the tools for the model (ai's own schema
    // handling: asSchema, the JSON Schema it resolves); the mock model
    // records the call options, i.e. exactly what a provider receives.
    const model = new MockLanguageModelV4({ doGenerate: { ...textResult('captured') } });
    await generateText({ model, tools, prompt: 'list your tools' });
    const sent = model.doGenerateCalls[0]?.tools ?? [];
    const result = { vercel: {} };
    for (const name of Object.keys(tools)) {
      const wire = sent.find((t) => t.name === name);
      result.vercel[name] = wire ? rules.vercel(wire) : ['not among the tools generateText passed to the model'];
    }
    return { listed: Object.keys(tools).length, result };
  } finally {
    await client.close();
  }
}

const zeroUsage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};
export function textResult(text) {
  return { content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage: zeroUsage, warnings: [] };
}
export function toolCallResult(id, toolName, args) {
  return {
    content: [{ type: 'tool-call', toolCallId: id, toolName, input: JSON.stringify(args) }],
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: zeroUsage, warnings: [],
  };
}

export const HOSTS = ['openai', 'openai-strict', 'gemini', 'anthropic', 'vercel'];
export const HOST_RUNS = [openAIHosts, geminiHost, anthropicHost, vercelHost];
