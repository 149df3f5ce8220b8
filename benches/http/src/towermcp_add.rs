//! tower-mcp's `add` (0.25, `ToolBuilder` with a typed `Add` input and an output schema derived
//! from `Sum`; `CallToolResult::from_serialize` gives the structured sum and its text mirror),
//! plus the 199 filler tools, served by its Streamable HTTP transport compiled with
//! `protocol-2026-07-28`.
//!
//! Configuration, and why it is the fastest the crate documents:
//! - 2026-07-28 requests (header `MCP-Protocol-Version: 2026-07-28`, `_meta` carrying the
//!   protocol version and client capabilities, `Mcp-Method`/`Mcp-Name` headers, no session id)
//!   always take the sessionless path: an ephemeral router per request, nothing stored.
//! - `stateless(StatelessConfig::new())` turns on the SEP-1442 path for older revisions: a
//!   2025-11-25 request that names its version (header or `_meta`) and has no session id is served
//!   by an ephemeral, pre-initialised service with nothing stored. Without it the transport's
//!   default "optional sessions" would create and keep a transient session for every such request.
//! - Responses are bare JSON (`sse_responses` left off, the crate's default) and tools/list is
//!   unpaginated. `initialize` still opens a 2025 session for clients that want one.
//! - No `schema-validation` feature: the typed `Add` deserialisation is the only input check, which
//!   is the crate's default build.
//!
//! The transport's axum router is served on the same hyper HTTP/1.1 connection loop as the others.

mod common;

use hyper_util::service::TowerToHyperService;
use tower_mcp::stateless::StatelessConfig;
use tower_mcp::{CallToolResult, HttpTransport, McpRouter, ToolBuilder};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

fn router() -> Result<McpRouter, serde_json::Error> {
    let add = ToolBuilder::new("add")
        .description("Adds two integers")
        .output_schema_for::<Sum>()
        .handler(|Add { a, b }: Add| async move {
            CallToolResult::from_serialize(&Sum {
                sum: a.wrapping_add(b),
            })
        })
        .build();
    let mut router = McpRouter::new()
        .server_info("towermcp-add", "1.0.0")
        .tool(add);
    let schema: serde_json::Value = serde_json::from_str(common::FILLER_SCHEMA)?;
    for i in 0..common::FILLER_TOOLS {
        let filler = ToolBuilder::new(common::filler_name(i))
            .description(common::FILLER_DESCRIPTION)
            .input_schema(schema.clone())
            .handler(|_: serde_json::Value| async { Ok(CallToolResult::text("ok")) })
            .build();
        router = router.tool(filler);
    }
    Ok(router)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let router = router()?;
    common::runtime()?.block_on(async {
        // Built inside the runtime: the transport may spawn its housekeeping tasks.
        let app = HttpTransport::new(router)
            .stateless(StatelessConfig::new())
            .into_router_at("/mcp");
        let service = TowerToHyperService::new(app);
        Ok(common::serve(service).await?)
    })
}
