"""End-to-end check with the official Python MCP SDK (PyPI `mcp`, pinned by scripts/e2e):
initialize over 2025-11-25 against a running catalog demo, list its tools and call them (one
call's stream is closed by the server and resumed by the client); then the demo over stdio,
where catalog.reserve's elicitation is a line the client answers with a line.
Usage: python e2e-python.py http://127.0.0.1:PORT/mcp [path/to/catalog]
"""
import asyncio
import sys

from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client


async def main(url: str) -> None:
    async with streamable_http_client(url) as streams:
        read, write = streams[0], streams[1]
        asked = []

        async def on_elicit(context, params):
            asked.append(params.message)
            return types.ElicitResult(action="accept", content={"quantity": 2})

        async with ClientSession(read, write, elicitation_callback=on_elicit) as session:
            init = await session.initialize()
            assert init.protocol_version in ("2025-11-25", "2025-06-18"), init.protocol_version
            names = [t.name for t in (await session.list_tools()).tools]
            assert names == ["catalog.search", "catalog.get", "catalog.inventory", "catalog.reserve", "catalog.restock", "catalog.whoami", "catalog.seasonal"], names
            result = await session.call_tool("catalog.search", {"query": "tea"})
            assert not result.is_error
            assert [i["sku"] for i in result.structured_content["items"]] == ["TEA-001", "POT-001"]
            invalid = await session.call_tool("catalog.get", {})
            assert invalid.is_error
            assert invalid.content[0].text == "Arguments do not match the tool's inputSchema."
            # The server closes this call's stream after the first item; the client resumes it.
            seen = []

            async def on_progress(progress, total, message):
                seen.append(progress)

            counted = await session.call_tool(
                "catalog.inventory", {}, progress_callback=on_progress
            )
            assert counted.structured_content == {"items": 4, "units": 106}, counted
            assert seen and seen[-1] == 4, seen
            prompts = [p.name for p in (await session.list_prompts()).prompts]
            assert prompts == ["catalog.pairing"], prompts
            rendered = await session.get_prompt("catalog.pairing", {"occasion": "afternoon"})
            assert "afternoon" in rendered.messages[0].content.text
            listed = [str(r.uri) for r in (await session.list_resources()).resources]
            assert listed == ["catalog://price-list", "ui://catalog/search"], listed
            item = await session.read_resource("catalog://items/MUG-001")
            assert '"sku":"MUG-001"' in item.contents[0].text, item
            # catalog.reserve asks how many through a request on the call's stream.
            reserved = await session.call_tool("catalog.reserve", {"sku": "TEA-002"})
            assert reserved.content[0].text == "Reserved 2 × Darjeeling first flush.", reserved
            assert asked == ["How many of Darjeeling first flush shall we reserve?"], asked
            # No tasks on 2025-11-25 here: catalog.restock completes inline.
            restocked = await session.call_tool("catalog.restock", {"sku": "TEA-001", "quantity": 1})
            assert restocked.structured_content == {"sku": "TEA-001", "ordered": 1, "costCents": 539}, restocked
            print(f"official Python SDK: initialize ({init.protocol_version}), list and call ok")


async def over_stdio(binary: str) -> None:
    asked = []

    async def on_elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"quantity": 4})

    params = StdioServerParameters(command=binary, args=["--stdio"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=on_elicit) as session:
            init = await session.initialize()
            assert init.protocol_version == "2025-11-25", init.protocol_version
            reserved = await session.call_tool("catalog.reserve", {"sku": "POT-001"})
            assert reserved.content[0].text.startswith("Reserved 4 × "), reserved
            assert len(asked) == 1, asked
    print("official Python SDK: over stdio, an elicitation answered in lines ok")


asyncio.run(main(sys.argv[1]))
if len(sys.argv) > 2:
    asyncio.run(over_stdio(sys.argv[2]))
