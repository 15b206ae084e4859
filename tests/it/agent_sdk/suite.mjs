// rein driven by the real TypeScript Agent SDK (`@anthropic-ai/claude-agent-sdk`, pinned in
// agent_sdk/mod.rs). Run by `tests/it/agent_sdk/mod.rs`, one case per process:
//
//     node suite.mjs CASE
//
// with REIN_BIN the rein binary and SANDBOX a fresh directory (project SANDBOX/project, home
// SANDBOX/home). Each case checks a side effect or what a callback saw; a failed check throws,
// so node exits non-zero with the stack.

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { query, tool, createSdkMcpServer } from '@anthropic-ai/claude-agent-sdk';
import { z } from 'zod';

const REIN = process.env.REIN_BIN;
const SANDBOX = process.env.SANDBOX;
const PROJECT = join(SANDBOX, 'project');
const HOME = join(SANDBOX, 'home');
mkdirSync(PROJECT, { recursive: true });
mkdirSync(HOME, { recursive: true });

let scripts = 0;
function script(turns) {
  const path = join(SANDBOX, `mock-${scripts++}.json`);
  writeFileSync(path, JSON.stringify(turns));
  return path;
}
const bash = (command) => ({ tool_use: [{ name: 'Bash', input: { command } }] });
const say = (text) => ({ text });

function options(turns, extra = {}) {
  return {
    pathToClaudeCodeExecutable: REIN,
    cwd: PROJECT,
    env: {
      ...process.env,
      HOME,
      REIN_HOME: join(HOME, '.rein'),
      REIN_MANAGED_SETTINGS_DIR: join(HOME, 'no-managed'),
      IS_SANDBOX: '1',
    },
    extraArgs: turns ? { 'mock-script': script(turns) } : {},
    ...extra,
  };
}

async function collect(q) {
  const out = [];
  for await (const m of q) out.push(m);
  return out;
}

const results = (msgs) => msgs.filter((m) => m.type === 'result');
const toolResults = (msgs) =>
  msgs
    .filter((m) => m.type === 'user' && Array.isArray(m.message.content))
    .flatMap((m) => m.message.content.filter((b) => b.type === 'tool_result'));
const textOf = (b) => (typeof b.content === 'string' ? b.content : b.content.map((c) => c.text).join('\n'));

const cases = {
  async query_oneshot() {
    const msgs = await collect(
      query({ prompt: '执行命令 echo hi > out.txt', options: options(null, { permissionMode: 'bypassPermissions', allowDangerouslySkipPermissions: true }) }),
    );
    assert.equal(readFileSync(join(PROJECT, 'out.txt'), 'utf8'), 'hi\n');
    const init = msgs.find((m) => m.type === 'system' && m.subtype === 'init');
    assert.match(init.claude_code_version, /^\d+\.\d+\.\d+$/);
    const [r] = results(msgs);
    assert.equal(r.subtype, 'success');
    assert.equal(typeof r.total_cost_usd, 'number');
    assert.equal(typeof r.duration_api_ms, 'number');
    assert.deepEqual(r.permission_denials, []);
  },

  async hooks_and_can_use_tool() {
    writeFileSync(join(PROJECT, 'victim.txt'), 'keep me');
    const seen = [];
    const guard = async (input, toolUseId) => {
      seen.push(['pre', input.tool_input.command, toolUseId]);
      if (input.tool_input.command.startsWith('rm ')) {
        return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'ts hook says no' } };
      }
      return {};
    };
    const canUseTool = async (name, input, { toolUseID, suggestions }) => {
      seen.push(['ask', name, input.command, toolUseID]);
      if (input.command.includes('rewrite')) {
        return { behavior: 'allow', updatedInput: { command: 'touch rewritten.txt' } };
      }
      return { behavior: 'deny', message: 'ts callback denies' };
    };
    const msgs = await collect(
      query({
        prompt: 'go',
        options: options([bash('rm victim.txt'), bash('touch rewrite.txt'), bash('touch denied.txt'), say('done')], {
          permissionMode: 'default',
          canUseTool,
          hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [guard] }] },
        }),
      }),
    );
    assert.equal(readFileSync(join(PROJECT, 'victim.txt'), 'utf8'), 'keep me');
    assert.ok(existsSync(join(PROJECT, 'rewritten.txt')));
    assert.ok(!existsSync(join(PROJECT, 'rewrite.txt')));
    assert.ok(!existsSync(join(PROJECT, 'denied.txt')));
    const texts = toolResults(msgs).map(textOf);
    assert.match(texts[0], /ts hook says no/);
    assert.match(texts[2], /ts callback denies/);
    assert.deepEqual(
      seen.filter((s) => s[0] === 'ask').map((s) => s[2]),
      ['touch rewrite.txt', 'touch denied.txt'],
    );
    assert.ok(seen.every((s) => typeof s[s.length - 1] === 'string' && s[s.length - 1].length > 0));
  },

  async sdk_mcp_tool() {
    const calls = [];
    const server = createSdkMcpServer({
      name: 'calc',
      version: '1.0.0',
      tools: [
        tool('add', 'Add two numbers', { a: z.number(), b: z.number() }, async (args) => {
          calls.push(args);
          return { content: [{ type: 'text', text: `sum=${args.a + args.b}` }] };
        }),
      ],
    });
    const msgs = await collect(
      query({
        prompt: 'add',
        options: options([{ tool_use: [{ name: 'mcp__calc__add', input: { a: 4, b: 5 } }] }, say('done')], {
          mcpServers: { calc: server },
          allowedTools: ['mcp__calc__add'],
        }),
      }),
    );
    assert.deepEqual(calls, [{ a: 4, b: 5 }]);
    assert.match(textOf(toolResults(msgs)[0]), /sum=9/);
  },

  async external_mcp_server() {
    // The SDK sends external servers in initialize (mcpServersDelivery's default), and ends
    // the session unless the answer confirms them.
    const server = join(import.meta.dirname, 'echo_server.mjs');
    const msgs = await collect(
      query({
        prompt: 'echo',
        options: options([{ tool_use: [{ name: 'mcp__echo__echo', input: { text: 'hi there' } }] }, say('echoed')], {
          mcpServers: { echo: { type: 'stdio', command: process.execPath, args: [server] } },
          allowedTools: ['mcp__echo__echo'],
        }),
      }),
    );
    const init = msgs.find((m) => m.type === 'system' && m.subtype === 'init');
    assert.deepEqual(init.mcp_servers, [{ name: 'echo', status: 'connected', source: 'dynamic' }]);
    assert.match(textOf(toolResults(msgs)[0]), /echo:hi there/);
  },

  async structured_output() {
    const schema = { type: 'object', required: ['ok'], properties: { ok: { type: 'boolean' } } };
    const msgs = await collect(
      query({
        prompt: 'check',
        options: options([{ tool_use: [{ name: 'StructuredOutput', input: { ok: true } }] }, say('checked')], {
          outputFormat: { type: 'json_schema', schema },
        }),
      }),
    );
    const [r] = results(msgs);
    assert.deepEqual(r.structured_output, { ok: true });
  },

  async interrupt_and_set_permission_mode() {
    // Streaming input: the prompt iterable stays open while the first turn runs.
    let release;
    const hold = new Promise((r) => (release = r));
    async function* prompts() {
      yield { type: 'user', message: { role: 'user', content: 'slow' }, parent_tool_use_id: null };
      await hold;
      yield { type: 'user', message: { role: 'user', content: 'write it' }, parent_tool_use_id: null };
    }
    const q = query({
      prompt: prompts(),
      options: options(
        [
          bash('sleep 30; touch late.txt'),
          { tool_use: [{ name: 'Write', input: { file_path: join(PROJECT, 'a.txt'), content: 'hi' } }] },
          say('written'),
        ],
        { permissionMode: 'default', allowedTools: ['Bash'] },
      ),
    });
    const msgs = [];
    const started = Date.now();
    for await (const m of q) {
      msgs.push(m);
      if (results(msgs).length === 0 && m.type === 'assistant' && m.message.content.some((b) => b.type === 'tool_use')) {
        await new Promise((r) => setTimeout(r, 500));
        await q.interrupt();
      }
      if (m.type === 'result' && results(msgs).length === 1) {
        assert.equal(m.subtype, 'error_during_execution');
        assert.ok(Date.now() - started < 20000, 'the interrupt did not stop the sleep');
        await q.setPermissionMode('acceptEdits');
        release();
      }
      if (results(msgs).length === 2) break;
    }
    const second = results(msgs)[1];
    assert.deepEqual(second.permission_denials, []);
    assert.ok(readFileSync(join(PROJECT, 'a.txt'), 'utf8').startsWith('hi'));
    await new Promise((r) => setTimeout(r, 1000));
    assert.ok(!existsSync(join(PROJECT, 'late.txt')), 'the interrupted command went on running');
  },
};

const name = process.argv[2];
await cases[name]();
console.log(`${name}: ok`);
