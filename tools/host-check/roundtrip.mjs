// Round trips: one cheap read-only tool per server goes through each SDK's
// agent loop with a scripted model instead of a provider (no network). The
// model's first turn calls the tool with valid arguments; the SDK calls our
// server; the model's second turn must find the server's real result in
// what the SDK sends it (the server-specific `expect` text), then answers.
// This proves the converted tool is not only accepted but usable: name,
// arguments and result survive both directions.
import { Agent, MCPServerStdio, Usage, run } from '@openai/agents';
import { createMCPClient } from '@ai-sdk/mcp';
import { StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

import { finalMessage, textResult, toolCallResult } from './hosts.mjs';
import { launch } from './servers.mjs';

// textOf collects every string inside v: SDKs wrap a tool result in their
// own shapes (output_text items, { type: 'json', value }), and the check is
// only that the server's text is in there somewhere.
function textOf(v) {
  if (typeof v === 'string') return v;
  if (v === null || typeof v !== 'object') return '';
  return Object.values(v).map(textOf).join('\n');
}

async function openAIAgentLoop(s) {
  const { tool, args, expect } = s.roundTrip;
  const server = new MCPServerStdio({ name: s.name, ...launch(s) });
  await server.connect();
  try {
    let seen;
    let turns = 0;
    const model = {
      async getResponse(request) {
        turns++;
        if (turns === 1) {
          return {
            usage: new Usage(),
            output: [{ type: 'function_call', callId: 'call_host_check', name: tool, arguments: JSON.stringify(args), status: 'completed' }],
          };
        }
        const items = Array.isArray(request.input) ? request.input : [];
        seen = items.find((i) => i.type === 'function_call_result' && i.callId === 'call_host_check');
        return { usage: new Usage(), output: [finalMessage('done')] };
      },
      // eslint-disable-next-line require-yield
      async *getStreamedResponse() { throw new Error('not streamed'); },
    };
    const agent = new Agent({ name: 'host-check', instructions: `call ${tool}`, model, mcpServers: [server] });
    const result = await run(agent, `call ${tool}`, { maxTurns: 3 });
    if (!seen) return `the second turn got no result for the call (${turns} turns)`;
    if (!textOf(seen.output).includes(expect)) return `the result the model got lacks ${expect}: ${JSON.stringify(seen.output).slice(0, 300)}`;
    if (result.finalOutput !== 'done') return `final output ${JSON.stringify(result.finalOutput)}`;
    return '';
  } finally {
    await server.close();
  }
}

async function aiGenerateTextLoop(s) {
  const { tool, args, expect } = s.roundTrip;
  const client = await createMCPClient({ transport: new StdioMCPTransport({ ...launch(s), stderr: 'ignore' }) });
  try {
    let seen;
    const model = new MockLanguageModelV4({
      doGenerate: async (options) => {
        const results = options.prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content);
        if (results.length === 0) return toolCallResult('call_host_check', tool, args);
        seen = results.find((p) => p.type === 'tool-result' && p.toolCallId === 'call_host_check');
        return textResult('done');
      },
    });
    const result = await generateText({ model, tools: await client.tools(), prompt: `call ${tool}`, stopWhen: stepCountIs(3) });
    if (!seen) return `the second turn got no result for the call (${model.doGenerateCalls.length} model calls)`;
    if (!textOf(seen.output).includes(expect)) return `the result the model got lacks ${expect}: ${JSON.stringify(seen.output).slice(0, 300)}`;
    if (result.text !== 'done') return `final text ${JSON.stringify(result.text)}`;
    return '';
  } finally {
    await client.close();
  }
}

export async function roundTrips(servers) {
  const out = [];
  for (const s of servers) {
    for (const [host, loop] of [['openai-agents', openAIAgentLoop], ['ai-generateText', aiGenerateTextLoop]]) {
      let detail;
      try { detail = await loop(s); } catch (e) { detail = `threw ${e?.stack ?? e}`; }
      out.push({ server: s.name, tool: s.roundTrip.tool, host, ok: detail === '', ...(detail ? { detail } : {}) });
    }
  }
  return out;
}
