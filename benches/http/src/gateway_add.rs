//! Tollgate's gateway in front of an upstream `add` server (`UPSTREAM`, a Streamable HTTP URL,
//! normally `tollgate-add`): the upstream's 200 tools imported through the gateway's rules, each
//! call's arguments validated before forwarding and its result checked against the output schema
//! after. Serves 2026-07-28 and 2025-11-25 on `127.0.0.1:$PORT/mcp` (driven by
//! scripts/bench_gateway.py beside the upstream called directly).

#[allow(dead_code, reason = "the filler catalog is the other servers'")]
mod common;

use tollgate::transport::ServerLimits;
use tollgate::{Endpoint, Implementation, McpService, ProtocolVersion, Server};
use tollgate_gateway::{Gateway, GatewayConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let upstream = std::env::var("UPSTREAM")?;
    let config = GatewayConfig::from_toml(&format!(
        "revisions = [\"2026-07-28\", \"2025-11-25\"]\n[[upstream]]\nname = \"add\"\nurl = \"{upstream}\"\n"
    ))?;
    let revisions = [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25];
    common::runtime()?.block_on(async {
        let gateway = Gateway::connect(&config, &revisions).await?;
        let endpoint = gateway
            .install(
                Endpoint::with_path("/mcp", revisions, Implementation::new("gateway-add", "1"))
                    .tools_page_size(1000),
            )
            .build()?;
        gateway.follow(&endpoint)?;
        // One load generator opening every connection, as for tollgate-add.
        let limits = ServerLimits::new().max_connections_per_peer(1024);
        let server = Server::bind(common::address(), McpService::new(endpoint))
            .await?
            .limits(limits);
        server.serve_with_shutdown(std::future::pending()).await?;
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}
