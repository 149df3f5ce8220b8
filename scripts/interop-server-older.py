"""The interop server of scripts/interop-server.py on the older official Python SDK (PyPI `mcp`
1.9.4, FastMCP, pinned by scripts/interop): 2025-03-26 over stdio and Streamable HTTP, and
2024-11-05 over stdio and its HTTP+SSE transport. The same tools, resource, prompt and
completion, so the client checks the same things on the older revisions.
Usage: python interop-server-older.py stdio | python interop-server-older.py http|sse PORT
"""
import sys

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import Completion

port = int(sys.argv[2]) if sys.argv[1:2] in (["http"], ["sse"]) else 8000
server = FastMCP("tollgate-interop-older", host="127.0.0.1", port=port)


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Counts to `steps`, reporting progress at each and logging when done."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps)
    await ctx.info(f"counted to {steps}")
    return f"counted to {steps}"


@server.resource("interop://greeting")
def greeting() -> str:
    """A fixed text."""
    return "hello from Python"


@server.prompt()
def review(language: str) -> str:
    """Asks for a code review in a language."""
    return f"Please review this {language} code."


@server._mcp_server.completion()
async def complete(ref, argument):
    if argument.name == "language":
        options = ["python", "rust", "typescript"]
        return Completion(values=[o for o in options if o.startswith(argument.value)])
    return None


if __name__ == "__main__":
    modes = {"http": "streamable-http", "sse": "sse"}
    server.run(modes.get(sys.argv[1] if sys.argv[1:] else "", "stdio"))
