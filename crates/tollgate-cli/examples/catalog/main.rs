//! The catalog demo: a small product catalog served over MCP on 127.0.0.1.
//!
//! It serves MCP 2026-07-28 and, on the same URL, 2025-11-25, 2025-06-18 and 2025-03-26 for
//! clients that still `initialize` (and 2024-11-05 over stdio). Run it with
//! `cargo run --release --example catalog` (or pass
//! `--addr HOST:PORT` or set `TOLLGATE_ADDR`, or `--stdio` to serve a desktop client over stdin
//! and stdout; `--allowed-host`/`TOLLGATE_ALLOWED_HOSTS` and
//! `--allowed-origin`/`TOLLGATE_ALLOWED_ORIGINS` widen the Host and Origin checks; `RUST_LOG`
//! filters the logs on standard error, JSON lines with `--log-json` or `TOLLGATE_LOG_FORMAT=json`;
//! `/healthz` and `/readyz` are the probes, `options.rs`), then call
//! it with any MCP client or the curl session in the README. Three tools show the three
//! registration shapes, and a fourth a long-running call:
//!
//! - `catalog.search`: typed arguments and typed output (schemas derived from the Rust types),
//!   and an MCP Apps view (`ui://catalog/search`, `search.rs`): a product table whose Reserve
//!   buttons call `catalog.reserve` through the host, sent to clients that declare the
//!   `io.modelcontextprotocol/ui` extension. Its CSP lets it reach one origin,
//!   `TOLLGATE_CATALOG_VIEW_ORIGIN` (default `http://localhost:5173`); the view is a committed
//!   bundle (`view/`), so building the demo needs no npm (`scripts/apps-e2e` renders it in
//!   headless Chromium);
//! - `catalog.get`: typed arguments, an advanced result with a resource link and an image;
//! - `catalog.stock`: an authored Profile 1 schema with a mirrored `Mcp-Param-Tenant` header;
//! - `catalog.inventory`: progress notifications streamed as SSE; on 2025-11-25 it closes its
//!   connection after the first item and the client resumes the stream with `Last-Event-ID`;
//! - `catalog.reserve`: asks the user how many first: an `input_required` round trip with sealed
//!   state on 2026-07-28 (single use: the state's first retry reserves, the same retry sent again
//!   gets `Invalid request state`; used states kept beside the tasks), a request to the client
//!   on the call's stream on the 2025 revisions; each reservation is logged to standard error;
//! - `catalog.restock`: orders stock; for a client that takes tasks (2026-07-28 with the tasks
//!   extension) it continues as a durable task kept in an embedded SQLite database
//!   (`TOLLGATE_CATALOG_TASKS`, default a file in the temporary directory), asking the user
//!   to approve the purchase order through `tasks/get` and `tasks/update`;
//! - `catalog.whoami`: reads the request context (the `User-Agent` and `From` headers, the
//!   caller's trace id);
//! - `catalog.seasonal`: `{"enabled": true}` adds the typed tool `catalog.gift_wrap` to the live
//!   catalog, `false` removes it; listening clients hear `notifications/tools/list_changed`
//!   (`seasonal.rs`).
//!
//! An interceptor refuses `catalog.restock` while the `X-Catalog-Maintenance: on` header is
//! sent (logging the refusal to standard error), and a sanitizer masks email addresses in every
//! tool's text (`catalog.whoami` reports the `From` header as `[email]`).
//!
//! The prompt `catalog.pairing` asks which tea suits an occasion; its `occasion` argument
//! completes (`completion/complete`). Resources: `catalog://price-list` (CSV) and the template
//! `catalog://items/{sku}` (JSON), the target of `catalog.get`'s resource link.
//!
//! Protected mode (opt-in): with `TOLLGATE_CATALOG_OAUTH_ISSUER` set to an OAuth authorization
//! server's issuer, the HTTP endpoint is an OAuth 2.1 protected resource (`protect.rs`): bearer
//! tokens required, `catalog:read` for every request and `catalog:write` for `catalog.restock`.
//!
//! Several instances behind one URL (`scripts/cluster` runs three behind nginx): give each the
//! same `TOLLGATE_CATALOG_POSTGRES` (a PostgreSQL URL: tasks, used request states and 2025
//! sessions shared there,
//! `stores.rs`) and the same `TOLLGATE_REQUEST_STATE_KEYS` (a key ring, `ID=hex:SECRET,...`, the
//! sealing key first; or `TOLLGATE_REQUEST_STATE_KEYS_FILE`) so a `catalog.reserve` retry may
//! land on any of them. Behind a reverse proxy, `TOLLGATE_TRUSTED_PROXIES` (addresses or
//! networks, comma-separated, e.g. `127.0.0.1`) names the proxies whose `X-Forwarded-For` or
//! `Forwarded` gives the client's address (for the refused-admission throttle and the request
//! context), and whose connections are not held to the per-peer connection cap.
//!
//! OpenTelemetry (opt-in): with `OTEL_EXPORTER_OTLP_ENDPOINT` set (for example
//! `http://127.0.0.1:4318`), every request's spans and Tollgate's instruments are exported over
//! OTLP/HTTP (`src/telemetry.rs`, shared with the `tollgate` command), continuing the caller's trace.
//!
//! Browser pages on `http://localhost:5173` (or `TOLLGATE_CATALOG_PAGE_ORIGIN`) may call it: its
//! CORS policy grants that origin. `examples/catalog/web` is such a page, using the official
//! TypeScript client (`scripts/browser` bundles and drives it in headless Chromium).

use options::Listen;
use tollgate::{
    McpService, Server,
    transport::{CorsPolicy, StdioServer},
};

/// The page origin the demo grants by default (Vite's development server): any local page on
/// that port can read the demo's answers. Set `TOLLGATE_CATALOG_PAGE_ORIGIN` to serve
/// `examples/catalog/web` from elsewhere.
const DEFAULT_PAGE_ORIGIN: &str = "http://localhost:5173";

mod endpoint;
mod options;
mod protect;
mod stores;
// One source with the `tollgate` command's own export.
#[path = "../../src/telemetry.rs"]
mod telemetry;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = options::from_args_and_env()?;
    options::init_logs(options.json_logs);
    // The exporters send from threads of their own: installed before the runtime starts and
    // flushed after it ends.
    let telemetry = telemetry::from_env("tollgate-catalog")?;
    let served = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(serve(options));
    if let Some(telemetry) = telemetry {
        telemetry.shutdown();
    }
    served
}

async fn serve(options: options::Options) -> Result<(), Box<dyn std::error::Error>> {
    let stores = stores::from_env().await?;
    let tasks = std::sync::Arc::clone(&stores.tasks);
    let uses = Some(std::sync::Arc::clone(&stores.uses));
    let addr = match options.listen {
        Listen::Stdio => {
            // Desktop clients start the demo as a subprocess; stdout carries only JSON-RPC.
            eprintln!(
                "Tollgate catalog demo on stdio (MCP 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)"
            );
            return Ok(StdioServer::new(endpoint::endpoint(tasks, uses)?)
                .serve_stdio()
                .await?);
        }
        Listen::Http(addr) => addr,
    };
    // Browser pages on the demo's page origin may call it (CORS): `examples/catalog/web`.
    let page = std::env::var("TOLLGATE_CATALOG_PAGE_ORIGIN")
        .unwrap_or_else(|_| DEFAULT_PAGE_ORIGIN.to_owned());
    let protection = protect::from_env(addr)?;
    let endpoint = match &protection {
        None => stores
            .sessions(endpoint::builder(tasks, &[], uses)?)
            .build()?,
        Some(p) => stores
            .sessions(endpoint::builder(tasks, &[protect::WRITE], uses)?)
            .bearer_auth(p.auth.clone())
            .build()?,
    };
    endpoint::seasonal::attach(&endpoint);
    // In a cluster: apply the catalog events logged before this instance started.
    if let Some(catalogs) = endpoint.catalogs() {
        catalogs.sync().await?;
    }
    let mut service = McpService::builder()
        .endpoint(endpoint)
        .cors(CorsPolicy::allow_origins([page])?);
    for host in options.allowed_hosts {
        service = service.allowed_host(host);
    }
    for origin in options.allowed_origins {
        service = service.allowed_origin(origin);
    }
    if let Ok(proxies) = std::env::var("TOLLGATE_TRUSTED_PROXIES") {
        for proxy in proxies.split(',').filter(|p| !p.trim().is_empty()) {
            service = service.trusted_proxy(proxy);
        }
    }
    let service = service.build()?;
    let server = Server::bind(addr, service).await?;
    println!(
        "Tollgate catalog demo: http://{}/mcp (MCP 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26; {}); Ctrl-C stops it",
        server.local_addr()?,
        stores.describe()
    );
    if let Some(p) = &protection {
        println!(
            "protected: resource {}, metadata {}",
            p.resource.resource(),
            p.resource.metadata_url()
        );
    }
    server
        .serve_with_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
