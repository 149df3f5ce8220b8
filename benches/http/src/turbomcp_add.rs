//! turbomcp's `add` (3.6, the `#[server]`/`#[tool]` macros: typed `a`/`b` arguments and a
//! `Json<Sum>` return, which gives the output schema, the structured sum and its text mirror),
//! plus the 199 filler tools, served by its Streamable HTTP transport.
//!
//! Configuration, and why it is the fastest the crate documents: turbomcp 3.6 speaks 2025-06-18
//! and 2025-11-25 only (no 2026-07-28), and its HTTP transport has no stateless mode: every request
//! but `initialize` (and a pre-session `ping`) must carry the `Mcp-Session-Id` that `initialize`
//! returned, or it is answered 400. So the one configuration is the default `ServerBuilder`
//! (no rate limit, no authorization, unpaginated lists, plain JSON answers that upgrade to SSE only
//! when a handler emits something mid-request), turned into its axum router with
//! `into_axum_router` and served on the same hyper HTTP/1.1 connection loop as the others (the
//! crate documents this bring-your-own-server path with `into_service` and hyper's http1). Each
//! request carries the peer address as axum `ConnectInfo`, which turbomcp's own `run` provides and
//! its Origin check needs (see `main`).
//!
//! The macros fix the tool set at compile time, so the 199 fillers come from a small `McpHandler`
//! wrapper: it lists the macro's `add` plus the fillers from a catalog built once (the trait
//! returns an owned `Vec`, so each tools/list clones it), sends `add` to the macro's dispatcher,
//! and answers the fillers itself. It forwards `server_capabilities` to the macro's constant one:
//! the trait's default would rebuild the whole catalog, and the router asks for the capabilities
//! on every tools/call.

mod common;

use std::future::Future;
use std::sync::Arc;

use axum::extract::ConnectInfo;
use hyper::service::Service as _;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use serde_json::Value;
// The trait's futures are bounded by `MaybeSend`, which turbomcp re-exports only here.
use turbomcp::__macro_support::turbomcp_core::MaybeSend;
use turbomcp::prelude::*;
use turbomcp::{ServerCapabilities, ToolInputSchema};

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

#[derive(Clone)]
struct Calc;

#[server(name = "turbomcp-add", version = "1.0.0")]
impl Calc {
    /// Adds two integers
    #[tool]
    async fn add(&self, a: i64, b: i64) -> Json<Sum> {
        Json(Sum {
            sum: a.wrapping_add(b),
        })
    }
}

/// The macro's `Calc` plus the filler catalog.
#[derive(Clone)]
struct Catalog {
    calc: Calc,
    tools: Arc<Vec<Tool>>,
}

impl Catalog {
    fn new() -> Result<Self, serde_json::Error> {
        let calc = Calc;
        let schema: ToolInputSchema = serde_json::from_str(common::FILLER_SCHEMA)?;
        let mut tools = calc.list_tools();
        for i in 0..common::FILLER_TOOLS {
            let mut tool = Tool::new(common::filler_name(i), common::FILLER_DESCRIPTION);
            tool.input_schema = schema.clone();
            tools.push(tool);
        }
        Ok(Self {
            calc,
            tools: Arc::new(tools),
        })
    }
}

impl McpHandler for Catalog {
    fn server_info(&self) -> ServerInfo {
        self.calc.server_info()
    }

    fn server_capabilities(&self) -> ServerCapabilities {
        self.calc.server_capabilities()
    }

    fn list_tools(&self) -> Vec<Tool> {
        self.tools.as_ref().clone()
    }

    fn list_resources(&self) -> Vec<Resource> {
        Vec::new()
    }

    fn list_prompts(&self) -> Vec<Prompt> {
        Vec::new()
    }

    fn call_tool<'a>(
        &'a self,
        name: &'a str,
        args: Value,
        ctx: &'a RequestContext,
    ) -> impl Future<Output = McpResult<ToolResult>> + MaybeSend + 'a {
        let filler = name.starts_with("filler_") && self.tools.iter().any(|t| t.name == name);
        async move {
            if filler {
                Ok(ToolResult::text("ok"))
            } else {
                self.calc.call_tool(name, args, ctx).await
            }
        }
    }

    fn read_resource<'a>(
        &'a self,
        uri: &'a str,
        ctx: &'a RequestContext,
    ) -> impl Future<Output = McpResult<ResourceResult>> + MaybeSend + 'a {
        self.calc.read_resource(uri, ctx)
    }

    fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        args: Option<Value>,
        ctx: &'a RequestContext,
    ) -> impl Future<Output = McpResult<PromptResult>> + MaybeSend + 'a {
        self.calc.get_prompt(name, args, ctx)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let catalog = Catalog::new()?;
    common::runtime()?.block_on(async {
        let app = TowerToHyperService::new(catalog.builder().into_axum_router());
        let listener = tokio::net::TcpListener::bind(common::address()).await?;
        loop {
            let (stream, peer) = listener.accept().await?;
            let _ = stream.set_nodelay(true);
            let app = app.clone();
            // turbomcp's own `run` serves with axum's connect info: its origin check admits a
            // request without `Origin` only from a loopback peer, and answers 403 when it cannot
            // see the peer at all. So each request gets the peer address, as there.
            let service = hyper::service::service_fn(
                move |mut request: hyper::Request<hyper::body::Incoming>| {
                    request.extensions_mut().insert(ConnectInfo(peer));
                    app.call(request)
                },
            );
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}
