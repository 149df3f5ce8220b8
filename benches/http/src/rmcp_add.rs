//! rmcp's `add` (3.11, the `#[tool]` macros and `Json` output: text and structured sum), served
//! by its Streamable HTTP tower service in stateless, JSON-response mode (its fastest), on the
//! same hyper HTTP/1.1 connection loop as the others. The handler (and its 200-tool router) is
//! built once: the per-request factory only clones an `Arc`.
//!
//! `RMCP_STATEFUL` switches to rmcp's legacy session mode (`legacy_session_mode = true`, sessions
//! in its `LocalSessionManager`): `initialize` creates the session and returns `Mcp-Session-Id`,
//! which every later 2025 request must carry. `json` also sets `json_response = true`, `sse` leaves
//! it off; rmcp 3.11 documents `json_response` for the stateless mode only, and its session path
//! answers requests as SSE either way. 2026-07-28 requests stay sessionless in both.

mod common;

use std::sync::Arc;

use hyper_util::service::TowerToHyperService;
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig, Tool};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};

#[derive(serde::Deserialize, rmcp::schemars::JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

#[derive(serde::Serialize, rmcp::schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

/// Built once; the stateless service's per-request factory only clones the `Arc`.
#[derive(Clone)]
struct Calc {
    tool_router: Arc<ToolRouter<Calc>>,
}

#[tool_router]
impl Calc {
    fn new() -> Self {
        let mut tool_router = Self::tool_router();
        let schema: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(common::FILLER_SCHEMA).unwrap_or_default();
        let schema = Arc::new(schema);
        for i in 0..common::FILLER_TOOLS {
            let tool = Tool::new(
                common::filler_name(i),
                common::FILLER_DESCRIPTION,
                schema.clone(),
            );
            tool_router.add_route(ToolRoute::new_dyn(tool, |_| {
                Box::pin(async {
                    Ok(CallToolResult::success(vec![ContentBlock::text("ok")]).into())
                })
            }));
        }
        Self {
            tool_router: Arc::new(tool_router),
        }
    }

    #[tool(description = "Adds two integers")]
    fn add(&self, Parameters(Add { a, b }): Parameters<Add>) -> Json<Sum> {
        Json(Sum {
            sum: a.wrapping_add(b),
        })
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Calc {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut config = StreamableHttpServerConfig::default();
    match std::env::var("RMCP_STATEFUL").as_deref() {
        Ok("json") => {
            config.legacy_session_mode = true;
            config.json_response = true;
        }
        Ok("sse") => {
            config.legacy_session_mode = true;
            config.json_response = false;
        }
        Ok(other) => {
            return Err(format!("RMCP_STATEFUL must be `json` or `sse`, not `{other}`").into());
        }
        Err(_) => {
            config.legacy_session_mode = false;
            config.json_response = true;
        }
    }
    let calc = Calc::new();
    let service = TowerToHyperService::new(StreamableHttpService::new(
        move || Ok(calc.clone()),
        LocalSessionManager::default().into(),
        config,
    ));
    common::runtime()?.block_on(common::serve(service))?;
    Ok(())
}
