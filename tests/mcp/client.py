"""Drives `sno serve` with the official MCP Python SDK and prints what it saw
as JSON (the Rust test asserts on it).

usage: client.py SNO_BINARY REPOSITORY
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(sno: str, repo: str) -> None:
    env = dict(os.environ, SNO_OFFLINE="1", HF_HOME="/nonexistent/sno-tests-hf-home")
    params = StdioServerParameters(command=sno, args=["serve", repo], env=env)
    out = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = init.server_info.name
            out["protocol"] = init.protocol_version
            tools = await session.list_tools()
            out["tools"] = {t.name: getattr(t, "input_schema", None) or getattr(t, "inputSchema", None) for t in tools.tools}

            async def call(name, args):
                r = await session.call_tool(name, args)
                text = r.content[0].text if r.content else ""
                is_error = getattr(r, "is_error", None)
                if is_error is None:
                    is_error = getattr(r, "isError", False)
                return {"is_error": bool(is_error), "body": json.loads(text) if text else None}

            out["status"] = await call("status", {})
            out["search"] = await call("search", {"query": "read a config file", "max_tokens": 800})
            out["search_symbols"] = await call("search_symbols", {"name": "Config.load"})
            out["unknown_symbol"] = await call("search_symbols", {"name": "Config.lod"})
            out["file_outline"] = await call("file_outline", {"file": "app/config.py"})
            out["escape"] = await call("file_outline", {"file": "../../etc/passwd"})
            out["callers"] = await call("callers", {"name": "read_text", "depth": 2})
            out["callees"] = await call("callees", {"name": "Config.load"})
            out["references"] = await call("references", {"name": "read_text"})
            out["search_text"] = await call("search_text", {"pattern": "values\\.get\\("})
            out["repo_map"] = await call("repo_map", {"files": 3})
            try:
                await session.call_tool("no_such_tool", {})
                out["unknown_tool"] = "accepted"
            except Exception as e:  # the SDK raises on a JSON-RPC error
                out["unknown_tool"] = str(e)
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
