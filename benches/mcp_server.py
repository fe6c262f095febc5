"""Benchmark of `candor mcp` (issue #18 item 5): a `triage` tool call against
`candor triage --format json` on the same repository, and the server's memory at rest.

    python3 benches/mcp_server.py CANDOR_BINARY REPOSITORY [CALLS]

REPOSITORY holds a history with a red run (CANDOR_DB or its .candor/history.db). Each
`triage` tool call is timed from request to answer over stdio; each CLI triage from spawn
to exit. RSS is the server's VmRSS after `initialize` and again after the calls. Prints
one JSON object; the figures go to docs/benchmarks.md.
"""

import json
import os
import statistics
import subprocess
import sys
import time

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def rss_kib(pid):
    with open(f"/proc/{pid}/status", encoding="utf-8") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def server_pid(binary):
    """The `candor mcp` child of this process."""
    me = str(os.getpid())
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as stat:
                fields = stat.read().rsplit(") ", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                argv = cmdline.read().split(b"\0")
        except OSError:
            continue
        if fields[1] == me and argv[0].decode() == binary and b"mcp" in argv:
            return int(entry)
    return None


async def tool_calls(binary, repo, calls):
    params = StdioServerParameters(command=binary, args=["mcp"], cwd=repo, env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            pid = server_pid(binary)
            at_rest = rss_kib(pid) if pid else None
            times = []
            for _ in range(calls):
                start = time.perf_counter()
                result = await session.call_tool("triage", {})
                times.append(time.perf_counter() - start)
                assert not result.is_error, result
            after = rss_kib(pid) if pid else None
            return times, at_rest, after


def cli_calls(binary, repo, calls):
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        subprocess.run(
            [binary, "triage", "--format", "json"],
            cwd=repo,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        times.append(time.perf_counter() - start)
    return times


def main():
    binary, repo = os.path.abspath(sys.argv[1]), sys.argv[2]
    calls = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    cli = cli_calls(binary, repo, calls)
    tool, at_rest, after = anyio.run(tool_calls, binary, repo, calls)
    ms = lambda seconds: round(seconds * 1000, 2)
    print(
        json.dumps(
            {
                "calls": calls,
                "cli_median_ms": ms(statistics.median(cli)),
                "cli_p95_ms": ms(sorted(cli)[int(calls * 0.95) - 1]),
                "tool_median_ms": ms(statistics.median(tool)),
                "tool_p95_ms": ms(sorted(tool)[int(calls * 0.95) - 1]),
                "difference_median_ms": ms(statistics.median(tool) - statistics.median(cli)),
                "server_rss_at_rest_mib": round(at_rest / 1024, 1) if at_rest else None,
                "server_rss_after_calls_mib": round(after / 1024, 1) if after else None,
            }
        )
    )


if __name__ == "__main__":
    main()
