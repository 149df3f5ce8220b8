"""The official Python SDK at a 2025-03-26 version (1.9) against the catalog demo over Streamable
HTTP and stdio: the negotiated revision checked, the tools listed, catalog.search called.
Usage: python older-clients.py URL DEMO_BINARY"""

import asyncio
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client


async def exercise(label, read, write):
    async with ClientSession(read, write) as session:
        init = await session.initialize()
        if init.protocolVersion != "2025-03-26":
            raise SystemExit(f"{label}: negotiated {init.protocolVersion}")
        tools = await session.list_tools()
        names = [t.name for t in tools.tools]
        if "catalog.search" not in names:
            raise SystemExit(f"{label}: catalog.search not listed: {names}")
        result = await session.call_tool("catalog.search", {"query": "tea"})
        text = result.content[0].text if result.content else ""
        if "TEA-001" not in text or result.isError:
            raise SystemExit(f"{label}: unexpected result {result}")
        print(f"{label}: {len(names)} tools listed, catalog.search called (2025-03-26)")


async def main(url, binary):
    async with streamablehttp_client(url) as (read, write, _):
        await exercise("Python SDK 1.9 over HTTP", read, write)
    params = StdioServerParameters(command=binary, args=["--stdio"])
    async with stdio_client(params) as (read, write):
        await exercise("Python SDK 1.9 over stdio", read, write)


asyncio.run(main(sys.argv[1], sys.argv[2]))
