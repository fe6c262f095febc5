"""A real MCP client (the official Python SDK's stdio client) driving `candor mcp` for
tests/mcp.rs. It only talks and records: every check is made by the Rust test on the JSON
this prints.

    python3 client.py SCENARIO

The environment names the candor binary (CANDOR_MCP_BIN), the repository the server runs
in (CANDOR_MCP_REPO) and, for the scenarios that need them, the test id
(CANDOR_MCP_TEST) and a FIFO (CANDOR_MCP_FIFO) the slow test writes its pids to once it
runs. Everything else in the environment is handed to the server as it is. Exit 3 with
one line on stderr when the `mcp` package is missing.
"""

import json
import os
import sys

try:
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
except ImportError as error:  # pragma: no cover - the Rust test decides skip or fail
    print(f"the Python `mcp` package is missing ({error})", file=sys.stderr)
    sys.exit(3)

try:
    from mcp.shared.exceptions import MCPError
except ImportError:  # older SDKs
    from mcp.shared.exceptions import McpError as MCPError


def server(allow_run):
    args = ["mcp"] + (["--allow-run"] if allow_run else [])
    return StdioServerParameters(
        command=os.environ["CANDOR_MCP_BIN"],
        args=args,
        cwd=os.environ["CANDOR_MCP_REPO"],
        env=dict(os.environ),
    )


def result_json(result):
    return {
        "is_error": bool(result.is_error),
        "structured": result.structured_content,
        "text": [block.text for block in result.content if getattr(block, "text", None)],
    }


async def call(session, name, arguments, **kwargs):
    """A tool call's result, or the JSON-RPC error it drew."""
    try:
        result = await session.call_tool(name, arguments, **kwargs)
    except MCPError as error:
        data = getattr(error, "error", None)
        code = getattr(data, "code", None) if data is not None else getattr(error, "code", None)
        return {"jsonrpc_error": {"code": code, "message": str(error)}}
    return result_json(result)


async def session_of(allow_run, body):
    async with stdio_client(server(allow_run)) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            return await body(session, init)


async def tools():
    async def names(session, init):
        listed = await session.list_tools()
        return {
            "server": init.server_info.name,
            "tools": [tool.name for tool in listed.tools],
            "schemas": {tool.name: tool.input_schema for tool in listed.tools},
            "rerun_without_allow_run": await call(session, "rerun", {"test": "x"}),
        }

    return {
        "read_only": await session_of(False, names),
        "allow_run": await session_of(True, names),
    }


async def triage_and_refusal():
    test = os.environ["CANDOR_MCP_TEST"]

    async def body(session, init):
        return {
            "triage": await call(session, "triage", {}),
            "rerun": await call(session, "rerun", {"test": test}),
            "malformed": await call(session, "rerun", {"test": 5}),
            "unknown_field": await call(session, "triage", {"files": [], "bogus": True}),
            "out_of_range": await call(session, "compare", {"test": test, "runs": 0}),
            "after": await call(session, "show", {"test": test}),
            "explain": await call(session, "explain", {}),
            "lint_summary": await call(
                session, "lint_summary", {"text": "The webhook test is a known flake; it passed on rerun.\n"}
            ),
        }

    return await session_of(True, body)


async def flake_rerun():
    test = os.environ["CANDOR_MCP_TEST"]

    async def body(session, init):
        return {"rerun": await call(session, "rerun", {"test": test, "seed": 7})}

    return await session_of(True, body)


async def compare_progress():
    test = os.environ["CANDOR_MCP_TEST"]
    notes = []

    async def progress(done, total, message):
        notes.append({"progress": done, "total": total, "message": message})

    async def body(session, init):
        result = await call(
            session,
            "compare",
            {"test": test, "runs": 2, "no_early_stop": True, "seed": 11},
            progress_callback=progress,
        )
        return {"compare": result, "progress": notes}

    return await session_of(True, body)


def read_fifo(path):
    with open(path, encoding="utf-8") as fifo:
        return fifo.readline().strip()


async def cancelled_compare():
    test = os.environ["CANDOR_MCP_TEST"]
    fifo = os.environ["CANDOR_MCP_FIFO"]
    seen = {}

    async def body(session, init):
        async with anyio.create_task_group() as group:

            async def compare():
                seen["answer"] = await call(session, "compare", {"test": test, "runs": 3, "seed": 5})

            group.start_soon(compare)
            # The slow test writes its pids once it runs: the runner is surely running.
            seen["pids"] = await anyio.to_thread.run_sync(read_fifo, fifo)
            group.cancel_scope.cancel()
        # One call runs at a time: this answer comes after the cancelled compare unwound.
        seen["after"] = await call(session, "tests", {})
        return seen

    return await session_of(True, body)


SCENARIOS = {
    "tools": tools,
    "triage_and_refusal": triage_and_refusal,
    "flake_rerun": flake_rerun,
    "compare_progress": compare_progress,
    "cancelled_compare": cancelled_compare,
}


def main():
    scenario = SCENARIOS[sys.argv[1]]
    print(json.dumps(anyio.run(scenario), default=str))


if __name__ == "__main__":
    main()
