//! The gateway itself: its upstreams connected, their tools imported (or refused), and the
//! imported tools installed on an endpoint builder. Owns the start-up order (connect every
//! upstream, list every catalog, then check names across upstreams) and the upstreams'
//! lifetimes; knows nothing of the configuration's text or of serving.

use std::collections::HashMap;
use std::sync::Arc;

use tollgate::endpoint::EndpointBuilder;
use tollgate::{ProtocolVersion, ToolRegistration};
use tollgate_client::Client;

use crate::config::{GatewayConfig, UpstreamConfig, UpstreamTransport};
use crate::error::{ForwardError, GatewayError, GatewayErrorKind};
use crate::import::{Refusal, RefusalReason, Source, import_tool};

/// Where an upstream process's standard error goes: `tollgate_gateway::upstream` events at
/// `info`, with the upstream's name.
const UPSTREAM: &str = "tollgate_gateway::upstream";

/// A connected gateway: its upstreams' clients, the tools imported from them, and the tools
/// left out.
pub struct Gateway {
    upstreams: Vec<(String, Arc<Client>)>,
    tools: Vec<ToolRegistration>,
    refusals: Vec<Refusal>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("upstreams", &self.upstreams.len())
            .field("tools", &self.tools.len())
            .field("refusals", &self.refusals.len())
            .finish()
    }
}

impl Gateway {
    /// Connects to every upstream of `config`, lists its tools and imports them for
    /// `revisions` (the revisions the gateway's endpoint serves).
    ///
    /// # Errors
    ///
    /// [`GatewayErrorKind::Upstream`] naming the first upstream that cannot be started,
    /// connected to or listed (the ones connected before it are closed);
    /// [`GatewayErrorKind::NameClash`] when two upstreams serve the same name.
    pub async fn connect(
        config: &GatewayConfig,
        revisions: &[ProtocolVersion],
    ) -> Result<Self, GatewayError> {
        let mut gateway = Self {
            upstreams: Vec::new(),
            tools: Vec::new(),
            refusals: Vec::new(),
        };
        // Served name -> the upstream serving it.
        let mut owners: HashMap<String, String> = HashMap::new();
        for upstream in config.upstreams() {
            let client = match connect(upstream).await {
                Ok(client) => Arc::new(client),
                Err(error) => {
                    gateway.close().await;
                    return Err(error);
                }
            };
            gateway
                .upstreams
                .push((upstream.name().to_owned(), Arc::clone(&client)));
            let listed = match client.list_tools().await {
                Ok(listed) => listed,
                Err(_) => {
                    gateway.close().await;
                    return Err(GatewayError::new(
                        GatewayErrorKind::Upstream,
                        Some(upstream.name()),
                    ));
                }
            };
            let served_name = |name: &str| upstream.served_name(name);
            let source = Source {
                upstream: upstream.name(),
                client: &client,
                served_name: &served_name,
                call_timeout: upstream.call_timeout(),
                revisions,
                profile1_only: config.profile1_only(),
            };
            for entry in &listed {
                let tool = match import_tool(&source, entry) {
                    Ok(tool) => tool,
                    Err(refusal) => {
                        gateway.refusals.push(refusal);
                        continue;
                    }
                };
                match owners.get(tool.name()) {
                    Some(owner) if owner == upstream.name() => {
                        // The upstream lists the name twice: the first one is served.
                        let listed_name = entry
                            .get("name")
                            .and_then(tollgate::json::JsonValue::as_str)
                            .unwrap_or("");
                        gateway.refusals.push(Refusal::new(
                            upstream.name(),
                            listed_name,
                            RefusalReason::NameClash,
                        ));
                    }
                    Some(_) => {
                        gateway.close().await;
                        return Err(GatewayError::new(
                            GatewayErrorKind::NameClash,
                            Some(upstream.name()),
                        ));
                    }
                    None => {
                        owners.insert(tool.name().to_owned(), upstream.name().to_owned());
                        gateway.tools.push(tool);
                    }
                }
            }
            tracing::info!(
                target: UPSTREAM,
                upstream = upstream.name(),
                tools = gateway.tools.iter().filter(|t| owners.get(t.name()).is_some_and(|o| o == upstream.name())).count(),
                "upstream imported"
            );
        }
        for refusal in &gateway.refusals {
            tracing::warn!(
                target: UPSTREAM,
                upstream = refusal.upstream(),
                pointer = refusal.pointer(),
                "{refusal}"
            );
        }
        Ok(gateway)
    }

    /// The tools imported, in upstream and list order.
    pub fn tools(&self) -> &[ToolRegistration] {
        &self.tools
    }

    /// The upstream tools left out, and why.
    pub fn refusals(&self) -> &[Refusal] {
        &self.refusals
    }

    /// Adds every imported tool to `builder`, and declares the gateway's forwarding error safe
    /// to log (its text is fixed and carries no data).
    pub fn install(&self, builder: EndpointBuilder) -> EndpointBuilder {
        self.tools
            .iter()
            .cloned()
            .fold(builder.error_safe_to_log::<ForwardError>(), |b, tool| {
                b.add_tool(tool)
            })
    }

    /// Closes every upstream (a stdio child is ended; a 2025 HTTP session deleted).
    pub async fn close(&self) {
        for (_, client) in &self.upstreams {
            let _ = client.close().await;
        }
    }
}

/// Starts or connects to one upstream, with the gateway's own credentials.
async fn connect(upstream: &UpstreamConfig) -> Result<Client, GatewayError> {
    let failed = || GatewayError::new(GatewayErrorKind::Upstream, Some(upstream.name()));
    let builder = Client::builder().unchecked_output_schemas();
    match upstream.transport() {
        UpstreamTransport::Http { url, headers } => {
            let mut builder = builder;
            for (name, value) in headers {
                builder = builder.header(name, value).map_err(|_| failed())?;
            }
            builder.connect_http(url).await.map_err(|_| failed())
        }
        UpstreamTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut process = tokio::process::Command::new(command);
            process.args(args).envs(env.iter().map(|(k, v)| (k, v)));
            if let Some(cwd) = cwd {
                process.current_dir(cwd);
            }
            let name: Arc<str> = Arc::from(upstream.name());
            builder
                .stderr(move |line| {
                    tracing::info!(target: UPSTREAM, upstream = &*name, line, "upstream stderr");
                })
                .connect_stdio(process)
                .await
                .map_err(|_| failed())
        }
    }
}
