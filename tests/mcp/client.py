"""Drives `sno serve` with the official MCP Python SDK and prints what it saw
as JSON (the Rust tests assert on it).

usage: client.py SNO_BINARY REPOSITORY CALLS_JSON

CALLS_JSON is a list of [tool, arguments] pairs, called in order in one
session. A JSON-RPC error (an unknown tool) is reported as {"rpc_error": ...}.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(sno: str, repo: str, calls: list) -> None:
    env = dict(
        os.environ,
        SNO_OFFLINE="1",
        HF_HOME="/nonexistent/sno-tests-hf-home",
        SNO_SERVE_IDLE_SECS="0",
    )
    params = StdioServerParameters(command=sno, args=["serve", repo], env=env)
    out = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = init.server_info.name
            out["protocol"] = init.protocol_version
            tools = await session.list_tools()
            out["tools"] = {
                t.name: {"schema": t.input_schema, "description": t.description}
                for t in tools.tools
            }
            results = []
            for name, args in calls:
                try:
                    r = await session.call_tool(name, args)
                except Exception as e:  # the SDK raises on a JSON-RPC error
                    results.append({"tool": name, "rpc_error": str(e)})
                    continue
                text = r.content[0].text if r.content else ""
                results.append(
                    {
                        "tool": name,
                        "is_error": bool(r.is_error),
                        "body": json.loads(text) if text else None,
                    }
                )
            out["calls"] = results
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3])))
