"""`recall mcp` driven by the official MCP Python SDK (the `mcp` package).

Run by host/tests/mcp_sdk.rs (RECALL_BIN = the recall binary, argv[1] = a
scratch directory). It builds a generated home plus one Claude Code session
whose user message is 300 KB, indexes it, then over stdio: lists the tools
and checks their schemas and annotations, calls every tool, checks that
every answer stays within its budget, pages a common-word search to the end
(pages disjoint, together equal to the unbudgeted answer), reads the long
record window by window (the windows rebuild it exactly), and sends
malformed arguments (tool errors with the core's codes, the connection
still serving). Exits non-zero on the first failure.
"""

import asyncio
import json
import os
import pathlib
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

RECALL = os.environ["RECALL_BIN"]
ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRATCH = pathlib.Path(sys.argv[1])
HOME = SCRATCH / "home"
PROJECT = "/work/mcp-sdk-project"
HERMETIC = {k: v for k, v in os.environ.items() if k not in (
    "RECALL_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "KIMI_CODE_HOME", "KIMI_SHARE_DIR",
    "PI_CODING_AGENT_DIR", "INTENDANT_HOME", "DSH_HOME", "RECALL_TOKEN", "RECALL_SELF_SESSION")}


def g(obj, snake, camel):
    """An attribute under the SDK's snake_case name (2.x) or camelCase (1.x)."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def build_home():
    subprocess.run([sys.executable, str(ROOT / "tests/shared/corpus-gen/gen.py"), "--out", str(SCRATCH),
                    "--seed", "11", "--sessions", "60", "--force"], check=True, stderr=subprocess.DEVNULL)
    proj = HOME / ".claude" / "projects" / "-work-mcp-sdk-project"
    proj.mkdir(parents=True, exist_ok=True)
    # 300 KB of varied text (every line differs, so windows cannot line up by luck).
    long_text = "".join(f"line {i:06d}: the quick brown fox é 😀 jumps {i * 7919 % 10007}\n" for i in range(6000))
    check(len(long_text.encode()) >= 300_000, "the long record is 300 KB")
    rows = []
    for i, (role, text) in enumerate([("user", "please read the attached log " + long_text),
                                      ("assistant", "I read the whole log")]):
        msg = {"role": role, "content": [{"type": "text", "text": text}]}
        if role == "assistant":
            msg.update({"id": "msg_long_a", "type": "message", "model": "claude-sonnet-4-20250514",
                        "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}})
        rows.append({"type": role, "timestamp": f"2025-07-01T10:0{i}:00.000Z",
                     "parentUuid": None if i == 0 else "u-long-0", "isSidechain": False,
                     "userType": "external", "cwd": PROJECT, "sessionId": "long-session-1",
                     "version": "2.1.0", "uuid": f"u-long-{i}", "message": msg})
    (proj / "long-session-1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    run(["index"])


def run(args):
    return subprocess.run([RECALL, "--home", str(HOME), "--retention-days", "0", *args], check=True,
                          capture_output=True, text=True, env=HERMETIC).stdout


def server(*args):
    return StdioServerParameters(command=RECALL, args=["--home", str(HOME), "mcp", *args], env=HERMETIC)


async def call(s, name, args, budget=None):
    """A successful call's structured answer, checked against its budget."""
    r = await s.call_tool(name, args)
    text = r.content[0].text
    check(not g(r, "is_error", "isError"), f"{name} {args}: {text[:300]}")
    check(g(r, "structured_content", "structuredContent") == json.loads(text), f"{name}: structuredContent equals the text")
    limit = 4 * (budget or args.get("max_tokens", 8000))
    check(len(text) <= limit, f"{name} {args}: {len(text)} chars over the budget {limit}")
    check(set(g(r, "structured_content", "structuredContent")["index"]) == {"revision", "updated_ms", "via"}, "index block")
    return g(r, "structured_content", "structuredContent")


async def error(s, name, args, code):
    r = await s.call_tool(name, args)
    text = r.content[0].text
    check(g(r, "is_error", "isError"), f"{name} {args} should fail, got {text[:200]}")
    check(text.startswith(code), f"{name} {args}: wanted {code}, got {text[:200]}")


def schema_checks(tools):
    names = {t.name for t in tools}
    check(names == {"session_search", "session_event_search", "session_event_read", "session_trace",
                    "session_event_trace", "session_list", "session_deep_search"}, names)
    for t in tools:
        check(t.annotations is not None and g(t.annotations, "read_only_hint", "readOnlyHint") is True, f"{t.name} readOnlyHint")
        check(bool(t.annotations.title) and bool(t.title), f"{t.name} title")
        check(g(t, "output_schema", "outputSchema") and g(t, "output_schema", "outputSchema")["type"] == "object", f"{t.name} outputSchema")
        props = g(t, "input_schema", "inputSchema")["properties"]
        for k, p in props.items():
            check(isinstance(p.get("type"), str), f"{t.name}.{k} has one JSON type: {p}")
            check("format" not in p, f"{t.name}.{k} has no format")
        check("max_tokens" in props and "fields" in props, f"{t.name} takes max_tokens and fields")
        check(props["max_tokens"]["type"] == "integer" and props["max_tokens"]["minimum"] == 200, "bounds")
        if "limit" in props:
            check((props["limit"]["minimum"], props["limit"]["maximum"]) == (1, 100), "limit bounds")
    by = {t.name: t for t in tools}
    check(g(by["session_event_read"], "input_schema", "inputSchema")["properties"]["locator"]["type"] == "object", "typed locator")
    check("DeepSeek Harness" in by["session_search"].description, "DeepSeek Harness named")
    for name in ("session_search", "session_event_search", "session_list"):
        check({"limit", "cursor"} <= set(g(by[name], "input_schema", "inputSchema")["properties"]), f"{name} pages")


async def pages(s, name, args):
    out, cursor, n = [], None, 0
    while True:
        a = dict(args, **({"cursor": cursor} if cursor else {}))
        page = await call(s, name, a)
        out.append(page)
        cursor = page.get("cursor")
        n += 1
        check(n < 500, "paging ends")
        if not cursor:
            return out


async def main():
    build_home()
    async with stdio_client(server("--all-projects", "--self-window", "0")) as (r, w):
        async with ClientSession(r, w) as s:
            init = await s.initialize()
            check("DeepSeek Harness" in (init.instructions or ""), "instructions name DeepSeek Harness")
            tools = (await s.list_tools()).tools
            schema_checks(tools)

            # Page a common word under a tight budget; compare with one big answer.
            full = await call(s, "session_search", {"query": "the", "limit": 100, "max_tokens": 250000})
            full_keys = [x["session"] for x in full["sessions"]]
            check(len(full_keys) > 20 and "cursor" not in full, f"{len(full_keys)} sessions in one answer")
            got = []
            for p in await pages(s, "session_search", {"query": "the", "limit": 7, "max_tokens": 1200}):
                got += [x["session"] for x in p["sessions"]]
            check(len(got) == len(set(got)), "pages are disjoint")
            check(got == full_keys, "pages together equal the unbudgeted answer")
            listed = []
            for p in await pages(s, "session_list", {"limit": 9, "max_tokens": 600, "fields": "minimal"}):
                listed += [x["session"] for x in p["sessions"]]
            whole = await call(s, "session_list", {"limit": 100, "max_tokens": 250000})
            check(listed == [x["session"] for x in whole["sessions"]], "session_list pages")
            tight = await call(s, "session_search", {"query": "the", "limit": 100, "max_tokens": 300})
            check(tight["truncated"]["sessions"] > 0 and "cursor" in tight, "a cut answer says so and goes on")
            rel = await call(s, "session_search", {"query": "the", "sort": "relevance", "since": "3650d",
                                                   "roles": ["user", "assistant"], "fields": "full"})
            check(rel["sessions"], "relevance + relative since")
            await call(s, "session_search", {"query": "the", "models": ["claude-sonnet-4-20250514"],
                                             "until": "yesterday", "fields": "minimal"})

            # The long record, window by window.
            hit = await call(s, "session_event_search", {"session": "claude-code:long-session-1",
                                                         "query": "jumps", "limit": 1})
            check(hit["hits"] and "cursor" not in hit, "one hit")
            shown = json.loads(run(["show", "--json", "claude-code:long-session-1"]))
            whole_text = next(x["text"] for x in shown["records"] if x["index"] == hit["hits"][0]["index"])
            check(len(whole_text) > 200_000, f"the record is long ({len(whole_text)})")
            text, offset, windows = "", 0, 0
            while True:
                rd = await call(s, "session_event_read", {"session": "claude-code:long-session-1",
                                                         "index": hit["hits"][0]["index"], "offset": offset,
                                                         "before": 0, "after": 1, "max_tokens": 5000})
                rec = next(x for x in rd["records"] if x["index"] == rd["center"])
                check(rec["offset"] == offset and rec["length"] == len(whole_text), "window bounds")
                text += rec["text"]
                windows += 1
                if "next_offset" not in rec:
                    break
                offset = rec["next_offset"]
            check(text == whole_text and windows > 10, f"{windows} windows rebuild the record exactly")
            centred = await call(s, "session_event_read", {"session": "claude-code:long-session-1",
                                                          "index": hit["hits"][0]["index"], "chars": 1000,
                                                          "around": 200_000, "before": 0, "after": 0})
            rec = centred["records"][0]
            at = len(whole_text.encode()[:200_000].decode(errors="ignore"))  # byte 200000 as a character index
            check(abs(rec["offset"] - (at - 500)) <= 1 and rec["chars"] == 1000, f"a window centred on a hit: {rec['offset']} {at}")
            tr = await call(s, "session_event_trace", {"session": "claude-code:long-session-1", "index": 0,
                                                      "max_tokens": 2000})
            check(tr["record"]["length"] == len(whole_text) and tr["record"]["chars"] < 8000, "trace windows too")
            await call(s, "session_trace", {"session": "claude-code:long-session-1"})
            # Deep Search reads the source file: the match deep in the 300 KB record, as that indexed record.
            deep = await call(s, "session_deep_search", {"pattern": "line 004321: the quick", "fixed_strings": True,
                                                         "session": "long-session-1"})
            h = deep["sessions"][0]["hits"][0]
            check(h["kind"] == "user" and "locator" in h, f"the long user record, as indexed: {h}")
            check("line 004321: the quick" in h["text"] and len(h["text"]) < 2000, "a window around the match")
            tight = await call(s, "session_deep_search", {"pattern": "the", "limit": 100, "max_tokens": 300})
            check(tight["stopped"] == "limit" and tight.get("truncated"), "a cut deep answer says so")
            page = await call(s, "session_event_search", {"session": full_keys[0], "query": "the", "limit": 1})
            check(page["total_hits"] >= 1, "event search")

            # Malformed arguments: tool errors with the core's codes; still serving.
            for name, args, code in [
                ("session_search", {"query": "the", "limit": 0}, "invalid_param"),
                ("session_search", {"query": "the", "limit": -3}, "invalid_param"),
                ("session_search", {"query": "the", "limit": 10**12}, "invalid_param"),
                ("session_search", {"query": "the", "limit": "five"}, "invalid_param"),
                ("session_search", {"query": "the", "bogus": 1}, "invalid_param"),
                ("session_search", {"query": "the", "cursor": "not-a-cursor"}, "invalid_cursor"),
                ("session_search", {"query": "the", "cursor": (await call(s, "session_list", {"limit": 1}))["cursor"]},
                 "invalid_cursor"),
                ("session_search", {"query": "the", "since": "whenever"}, "invalid_param"),
                ("session_search", {"query": "the", "max_tokens": 5}, "invalid_param"),
                ("session_list", {"cursor": "x"}, "invalid_cursor"),
                ("session_list", {"sources": "codex"}, "invalid_param"),
                ("session_event_read", {"session": "claude-code:long-session-1", "index": -1}, "invalid_param"),
                ("session_event_read", {"session": "claude-code:long-session-1", "locator": 7}, "invalid_param"),
                ("session_event_search", {"session": "nosuch", "query": "x"}, "session_not_found"),
                ("session_deep_search", {"pattern": "("}, "invalid_pattern"),
                ("session_deep_search", {"pattern": "x", "limit": 500}, "invalid_param"),
            ]:
                await error(s, name, args, code)
            await call(s, "session_list", {"limit": 1})

    # A server scoped to a project with no sessions explains the empty answer.
    async with stdio_client(server("--project", "/nonexistent/empty-project")) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            empty = await call(s, "session_search", {"query": "the"})
            check(empty["sessions"] == [] and empty["empty"]["sessions_outside_scope"] > 0, "empty note")
            check("--all-projects" in empty["empty"]["hint"], "the hint names --all-projects")
    print("mcp sdk: ok")


asyncio.run(main())
