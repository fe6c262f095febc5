"""Benchmark of `candor mcp` (issue #18): a `triage` tool call against
`candor triage --format json` on the same repository, and the server's memory at rest.

    python3 benches/mcp_server.py CANDOR_BINARY REPOSITORY [CALLS]

REPOSITORY holds a history with a red run (CANDOR_DB or its .candor/history.db).

Five things are timed CALLS times each, interleaved one of each per round so that a change
in the machine's load falls on all of them alike:

- `cli`: a `candor triage --format json` process, from spawn to exit;
- `tool`: a `triage` tool call through the official Python SDK's stdio client (what an
  agent's client pays), from request to answer;
- `raw_tool`: the same call written as one JSON-RPC line to a second server's stdin and
  its answer read as one line from its stdout: no SDK, so the difference to `tool` is the
  SDK client's own cost;
- `ping` and `raw_ping`: an MCP `ping` through each client, which reaches the server's
  transport and no candor code: each client's floor, so that `tool - ping` is what the
  server spends on the call itself.

RSS is the SDK session's server's VmRSS after `initialize` (at rest) and after the calls.
CPU time (user + system, the git children counted) per triage, for the CLI and for each
server, is steadier than wall time on a shared machine. Prints one JSON object
(milliseconds, MiB, and the load average before and after); the figures go to
docs/benchmarks.md.
"""

import json
import os
import resource
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


def cpu_seconds(pid):
    """User + system time of `pid` and of its waited-for children."""
    with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
        fields = stat.read().rsplit(") ", 1)[1].split()
    # utime, stime, cutime, cstime: fields 14 to 17 of proc(5), 12 to 15 after the name.
    return sum(int(field) for field in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def children_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def server_pid(binary, other):
    """The `candor mcp` child of this process that is not `other`."""
    me = str(os.getpid())
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == other:
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


class RawClient:
    """JSON-RPC lines over a server's stdin and stdout, nothing else."""

    def __init__(self, binary, repo):
        self.server = subprocess.Popen(
            [binary, "mcp"], cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self.next_id = 0
        self.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.server.stdin.write(json.dumps(message).encode() + b"\n")
        self.server.stdin.flush()

    def request(self, method, params=None):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        answer = json.loads(self.server.stdout.readline())
        assert answer.get("id") == self.next_id and "result" in answer, answer
        return answer["result"]

    def close(self):
        self.server.stdin.close()
        self.server.wait()


def cli_call(binary, repo):
    completed = subprocess.run(
        [binary, "triage", "--format", "json"],
        cwd=repo,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    assert completed.returncode in (0, 1), completed.returncode


def timed(times, key, action):
    start = time.perf_counter()
    outcome = action()
    times[key].append(time.perf_counter() - start)
    return outcome


async def rounds(binary, repo, calls):
    times = {key: [] for key in ("cli", "tool", "raw_tool", "ping", "raw_ping")}
    params = StdioServerParameters(command=binary, args=["mcp"], cwd=repo, env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            raw = RawClient(binary, repo)
            pid = server_pid(binary, raw.server.pid)
            at_rest = rss_kib(pid) if pid else None
            cpu = {"cli": 0.0, "tool": -cpu_seconds(pid), "raw_tool": -cpu_seconds(raw.server.pid)}
            for _ in range(calls):
                cli_cpu = children_cpu_seconds()
                timed(times, "cli", lambda: cli_call(binary, repo))
                cpu["cli"] += children_cpu_seconds() - cli_cpu
                start = time.perf_counter()
                result = await session.call_tool("triage", {})
                times["tool"].append(time.perf_counter() - start)
                assert not result.is_error, result
                result = timed(times, "raw_tool", lambda: raw.request(
                    "tools/call", {"name": "triage", "arguments": {}}))
                assert not result.get("isError"), result
                start = time.perf_counter()
                await session.send_ping()
                times["ping"].append(time.perf_counter() - start)
                timed(times, "raw_ping", lambda: raw.request("ping"))
            after = rss_kib(pid) if pid else None
            cpu["tool"] += cpu_seconds(pid)
            cpu["raw_tool"] += cpu_seconds(raw.server.pid)
            raw.close()
            return times, cpu, at_rest, after


def main():
    binary, repo = os.path.abspath(sys.argv[1]), sys.argv[2]
    calls = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    load_before = os.getloadavg()[0]
    times, cpu, at_rest, after = anyio.run(rounds, binary, repo, calls)
    ms = lambda seconds: round(seconds * 1000, 2)
    median = {key: statistics.median(values) for key, values in times.items()}
    figures = {"calls": calls}
    for key, values in times.items():
        figures[f"{key}_median_ms"] = ms(median[key])
        figures[f"{key}_p95_ms"] = ms(sorted(values)[int(calls * 0.95) - 1])
    figures["tool_minus_cli_ms"] = ms(median["tool"] - median["cli"])
    figures["raw_tool_minus_cli_ms"] = ms(median["raw_tool"] - median["cli"])
    figures["tool_minus_ping_ms"] = ms(median["tool"] - median["ping"])
    figures["raw_tool_minus_raw_ping_ms"] = ms(median["raw_tool"] - median["raw_ping"])
    for key, seconds in cpu.items():
        # The servers' figures include their pings' share, which is next to nothing.
        figures[f"{key}_cpu_ms_per_call"] = ms(seconds / calls)
    figures["server_rss_at_rest_mib"] = round(at_rest / 1024, 1) if at_rest else None
    figures["server_rss_after_calls_mib"] = round(after / 1024, 1) if after else None
    figures["load_average"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
