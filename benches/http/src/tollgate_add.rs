//! Tollgate's `add`: typed arguments and output (full input and output validation), text mirror
//! and structured sum; 2026-07-28 and stateless 2025-11-25.
//!
//! `TOLLGATE_ADD_LIVE=1` builds the endpoint with live catalogs (every request loads the
//! published catalog once).
//!
//! `TOLLGATE_ADD_VIEWS` gives the endpoint a per-principal view function: `all` (every caller
//! sees everything: the function runs once per registration and the catalog rendered at build
//! answers) or `some` (the filler tools ending in 7 are hidden: the caller's view is rendered
//! once and read from the cache of views).
//!
//! `TOLLGATE_ADD_SESSIONS` keeps 2025 sessions: `memory` in this process, or (built with the
//! `postgres` feature) a PostgreSQL URL whose database every instance shares.
//!
//! Built with the `otel` feature, `TOLLGATE_ADD_OTEL` installs the OpenTelemetry SDK: `unsampled`
//! (a tracer whose sampler records nothing, and a meter provider) or `sampled` (every span
//! recorded and batched to an exporter that drops it, and a meter provider).
//!
//! Built with the `log` feature, `TOLLGATE_ADD_LOG=info` installs tracing-subscriber's fmt
//! subscriber at `info`, writing to `io::sink`.

mod common;

use std::convert::Infallible;

use tollgate::json::{JsonLimits, JsonObject, from_str};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    Server, ToolArguments, ToolRegistration,
    context::{HandlerFailure, HandlerOutput, Intercepted, SanitizeError, ToolResultSanitizer},
    tool::{CompleteResult, OperationResult},
    transport::ServerLimits,
};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

async fn add(
    _: &RequestContext,
    args: ToolArguments<Add>,
    _: &InvocationFeatures,
) -> Result<Sum, Infallible> {
    let Add { a, b } = args.into_converted();
    Ok(Sum {
        sum: a.wrapping_add(b),
    })
}

async fn filler(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_text("ok").into())
}

/// A pass-through interceptor and an identity sanitizer: what the hooks cost when configured
/// (`TOLLGATE_ADD_HOOKS=1`).
async fn pass(call: Intercepted<'_>) -> Result<HandlerOutput, HandlerFailure> {
    call.proceed().await
}

struct Identity;

impl ToolResultSanitizer for Identity {
    fn sanitize(
        &self,
        _: &RequestContext,
        _: &str,
        _: &JsonObject,
        result: CompleteResult,
    ) -> Result<CompleteResult, SanitizeError> {
        Ok(result)
    }
}

/// Installs the SDK as `TOLLGATE_ADD_OTEL` says (see the file's doc).
#[cfg(feature = "otel")]
fn telemetry() {
    use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
    use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider, SpanData};

    /// Takes every batch of finished spans and drops it: the cost of recording, not of shipping.
    #[derive(Debug)]
    struct Discard;

    impl opentelemetry_sdk::trace::SpanExporter for Discard {
        async fn export(&self, _: Vec<SpanData>) -> opentelemetry_sdk::error::OTelSdkResult {
            Ok(())
        }
    }

    let sampler = match std::env::var("TOLLGATE_ADD_OTEL").as_deref() {
        Ok("unsampled") => Sampler::AlwaysOff,
        Ok("sampled") => Sampler::AlwaysOn,
        _ => return,
    };
    let tracer = SdkTracerProvider::builder()
        .with_sampler(sampler)
        .with_batch_exporter(Discard)
        .build();
    opentelemetry::global::set_tracer_provider(tracer);
    let meter = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(InMemoryMetricExporter::default()).build())
        .build();
    opentelemetry::global::set_meter_provider(meter);
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    #[cfg(feature = "otel")]
    telemetry();
    #[cfg(feature = "log")]
    if std::env::var("TOLLGATE_ADD_LOG").as_deref() == Ok("info") {
        tracing_subscriber::fmt()
            .with_max_level(tracing_subscriber::filter::LevelFilter::INFO)
            .with_writer(std::io::sink)
            .init();
    }
    let revisions = [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25];
    let sessions = std::env::var("TOLLGATE_ADD_SESSIONS").ok();
    let mut endpoint = Endpoint::with_path(
        "/mcp",
        revisions,
        Implementation::new("tollgate-add", "1.0.0"),
    )
    .legacy_sessions(
        sessions
            .as_ref()
            .map(|_| tollgate::endpoint::SessionConfig::default()),
    )
    .tools_page_size(1000)
    .add_tool(
        ToolRegistration::with_name("add", revisions)
            .argument_and_output_types::<Add, Sum>()
            .handler(add)
            .description("Adds two integers")
            .build()?,
    );
    let schema = from_str(common::FILLER_SCHEMA, &JsonLimits::default())?;
    for i in 0..common::FILLER_TOOLS {
        endpoint = endpoint.add_tool(
            ToolRegistration::with_name(common::filler_name(i), revisions)
                .input_schema(&schema)?
                .handler(filler)
                .description(common::FILLER_DESCRIPTION)
                .build()?,
        );
    }
    if std::env::var_os("TOLLGATE_ADD_LIVE").is_some() {
        endpoint = endpoint.live_catalogs();
    }
    match std::env::var("TOLLGATE_ADD_VIEWS").as_deref() {
        Ok("all") => endpoint = endpoint.view(|_, _| true),
        Ok("some") => endpoint = endpoint.view(|_, item| !item.key().ends_with('7')),
        _ => {}
    }
    if std::env::var_os("TOLLGATE_ADD_HOOKS").is_some() {
        endpoint = endpoint.interceptor(pass).tool_result_sanitizer(Identity);
    }
    common::runtime()?.block_on(async {
        #[cfg(feature = "postgres")]
        if let Some(url) = sessions.as_deref().filter(|s| s.starts_with("postgres")) {
            let store = tollgate::endpoint::PostgresSessionStore::connect(url)
                .await
                .map_err(std::io::Error::other)?;
            endpoint = endpoint.session_store(store);
        }
        let service = McpService::new(endpoint.build().map_err(std::io::Error::other)?);
        // The load generator is one peer (127.0.0.1) opening up to 1,000 connections: this run
        // lets one peer hold every place (the default per-peer cap is 256).
        let limits = ServerLimits::new().max_connections_per_peer(1024);
        let server = Server::bind(common::address(), service)
            .await?
            .limits(limits);
        server.serve_with_shutdown(std::future::pending()).await
    })?;
    Ok(())
}
