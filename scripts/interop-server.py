"""A small server on the official Python SDK (PyPI `mcp`, MCPServer, pinned by scripts/interop)
for the client interop run: a tool with arguments, a tool reporting progress and logging, a
resource, a prompt whose argument completes.
Usage: python interop-server.py stdio | python interop-server.py http PORT
"""
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import Completion

server = MCPServer("tollgate-interop")


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Counts to `steps`, reporting progress at each and logging when done."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}")
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


@server.completion()
async def complete(ref, argument, context):
    if argument.name == "language":
        options = ["python", "rust", "typescript"]
        return Completion(values=[o for o in options if o.startswith(argument.value)])
    return None


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
