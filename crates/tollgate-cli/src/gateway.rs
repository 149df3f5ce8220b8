//! `tollgate gateway`: Tollgate's checks in front of the MCP servers a TOML file names, served
//! over HTTP or stdio (`run`), and `tollgate gateway check`, which connects, imports and prints
//! every tool left out with its JSON Pointer, then exits, and `tollgate gateway login`, which
//! authorizes an upstream's authorization-code grant once and keeps its tokens. Owns only the
//! command's options and output, and applying the configuration's `[server]` table to the
//! endpoint and service it serves; the gateway itself is `tollgate-gateway`'s.

use std::net::SocketAddr;
use std::path::PathBuf;

use std::time::Duration;

use tollgate::auth::{BearerAuth, JwtValidation};
use tollgate::endpoint::{PostgresSessionStore, RequestStateKeyRing};
use tollgate::policy::{ProtectedResource, TokenBucket};
use tollgate::task::PostgresTaskStore;

use tollgate::transport::CorsPolicy;
use tollgate::{Endpoint, Implementation, ProtocolVersion};
use tollgate_gateway::{Gateway, GatewayConfig, ServerConfig};

/// `tollgate gateway` options.
#[derive(clap::Args)]
pub(crate) struct GatewayArgs {
    #[command(subcommand)]
    command: Option<GatewayCommand>,
    /// The configuration file (`[[upstream]]` tables).
    #[arg(long, global = true)]
    config: Option<PathBuf>,
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

/// `tollgate gateway` subcommands.
#[derive(clap::Subcommand)]
enum GatewayCommand {
    /// Authorize the gateway at one upstream whose `[upstream.oauth]` has
    /// `grant = "authorization_code"`, once, as a user: prints the authorization URL, receives
    /// the code on a loopback redirect and keeps the tokens in the upstream's `token_file`:
    /// `gateway login --config gateway.toml --upstream NAME [--open]`.
    Login {
        /// The upstream's `name`.
        #[arg(long)]
        upstream: String,
        /// Also open the URL in a browser (default: only print it).
        #[arg(long)]
        open: bool,
    },
}

/// Runs the gateway (or its check, or a login): `Ok(false)` when the check found tools left
/// out or upstreams unavailable.
pub(crate) async fn run(args: GatewayArgs) -> Result<bool, Box<dyn std::error::Error>> {
    // Its logs (refusals, upstream failures, an upstream's stderr) on standard error, filtered
    // by `RUST_LOG` (default `info`); standard output stays the stdio transport's.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
    let path = args.config.ok_or("gateway needs --config FILE")?;
    let config = GatewayConfig::from_file(&path)?;
    if let Some(GatewayCommand::Login { upstream, open }) = args.command {
        return login(&config, &upstream, open).await;
    }
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
        for skill in gateway.skills() {
            println!("served skill: {}", skill.uri());
        }
        for refusal in gateway.refusals() {
            println!("left out: {refusal}");
        }
        for unavailable in gateway.unavailable() {
            println!("unavailable: {unavailable}");
        }
        gateway.close().await;
        return Ok(gateway.refusals().is_empty() && gateway.unavailable().is_empty());
    }
    for refusal in gateway.refusals() {
        eprintln!("tollgate gateway: {refusal}");
    }
    for unavailable in gateway.unavailable() {
        eprintln!("tollgate gateway: {unavailable}");
    }
    let builder = gateway.install(Endpoint::with_path(
        "/mcp",
        revisions
            .iter()
            .copied()
            .collect::<tollgate::endpoint::ProtocolVersions>(),
        Implementation::new("tollgate-gateway", env!("CARGO_PKG_VERSION")),
    ));
    // `[server]` is about serving over HTTP: a local process over stdio is left to its
    // environment (as the MCP authorization specification says).
    let builder = if args.stdio {
        builder
    } else {
        shared(protect(builder, config.server())?, config.server()).await?
    };
    let endpoint = builder.build()?;
    gateway.follow(&endpoint)?;
    if args.stdio {
        tollgate::transport::StdioServer::new(endpoint)
            .serve_stdio()
            .await?;
    } else {
        let server = tollgate::Server::bind(args.addr, service(endpoint, config.server())?).await?;
        eprintln!(
            "tollgate gateway: {} tools of {} upstreams at http://{}/mcp",
            gateway.tools().len(),
            config.upstreams().len(),
            server.local_addr()?
        );
        // Ctrl-C or SIGTERM (what service managers send) ends it gracefully, so what telemetry
        // buffered is flushed after.
        server.serve_with_shutdown(stopped()).await?;
    }
    gateway.close().await;
    Ok(true)
}

/// The endpoint's part of `[server]`: a request rate limit per caller and, with
/// `[server.oauth]`, the OAuth protected resource (RFC 9728 metadata naming the issuer, and
/// bearer admission of the JWT access tokens it signed for the resource, with the scopes
/// required).
fn protect(
    mut builder: tollgate::endpoint::EndpointBuilder,
    server: &ServerConfig,
) -> Result<tollgate::endpoint::EndpointBuilder, Box<dyn std::error::Error>> {
    if let Some(n) = server.requests_per_minute() {
        let bucket = TokenBucket::with_capacity(n).refill(n, Duration::from_secs(60));
        builder = builder.request_rate_limiter(bucket);
    }
    if let Some(oauth) = server.oauth() {
        let resource = ProtectedResource::builder(oauth.resource())
            .authorization_server(oauth.issuer())
            .scopes_supported(oauth.scopes().iter().cloned())
            .resource_name("Tollgate gateway")
            .build()?;
        let auth = BearerAuth::builder(&resource)
            .jwt(JwtValidation::new(oauth.issuer()))
            .required_scopes(oauth.scopes().iter().cloned())
            .build()?;
        builder = builder.bearer_auth(auth);
    }
    Ok(builder)
}

/// What many instances behind one URL share, from `[server]`: the PostgreSQL database of 2025
/// sessions and tasks (replacing the in-memory task store `install` set), and the
/// request-state key ring.
async fn shared(
    mut builder: tollgate::endpoint::EndpointBuilder,
    server: &ServerConfig,
) -> Result<tollgate::endpoint::EndpointBuilder, Box<dyn std::error::Error>> {
    if let Some(url) = server.postgres() {
        builder = builder
            .session_store(PostgresSessionStore::connect(url).await?)
            .task_store(PostgresTaskStore::connect(url).await?);
    }
    if let Some(path) = server.request_state_keys_file() {
        builder = builder.request_state_keys(RequestStateKeyRing::from_file(path)?);
    }
    Ok(builder)
}

/// The service's part of `[server]`: the Host and Origin names accepted beside loopback's, and
/// the page origins the CORS policy grants.
fn service(
    endpoint: Endpoint,
    server: &ServerConfig,
) -> Result<tollgate::McpService, Box<dyn std::error::Error>> {
    let mut service = tollgate::McpService::builder().endpoint(endpoint);
    for host in server.allowed_hosts() {
        service = service.allowed_host(host.clone());
    }
    for origin in server.allowed_origins() {
        service = service.allowed_origin(origin.clone());
    }
    if !server.cors_origins().is_empty() {
        service = service.cors(CorsPolicy::allow_origins(
            server.cors_origins().iter().cloned(),
        )?);
    }
    Ok(service.build()?)
}

/// Ready on Ctrl-C or, on Unix, SIGTERM.
async fn stopped() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut terminate) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = terminate.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// `tollgate gateway login`: the authorization-code flow for one upstream, its URL printed on
/// standard error (and opened in a browser with `--open`).
async fn login(
    config: &GatewayConfig,
    name: &str,
    open: bool,
) -> Result<bool, Box<dyn std::error::Error>> {
    let upstream = config
        .upstreams()
        .iter()
        .find(|u| u.name() == name)
        .ok_or("no upstream of that name in the configuration")?;
    tollgate_gateway::login(
        upstream,
        Box::new(move |url| {
            eprintln!("Open this URL to authorize the gateway:\n  {url}");
            if open {
                crate::login::launch_browser(url);
            }
        }),
    )
    .await?;
    let file = upstream
        .oauth()
        .and_then(|o| o.token_file())
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    println!("logged in to upstream {name}; tokens kept in {file}");
    Ok(true)
}
