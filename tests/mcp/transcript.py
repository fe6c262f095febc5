"""Records one raw JSON-RPC session with `candor mcp` (initialize, triage, a refused
rerun) for docs/mcp.md: every message as sent (->) and received (<-), one per line.

    python3 tests/mcp/transcript.py CANDOR_BINARY TEST_ID   # in a repository with a red run
"""

import json
import subprocess
import sys


def main():
    binary, test = sys.argv[1], sys.argv[2]
    server = subprocess.Popen(
        [binary, "mcp", "--allow-run"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )

    def send(message):
        line = json.dumps(message)
        print(f"-> {line}")
        server.stdin.write(line + "\n")
        server.stdin.flush()

    def receive():
        line = server.stdout.readline().strip()
        print(f"<- {line}")

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "transcript", "version": "1"}}})
    receive()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
          "params": {"name": "triage", "arguments": {}}})
    receive()
    send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
          "params": {"name": "rerun", "arguments": {"test": test}}})
    receive()
    server.stdin.close()
    server.wait()


if __name__ == "__main__":
    main()
