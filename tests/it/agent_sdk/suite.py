"""rein driven by the real Python Agent SDK (`claude-agent-sdk`, pinned in agent_sdk/mod.rs).

Run by `tests/it/agent_sdk/mod.rs`, one case per process:

    python3 suite.py CASE

with PYTHONPATH holding the SDK, REIN_BIN the rein binary, SANDBOX a fresh directory (the
project is SANDBOX/project, the home SANDBOX/home). Each case drives rein through the SDK and
checks a side effect (a file written or kept), what a callback saw, or what the model was sent;
a failed check raises, so the process exits non-zero with the traceback.
"""

import asyncio
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)

REIN = os.environ["REIN_BIN"]
SANDBOX = Path(os.environ["SANDBOX"])
PROJECT = SANDBOX / "project"
HOME = SANDBOX / "home"
PROJECT.mkdir(parents=True, exist_ok=True)
HOME.mkdir(parents=True, exist_ok=True)


def rein_env(**extra):
    """What rein gets besides the SDK's own variables: an isolated home, root's bypass."""
    env = {
        "HOME": str(HOME),
        "REIN_HOME": str(HOME / ".rein"),
        "REIN_MANAGED_SETTINGS_DIR": str(HOME / "no-managed"),
        "IS_SANDBOX": "1",
        "ANTHROPIC_API_KEY": "",
        "OPENAI_API_KEY": "",
    }
    env.update(extra)
    return env


def script(turns):
    """A --mock-script file for rein's mock model; returns its path."""
    path = SANDBOX / f"mock-{time.monotonic_ns()}.json"
    path.write_text(json.dumps(turns))
    return str(path)


def bash(command, id=None):
    call = {"name": "Bash", "input": {"command": command}}
    if id:
        call["id"] = id
    return {"tool_use": [call]}


def say(text):
    return {"text": text}


def options(turns=None, **kw):
    """Options for rein: the binary, the project, the isolated home, a mock script."""
    extra = dict(kw.pop("extra_args", {}))
    if turns is not None:
        extra["mock-script"] = script(turns)
    env = rein_env(**kw.pop("env", {}))
    return ClaudeAgentOptions(cli_path=REIN, cwd=str(PROJECT), env=env, extra_args=extra, **kw)


async def collect(prompt, opts):
    return [m async for m in query(prompt=prompt, options=opts)]


def results(messages):
    return [m for m in messages if isinstance(m, ResultMessage)]


def tool_results(messages):
    return [b for m in messages if isinstance(m, UserMessage) and isinstance(m.content, list)
            for b in m.content if isinstance(b, ToolResultBlock)]


def text_of(block):
    c = block.content
    if isinstance(c, list):
        return "\n".join(x.get("text", "") for x in c if isinstance(x, dict))
    return c or ""


# --- a loopback Anthropic Messages API -------------------------------------------------------

class Loopback:
    """Answers each /v1/messages request with the next scripted reply (one JSON body, not
    streamed) and keeps every request body."""

    def __init__(self, replies, overloaded=()):
        self.replies = list(replies)
        self.overloaded = set(overloaded)
        self.requests = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                if body.get("model") in outer.overloaded:
                    data = json.dumps({"type": "error", "error": {"type": "overloaded_error",
                                                                  "message": "Overloaded"}}).encode()
                    self.send_response(529)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                reply = outer.replies.pop(0) if outer.replies else say("(loopback: out of replies)")
                if "tool_use" in reply:
                    content = [{"type": "tool_use", "id": f"toolu_lb_{len(outer.requests)}_{i}",
                                "name": c["name"], "input": c["input"]}
                               for i, c in enumerate(reply["tool_use"])]
                    stop = "tool_use"
                else:
                    content = [{"type": "text", "text": reply["text"]}]
                    stop = "end_turn"
                data = json.dumps({"id": f"msg_lb_{len(outer.requests)}", "type": "message",
                                   "role": "assistant", "model": body.get("model"),
                                   "content": content, "stop_reason": stop,
                                   "usage": {"input_tokens": 10, "output_tokens": 5}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def env(self):
        return {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{self.server.server_address[1]}",
                "ANTHROPIC_API_KEY": "sk-loopback"}

    def seen(self, i):
        """Request i's messages as one string (what the model was told)."""
        return json.dumps(self.requests[i]["messages"], ensure_ascii=False)


# --- cases ------------------------------------------------------------------------------------

async def case_query_oneshot():
    msgs = await collect("执行命令 echo hi > out.txt", options(permission_mode="bypassPermissions"))
    assert (PROJECT / "out.txt").read_text() == "hi\n", msgs
    init = next(m for m in msgs if isinstance(m, SystemMessage) and m.subtype == "init")
    assert re.match(r"\d+\.\d+\.\d+", init.data["claude_code_version"]), init.data
    assert init.data["rein_version"], init.data
    assert any(isinstance(b, ToolUseBlock) and b.name == "Bash"
               for m in msgs if isinstance(m, AssistantMessage) for b in m.content)
    [r] = results(msgs)
    assert r.subtype == "success" and not r.is_error, r
    assert isinstance(r.total_cost_usd, float) and isinstance(r.duration_api_ms, int), r
    assert isinstance(r.usage, dict) and isinstance(r.model_usage, dict), r
    assert r.permission_denials == [], r
    assert r.session_id == init.data["session_id"]


async def case_query_streaming_input():
    async def prompts():
        for text in ["执行命令 echo one > a.txt", "执行命令 echo two > b.txt"]:
            yield {"type": "user", "message": {"role": "user", "content": text},
                   "parent_tool_use_id": None, "session_id": "default"}

    msgs = await collect(prompts(), options(permission_mode="bypassPermissions"))
    assert len(results(msgs)) == 2, msgs
    assert (PROJECT / "a.txt").read_text() == "one\n"
    assert (PROJECT / "b.txt").read_text() == "two\n"
    # One session for both turns.
    assert len({r.session_id for r in results(msgs)}) == 1


async def case_client_interrupt_multiturn():
    opts = options([bash("sleep 30; touch late.txt"), say("second turn answered")],
                   permission_mode="bypassPermissions")
    async with ClaudeSDKClient(options=opts) as client:
        await client.query("run the slow one")
        started = time.monotonic()
        seen = []
        async for m in client.receive_response():
            seen.append(m)
            if isinstance(m, AssistantMessage) and any(isinstance(b, ToolUseBlock) for b in m.content):
                await asyncio.sleep(0.5)
                await client.interrupt()
        [r] = results(seen)
        assert r.is_error and r.subtype == "error_during_execution", r
        assert time.monotonic() - started < 20, "the interrupt did not stop the sleep"
        await client.query("and now?")
        second = [m async for m in client.receive_response()]
        texts = [b.text for m in second if isinstance(m, AssistantMessage)
                 for b in m.content if isinstance(b, TextBlock)]
        assert "second turn answered" in texts, second
    time.sleep(1)
    assert not (PROJECT / "late.txt").exists(), "the interrupted command went on running"


async def case_permission_mode_switch():
    async with ClaudeSDKClient(options=options(permission_mode="default")) as client:
        await client.query("写入 hi 到 a.txt")
        first = [m async for m in client.receive_response()]
        [r] = results(first)
        assert [d["tool_name"] for d in r.permission_denials] == ["Write"], r
        assert not (PROJECT / "a.txt").exists()
        await client.set_permission_mode("acceptEdits")
        await client.query("写入 hi 到 a.txt")
        second = [m async for m in client.receive_response()]
        [r] = results(second)
        assert r.permission_denials == [], r
        assert (PROJECT / "a.txt").read_text().startswith("hi")
        try:
            await client.set_model("claude-opus-4-1")
        except Exception as e:  # the SDK raises the error response's text
            assert "mock provider" in str(e), e
        else:
            raise AssertionError("set_model on the mock provider should have failed")


async def case_bypass_switch_needs_the_flag():
    (PROJECT / "victim.txt").write_text("keep me")

    async def attempt(extra, settings=None):
        opts = options([bash("rm victim.txt"), say("done")], permission_mode="default",
                       extra_args=extra, settings=settings)
        async with ClaudeSDKClient(options=opts) as client:
            try:
                await client.set_permission_mode("bypassPermissions")
                refused = None
            except Exception as e:
                refused = str(e)
            await client.query("go")
            [m async for m in client.receive_response()]
        return refused

    # Claude Code 2.1.328's answer without the flag (fixture agent_sdk/bypass_switch).
    refused = await attempt({})
    assert refused == ("Cannot set permission mode to bypassPermissions because the session was "
                       "not launched with --dangerously-skip-permissions"), refused
    assert (PROJECT / "victim.txt").read_text() == "keep me"
    # An administrator's disableBypassPermissionsMode wins over the flag.
    refused = await attempt({"allow-dangerously-skip-permissions": None},
                            json.dumps({"permissions": {"disableBypassPermissionsMode": "disable"}}))
    assert refused and "disableBypassPermissionsMode" in refused, refused
    assert (PROJECT / "victim.txt").read_text() == "keep me"
    # With the flag the switch is taken, and the call runs.
    refused = await attempt({"allow-dangerously-skip-permissions": None})
    assert refused is None, refused
    assert not (PROJECT / "victim.txt").exists()


async def case_permission_mode_reaches_subagents():
    modes = []

    async def record(inp, tool_use_id, ctx):
        modes.append((inp.get("agent_id") is not None, inp["permission_mode"]))
        return {}

    turns = {
        "turns": [
            {"tool_use": [{"name": "Agent", "input": {"description": "d", "prompt": "SUB-MODE",
                                                       "subagent_type": "general-purpose"}}]},
            say("parent done"),
        ],
        "agents": [{"match": "SUB-MODE", "turns": [bash("echo sub"), say("sub done")]}],
    }
    opts = options(turns, permission_mode="default",
                   hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[record])]})
    async with ClaudeSDKClient(options=opts) as client:
        await client.set_permission_mode("acceptEdits")
        await client.query("go")
        [m async for m in client.receive_response()]
    assert modes == [(True, "acceptEdits")], modes


async def case_max_budget():
    from claude_agent_sdk import ResultError
    lb = Loopback([bash("touch one.txt"), bash("touch two.txt"), say("done")])
    prices = json.dumps({"claude-sonnet-4-5": {"input": 3, "output": 15}})
    # 10 input and 5 output tokens a reply: $0.000105 each; the second reaches the budget.
    opts = options(model="claude-sonnet-4-5", max_budget_usd=0.00015,
                   permission_mode="bypassPermissions",
                   env={**lb.env(), "REIN_PRICES": prices}, extra_args={"provider": "anthropic"})
    msgs = []
    try:
        async for m in query(prompt="go", options=opts):
            msgs.append(m)
    except ResultError as e:
        assert "Reached maximum budget ($0.00015)" in str(e), e
    else:
        raise AssertionError("the run should have ended with an error result")
    [r] = results(msgs)
    assert (r.subtype, r.is_error) == ("error_max_budget_usd", True), r
    assert r.errors == ["Reached maximum budget ($0.00015)"], r
    assert abs(r.total_cost_usd - 0.00021) < 1e-9, r
    assert (PROJECT / "one.txt").exists()
    assert not (PROJECT / "two.txt").exists(), "the call of the reply that reached the budget ran"
    assert len(lb.requests) == 2


async def case_fallback_model():
    lb = Loopback([bash("touch fell-back.txt"), say("done on the fallback")],
                  overloaded=["claude-opus-4-1"])
    opts = options(model="claude-opus-4-1", fallback_model="claude-sonnet-4-5",
                   permission_mode="bypassPermissions",
                   env={**lb.env(), "REIN_MAX_RETRIES": "0"}, extra_args={"provider": "anthropic"})
    msgs = await collect("go", opts)
    [r] = results(msgs)
    assert (r.subtype, r.result) == ("success", "done on the fallback"), r
    assert [q["model"] for q in lb.requests] == ["claude-opus-4-1", "claude-sonnet-4-5",
                                                 "claude-sonnet-4-5"], [q["model"] for q in lb.requests]
    assert (PROJECT / "fell-back.txt").exists()


async def case_set_model():
    lb = Loopback([say("one"), say("two")])
    opts = options(model="claude-sonnet-4-5", env=lb.env(), extra_args={"provider": "anthropic"})
    async with ClaudeSDKClient(options=opts) as client:
        await client.query("first")
        [m async for m in client.receive_response()]
        await client.set_model("claude-haiku-4-5")
        await client.query("second")
        second = [m async for m in client.receive_response()]
    # The switch is echoed as Claude Code echoes it (a replayed user line).
    assert any(isinstance(m, UserMessage) and m.content ==
               "<local-command-stdout>Set model to `claude-haiku-4-5`</local-command-stdout>"
               for m in second), second
    assert [r["model"] for r in lb.requests] == ["claude-sonnet-4-5", "claude-haiku-4-5"], lb.requests


async def case_hooks_deny_rewrite_context():
    (PROJECT / "victim.txt").write_text("keep me")
    lb = Loopback([bash("rm -f victim.txt"), bash("echo one > f.txt"), say("done")])
    seen = []

    async def guard(inp, tool_use_id, ctx):
        seen.append(("pre", inp["tool_input"]["command"], tool_use_id))
        cmd = inp["tool_input"]["command"]
        if cmd.startswith("rm "):
            return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                           "permissionDecision": "deny",
                                           "permissionDecisionReason": "no deleting here"}}
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                       "permissionDecision": "allow",
                                       "updatedInput": {"command": cmd.replace("one", "two")}}}

    async def after(inp, tool_use_id, ctx):
        seen.append(("post", inp["tool_response"]))
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                       "additionalContext": "POST-CONTEXT-7"}}

    async def prompt(inp, tool_use_id, ctx):
        seen.append(("ups", inp["prompt"]))
        return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                       "additionalContext": "UPS-CONTEXT-3"}}

    opts = options(env=lb.env(), extra_args={"provider": "anthropic"}, permission_mode="bypassPermissions",
                   hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[guard])],
                          "PostToolUse": [HookMatcher(matcher="Bash", hooks=[after])],
                          "UserPromptSubmit": [HookMatcher(hooks=[prompt])]})
    msgs = await collect("tidy up", opts)
    assert (PROJECT / "victim.txt").read_text() == "keep me"
    assert (PROJECT / "f.txt").read_text() == "two\n", "the rewrite was not applied"
    assert ("ups", "tidy up") in seen, seen
    assert [s[1] for s in seen if s[0] == "pre"] == ["rm -f victim.txt", "echo one > f.txt"], seen
    assert "no deleting here" in text_of(tool_results(msgs)[0])
    assert "UPS-CONTEXT-3" in lb.seen(0), "UserPromptSubmit context did not reach the model"
    assert "POST-CONTEXT-7" in lb.seen(2), "PostToolUse context did not reach the model"
    # tool_use_id of a tool event is the call's id.
    assert [s[2] for s in seen if s[0] == "pre"] == ["toolu_lb_1_0", "toolu_lb_2_0"], seen


async def case_hooks_stop_and_subagent():
    seen = []

    async def stop(inp, tool_use_id, ctx):
        seen.append(("stop", inp["stop_hook_active"]))
        if not inp["stop_hook_active"]:
            return {"decision": "block", "reason": "write the summary first"}
        return {}

    async def sub_start(inp, tool_use_id, ctx):
        seen.append(("subagent", inp["agent_type"]))
        return {"hookSpecificOutput": {"hookEventName": "SubagentStart",
                                       "additionalContext": "SUBAGENT-CONTEXT"}}

    turns = {
        "turns": [
            {"tool_use": [{"name": "Agent", "input": {"description": "look", "prompt": "LOOK-TASK",
                                                       "subagent_type": "general-purpose"}}]},
            say("first answer"),
            say("summary written"),
        ],
        "agents": [{"match": "LOOK-TASK", "turns": [say("looked")]}],
    }
    msgs = await collect("go", options(turns, permission_mode="bypassPermissions",
                                       hooks={"Stop": [HookMatcher(hooks=[stop])],
                                              "SubagentStart": [HookMatcher(hooks=[sub_start])]}))
    assert ("subagent", "general-purpose") in seen, seen
    assert [s[1] for s in seen if s[0] == "stop"] == [False, True], seen
    [r] = results(msgs)
    assert r.result == "summary written", r


async def case_can_use_tool():
    (PROJECT / "victim.txt").write_text("keep me")
    (PROJECT / ".claude").mkdir(exist_ok=True)
    (PROJECT / ".claude" / "settings.json").write_text(json.dumps(
        {"permissions": {"deny": ["Bash(rm:*)"]}}))
    asked = []

    async def decide(name, inp, ctx):
        asked.append((name, inp, ctx.tool_use_id, [s.to_dict() for s in ctx.suggestions]))
        cmd = inp.get("command", "")
        if "allow-me" in cmd:
            return PermissionResultAllow()
        if "rewrite-me" in cmd:
            return PermissionResultAllow(updated_input={"command": "touch rewritten.txt"})
        if "smuggle" in cmd:
            return PermissionResultAllow(updated_input={"command": "rm victim.txt"})
        return PermissionResultDeny(message="not this one")

    turns = [bash("touch allow-me.txt"), bash("touch rewrite-me.txt"), bash("touch smuggle.txt"),
             bash("touch deny-me.txt"), say("done")]
    msgs = await collect("go", options(turns, can_use_tool=decide, permission_mode="default"))
    assert (PROJECT / "allow-me.txt").exists()
    assert (PROJECT / "rewritten.txt").exists() and not (PROJECT / "rewrite-me.txt").exists()
    assert (PROJECT / "victim.txt").read_text() == "keep me", "a rewrite got past a deny rule"
    assert not (PROJECT / "deny-me.txt").exists()
    texts = [text_of(b) for b in tool_results(msgs)]
    assert "not this one" in texts[3], texts
    assert "rm" in texts[2] and "denied" in texts[2].lower(), texts
    assert [a[0] for a in asked] == ["Bash"] * 4, asked
    assert all(a[2] and a[2].startswith("toolu_") for a in asked), asked
    [r] = results(msgs)
    assert len(r.permission_denials) == 2, r.permission_denials


async def case_can_use_tool_updated_permissions():
    from claude_agent_sdk.types import PermissionRuleValue, PermissionUpdate
    asked = []

    async def decide(name, inp, ctx):
        asked.append(inp["command"])
        # Allow, and allow every `touch` for the rest of the session.
        return PermissionResultAllow(updated_permissions=[PermissionUpdate(
            type="addRules", rules=[PermissionRuleValue(tool_name="Bash", rule_content="touch:*")],
            behavior="allow", destination="session")])

    turns = [bash("touch a.txt"), bash("touch b.txt"), bash("mkdir c"), say("done")]
    await collect("go", options(turns, can_use_tool=decide, permission_mode="default"))
    assert (PROJECT / "a.txt").exists() and (PROJECT / "b.txt").exists() and (PROJECT / "c").is_dir()
    # The second touch ran under the rule the first answer added; mkdir was asked about.
    assert asked == ["touch a.txt", "mkdir c"], asked


async def case_can_use_tool_for_a_subagent():
    asked = []

    async def decide(name, inp, ctx):
        asked.append((name, inp.get("command"), ctx.agent_id, ctx.tool_use_id))
        return PermissionResultAllow()

    turns = {
        "turns": [
            {"tool_use": [{"name": "Agent", "input": {"description": "make", "prompt": "SUB-TASK",
                                                       "subagent_type": "general-purpose"}}]},
            say("parent done"),
        ],
        "agents": [{"match": "SUB-TASK", "turns": [bash("touch from-subagent.txt"), say("made")]}],
    }
    await collect("go", options(turns, can_use_tool=decide, permission_mode="default"))
    assert (PROJECT / "from-subagent.txt").exists()
    [(name, command, agent_id, tool_use_id)] = asked
    assert (name, command) == ("Bash", "touch from-subagent.txt"), asked
    assert agent_id, "a subagent's call must name its agent_id"
    assert tool_use_id, asked


async def case_background_task_keeps_the_sdk_listening():
    from claude_agent_sdk import TaskNotificationMessage, TaskStartedMessage
    prompts = []

    async def on_prompt(inp, tool_use_id, ctx):
        prompts.append(inp["prompt"])
        return {}

    turns = [{"tool_use": [{"name": "Bash", "input": {"command": "sleep 1; echo bg > bg.txt",
                                                      "run_in_background": True}}]},
             say("started it"), say("it finished")]
    msgs = await collect("start it", options(turns, permission_mode="bypassPermissions",
                                             hooks={"UserPromptSubmit": [HookMatcher(hooks=[on_prompt])]}))
    started = [m for m in msgs if isinstance(m, TaskStartedMessage)]
    done = [m for m in msgs if isinstance(m, TaskNotificationMessage)]
    assert len(started) == 1 and len(done) == 1, msgs
    assert done[0].status == "completed" and done[0].task_id == started[0].task_id, done
    assert (PROJECT / "bg.txt").read_text() == "bg\n"
    # The follow-up turn rein gives the finished command reached the SDK's callback: the SDK
    # kept stdin open because it saw the task start.
    assert len(prompts) == 2 and prompts[1].startswith("<task-notification>"), prompts
    assert [r.result for r in results(msgs)] == ["started it", "it finished"], results(msgs)


async def case_tools_and_rules_options():
    def init_tools(msgs):
        return next(m for m in msgs if isinstance(m, SystemMessage) and m.subtype == "init").data["tools"]

    only_bash = await collect("hi", options([say("hi")], tools=["Bash"]))
    assert init_tools(only_bash) == ["Bash"], init_tools(only_bash)
    none = await collect("hi", options([say("hi")], tools=[]))
    assert init_tools(none) == [], init_tools(none)
    (PROJECT / "victim.txt").write_text("keep me")
    msgs = await collect("go", options([bash("rm victim.txt"), say("done")],
                                       permission_mode="bypassPermissions",
                                       disallowed_tools=["Bash(rm:*)"]))
    assert (PROJECT / "victim.txt").read_text() == "keep me"
    [r] = results(msgs)
    assert [d["tool_name"] for d in r.permission_denials] == ["Bash"], r


async def case_sdk_mcp_tool():
    calls = []

    @tool("add", "Add two numbers", {"a": int, "b": int})
    async def add(args):
        calls.append(args)
        return {"content": [{"type": "text", "text": f"sum={args['a'] + args['b']}"}]}

    server = create_sdk_mcp_server("calc", "1.0.0", [add])
    pre = []

    async def guard(inp, tool_use_id, ctx):
        pre.append(inp["tool_name"])
        return {}

    turns = [{"tool_use": [{"name": "mcp__calc__add", "input": {"a": 2, "b": 3}}]}, say("done")]
    msgs = await collect("add", options(turns, mcp_servers={"calc": server},
                                        allowed_tools=["mcp__calc__add"],
                                        hooks={"PreToolUse": [HookMatcher(matcher="mcp__calc__.*",
                                                                          hooks=[guard])]}))
    assert calls == [{"a": 2, "b": 3}], calls
    assert pre == ["mcp__calc__add"], "the MCP tool call did not pass the hooks"
    assert "sum=5" in text_of(tool_results(msgs)[0])
    init = next(m for m in msgs if isinstance(m, SystemMessage) and m.subtype == "init")
    assert "mcp__calc__add" in init.data["tools"]
    assert {"name": "calc", "status": "connected"}.items() <= init.data["mcp_servers"][0].items()


async def case_mcp_toggle_and_status():
    calls = []

    @tool("add", "Add two numbers", {"a": int, "b": int})
    async def add(args):
        calls.append(args)
        return {"content": [{"type": "text", "text": f"sum={args['a'] + args['b']}"}]}

    server = create_sdk_mcp_server("calc", "1.0.0", [add])
    call = {"tool_use": [{"name": "mcp__calc__add", "input": {"a": 1, "b": 2}}]}
    opts = options([call, say("off"), call, say("on")], mcp_servers={"calc": server},
                   allowed_tools=["mcp__calc__add"])
    async with ClaudeSDKClient(options=opts) as client:
        status = await client.get_mcp_status()
        assert [(s["name"], s["status"]) for s in status["mcpServers"]] == [("calc", "connected")], status
        await client.toggle_mcp_server("calc", False)
        status = await client.get_mcp_status()
        assert status["mcpServers"][0]["status"] == "disabled", status
        await client.query("add while off")
        off = [m async for m in client.receive_response()]
        assert calls == [], "a switched-off server's tool ran"
        await client.toggle_mcp_server("calc", True)
        await client.query("add while on")
        on = [m async for m in client.receive_response()]
        assert calls == [{"a": 1, "b": 2}], calls
        assert "sum=3" in text_of(tool_results(on)[0])
        assert "sum=3" not in text_of(tool_results(off)[0])
        # An in-process server starts again too: a new handshake over the control protocol.
        await client.reconnect_mcp_server("calc")
        status = await client.get_mcp_status()
        assert status["mcpServers"][0]["status"] == "connected", status


ONE_CALL_SERVER = r'''
# A stdio MCP server (JSON-RPC lines) that answers one tools/call, naming its pid, and exits.
import json, os, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method, result = msg.get("method"), {}
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "flaky", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "ping", "description": "ping", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": f"pong from {os.getpid()}"}]}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
    if method == "tools/call":
        sys.exit(0)
'''


async def case_mcp_reconnect():
    server = SANDBOX / "one_call_server.py"
    server.write_text(ONE_CALL_SERVER)
    call = {"tool_use": [{"name": "mcp__flaky__ping", "input": {}}]}
    opts = options([call, say("first"), call, say("second")],
                   mcp_servers={"flaky": {"type": "stdio", "command": sys.executable, "args": [str(server)]}},
                   allowed_tools=["mcp__flaky__ping"])
    async with ClaudeSDKClient(options=opts) as client:
        await client.query("ping")
        first = [m async for m in client.receive_response()]
        for _ in range(50):  # the server exits after its answer; rein notices when it is reaped
            status = (await client.get_mcp_status())["mcpServers"][0]
            if status["status"] == "failed":
                break
            await asyncio.sleep(0.1)
        assert status["status"] == "failed" and "exited" in status["error"], status
        await client.reconnect_mcp_server("flaky")
        status = (await client.get_mcp_status())["mcpServers"][0]
        assert status["status"] == "connected", status
        await client.query("ping again")
        second = [m async for m in client.receive_response()]
    pids = [text_of(tool_results(ms)[0]) for ms in (first, second)]
    assert all(p.startswith("pong from ") for p in pids) and pids[0] != pids[1], pids


async def case_settings_hooks_and_callbacks():
    (PROJECT / ".claude").mkdir(exist_ok=True)
    hook = PROJECT / "log-hook.sh"
    hook.write_text("#!/bin/sh\ncat >> \"$CLAUDE_PROJECT_DIR/settings-hook.log\"\necho >> \"$CLAUDE_PROJECT_DIR/settings-hook.log\"\n")
    hook.chmod(0o755)
    (PROJECT / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": str(hook)}]}]}}))
    (PROJECT / "victim.txt").write_text("keep me")
    seen = []

    async def deny(inp, tool_use_id, ctx):
        seen.append(inp["tool_input"]["command"])
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                       "permissionDecision": "deny",
                                       "permissionDecisionReason": "callback says no"}}

    msgs = await collect("go", options([bash("rm victim.txt"), say("done")],
                                       permission_mode="bypassPermissions",
                                       setting_sources=["project"],
                                       hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[deny])]}))
    assert (PROJECT / "victim.txt").read_text() == "keep me"
    logged = [json.loads(l) for l in (PROJECT / "settings-hook.log").read_text().split("\n") if l.strip()]
    assert [l["tool_input"]["command"] for l in logged] == ["rm victim.txt"], logged
    assert seen == ["rm victim.txt"], seen
    assert "callback says no" in text_of(tool_results(msgs)[0])


async def case_resume():
    starts = []

    async def on_start(inp, tool_use_id, ctx):
        starts.append(inp["source"])
        return {}

    hooks = {"SessionStart": [HookMatcher(hooks=[on_start])]}
    first = await collect("执行命令 echo first > r.txt",
                          options(permission_mode="bypassPermissions", hooks=hooks))
    [r1] = results(first)
    second = await collect("执行命令 echo second >> r.txt",
                           options(permission_mode="bypassPermissions", hooks=hooks, resume=r1.session_id))
    [r2] = results(second)
    assert r2.session_id == r1.session_id, (r1.session_id, r2.session_id)
    assert starts == ["startup", "resume"], starts
    assert (PROJECT / "r.txt").read_text() == "first\nsecond\n"
    transcripts = list((HOME / ".rein" / "projects").glob("*/*.jsonl"))
    assert len(transcripts) == 1, transcripts
    prompts = [json.loads(l) for l in transcripts[0].read_text().splitlines()]
    users = [l for l in prompts if l.get("type") == "user" and isinstance(l["message"]["content"], str)]
    assert [u["message"]["content"] for u in users][-2:] == ["执行命令 echo first > r.txt",
                                                             "执行命令 echo second >> r.txt"], users


async def case_structured_output():
    schema = {"type": "object", "required": ["count"], "additionalProperties": False,
              "properties": {"count": {"type": "integer", "minimum": 0}}}
    turns = [{"tool_use": [{"name": "StructuredOutput", "input": {"count": "three"}}]},
             {"tool_use": [{"name": "StructuredOutput", "input": {"count": 3}}]},
             say("counted")]
    msgs = await collect("count the files", options(turns, permission_mode="default",
                                                    output_format={"type": "json_schema", "schema": schema}))
    [r] = results(msgs)
    assert r.structured_output == {"count": 3}, r
    first, second = [text_of(b) for b in tool_results(msgs)]
    assert "input.count should be integer, not string" in first, first
    assert "Structured output provided successfully" in second, second
    init = next(m for m in msgs if isinstance(m, SystemMessage) and m.subtype == "init")
    assert "StructuredOutput" in init.data["tools"]


def readme_blocks():
    """The python code blocks of the installed SDK's own README (its package METADATA)."""
    import importlib.metadata
    text = importlib.metadata.metadata("claude-agent-sdk").get_payload()
    return re.findall(r"```python\n(.*?)```", text, re.S)


def run_example(code, env):
    """Runs one README example as written, in a child python whose PATH finds rein as `claude`
    (the SDK looks there when it has no bundled binary); top-level `async` code is wrapped in a
    function as the README's own first example is."""
    import subprocess
    if "anyio.run" not in code and "asyncio.run" not in code:
        body = "\n".join("    " + l for l in code.splitlines())
        code = ("import anyio\nfrom claude_agent_sdk import *\nasync def __example():\n"
                + body + "\nanyio.run(__example)\n")
    bindir = SANDBOX / "bin"
    bindir.mkdir(exist_ok=True)
    link = bindir / "claude"
    if not link.exists():
        link.symlink_to(REIN)
    full = dict(os.environ)
    full.update(rein_env(**env))
    full["PATH"] = f"{bindir}:{full['PATH']}"
    out = subprocess.run([sys.executable, "-c", code], cwd=PROJECT, env=full,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, (code, out.stdout, out.stderr)
    return out.stdout


async def case_readme_examples():
    blocks = readme_blocks()
    quick = next(b for b in blocks if 'prompt="What is 2 + 2?"' in b)
    out = run_example(quick, {})
    assert "ResultMessage(subtype='success'" in out, out
    basic = next(b for b in blocks if 'prompt="Tell me a joke"' in b)
    out = run_example(basic, {})
    assert out.count("ResultMessage(") == 1, out
    hooks = next(b for b in blocks if "check_bash_command" in b and "foo.sh" in b)
    mock = script([bash("./foo.sh --help"), say("blocked, as expected"),
                   bash("echo 'Hello from hooks example!'"), say("done")])
    out = run_example(hooks, {"REIN_MOCK_SCRIPT": mock})
    assert "Command contains invalid pattern: foo.sh" in out, out
    assert "Hello from hooks example!" in out, out
    tools = next(b for b in blocks if "create_sdk_mcp_server" in b and "greet_user" in b)
    mock = script([{"tool_use": [{"name": "mcp__tools__greet", "input": {"name": "Ada"}}]}, say("greeted")])
    use = tools + ("\nasync for m in query(prompt='greet Ada', options=options):\n"
                   "    print(m)\n")
    out = run_example(use, {"REIN_MOCK_SCRIPT": mock})
    assert "Hello, Ada!" in out, out


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    name = sys.argv[1]
    anyio.run(CASES[name])
    print(f"{name}: ok")
