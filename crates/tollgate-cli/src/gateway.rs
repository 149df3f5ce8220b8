//! `tollgate gateway`: Tollgate's checks in front of the MCP servers a TOML file names, served
//! over HTTP or stdio (`run`), and `tollgate gateway check`, which connects, imports and prints
//! every tool left out with its JSON Pointer, then exits. Owns only the command's options and
//! output; the gateway itself is `tollgate-gateway`'s.

use std::net::SocketAddr;
use std::path::PathBuf;

use tollgate::{Endpoint, Implementation, ProtocolVersion};
use tollgate_gateway::{Gateway, GatewayConfig};

/// `tollgate gateway` options.
#[derive(clap::Args)]
pub(crate) struct GatewayArgs {
    /// The configuration file (`[[upstream]]` tables).
    #[arg(long)]
    config: PathBuf,
    /// Where to listen (HTTP, at `/mcp`).
    #[arg(long, default_value = "127.0.0.1:8090")]
    addr: SocketAddr,
    /// Serve stdin and stdout instead of HTTP.
    #[arg(long)]
    stdio: bool,
    /// Connect, import, print what is left out, and exit (1 when anything is).
    #[arg(long)]
    check: bool,
}

/// Runs the gateway (or its check): `Ok(false)` when the check found tools left out.
pub(crate) async fn run(args: GatewayArgs) -> Result<bool, Box<dyn std::error::Error>> {
    // Its logs (refusals, upstream failures, an upstream's stderr) on standard error, filtered
    // by `RUST_LOG` (default `info`); standard output stays the stdio transport's.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
    let config = GatewayConfig::from_file(&args.config)?;
    let revisions: Vec<ProtocolVersion> = config.revisions().to_vec();
    let gateway = Gateway::connect(&config, &revisions).await?;
    if args.check {
        for tool in gateway.tools() {
            println!("served: {}", tool.name());
        }
        for prompt in gateway.prompts() {
            println!("served prompt: {}", prompt.name());
        }
        for resource in gateway.resources() {
            println!("served resource: {}", resource.uri());
        }
        for template in gateway.resource_templates() {
            println!("served resource template: {}", template.uri_template());
        }
        for refusal in gateway.refusals() {
            println!("left out: {refusal}");
        }
        gateway.close().await;
        return Ok(gateway.refusals().is_empty());
    }
    for refusal in gateway.refusals() {
        eprintln!("tollgate gateway: {refusal}");
    }
    let endpoint = gateway
        .install(Endpoint::with_path(
            "/mcp",
            revisions
                .iter()
                .copied()
                .collect::<tollgate::endpoint::ProtocolVersions>(),
            Implementation::new("tollgate-gateway", env!("CARGO_PKG_VERSION")),
        ))
        .build()?;
    gateway.follow(&endpoint)?;
    if args.stdio {
        tollgate::transport::StdioServer::new(endpoint)
            .serve_stdio()
            .await?;
    } else {
        let server = tollgate::Server::bind(args.addr, tollgate::McpService::new(endpoint)).await?;
        eprintln!(
            "tollgate gateway: {} tools of {} upstreams at http://{}/mcp",
            gateway.tools().len(),
            config.upstreams().len(),
            server.local_addr()?
        );
        server
            .serve_with_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
    }
    gateway.close().await;
    Ok(true)
}
