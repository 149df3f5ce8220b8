"""The gateway end to end with the official Python MCP SDK (PyPI `mcp`, pinned by
scripts/gateway-e2e): initialize over 2025-11-25 against `tollgate gateway` in front of
server-everything, list its tools, call one, have a bad call refused by the gateway, get a
prompt and read a resource through their prefixed name and URI.
Usage: python gateway-e2e-python.py http://127.0.0.1:PORT/mcp
"""
import asyncio
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main(url: str) -> None:
    async with streamable_http_client(url) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.protocol_version in ("2025-11-25", "2025-06-18"), init.protocol_version
            names = [t.name for t in (await session.list_tools()).tools]
            assert "ev_echo" in names and all(n.startswith("ev_") for n in names), names
            echo = await session.call_tool("ev_echo", {"message": "from python"})
            assert not echo.is_error
            assert echo.content[0].text == "Echo: from python", echo.content
            bad = await session.call_tool("ev_get-sum", {"a": "two", "b": 3})
            assert bad.is_error, "a bad call is refused by the gateway"
            prompt = await session.get_prompt("ev_args-prompt", {"city": "Oslo"})
            assert "Oslo" in prompt.messages[0].content.text
            uri = "ev+demo://resource/static/document/features.md"
            contents = (await session.read_resource(uri)).contents
            assert str(contents[0].uri) == uri, contents[0].uri
    print(f"Python SDK through the gateway: {init.protocol_version}, list, call, prompt and read ok")


asyncio.run(main(sys.argv[1]))
