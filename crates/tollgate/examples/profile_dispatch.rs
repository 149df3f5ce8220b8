//! In-process dispatch of MCP requests through the tower service (no socket), for profiling:
//! `valgrind --tool=callgrind target/release/examples/profile_dispatch [small|large|list] N`.
//!
//! Built with the `otel` feature, `TOLLGATE_PROFILE_OTEL` installs the OpenTelemetry SDK first:
//! `unsampled` (a tracer provider whose sampler records nothing, and a meter provider with a
//! reader) or `sampled` (every span recorded and handed to an exporter that drops it). Unset,
//! the global providers stay the API's no-ops.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::Full;
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
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

/// Installs the OpenTelemetry SDK as `TOLLGATE_PROFILE_OTEL` says (see the file's doc).
#[cfg(feature = "otel")]
fn install_telemetry() {
    use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
    use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider, SpanData};

    /// Takes every finished span and drops it: the cost of recording, not of shipping.
    #[derive(Debug)]
    struct Discard;

    impl opentelemetry_sdk::trace::SpanExporter for Discard {
        async fn export(&self, _: Vec<SpanData>) -> opentelemetry_sdk::error::OTelSdkResult {
            Ok(())
        }
    }

    let sampler = match std::env::var("TOLLGATE_PROFILE_OTEL").as_deref() {
        Ok("unsampled") => Sampler::AlwaysOff,
        Ok("sampled") => Sampler::AlwaysOn,
        _ => return,
    };
    let tracer = SdkTracerProvider::builder()
        .with_sampler(sampler)
        .with_simple_exporter(Discard)
        .build();
    opentelemetry::global::set_tracer_provider(tracer);
    let meter = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(InMemoryMetricExporter::default()).build())
        .build();
    opentelemetry::global::set_meter_provider(meter);
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    #[cfg(feature = "otel")]
    install_telemetry();
    let v = ProtocolVersion::V2026_07_28;
    let tool = ToolRegistration::with_name("add", [v])
        .argument_and_output_types::<Add, Sum>()
        .handler(add)
        .build()?;
    let endpoint = Endpoint::with_path("/mcp", [v], Implementation::new("p", "1")).add_tool(tool);
    let service = McpService::new(endpoint.build()?);
    let mut args = std::env::args().skip(1);
    let kind = args.next().unwrap_or_else(|| "small".into());
    let n: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(10_000);
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let call = |arguments: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"add","arguments":{arguments},{meta}}}}}"#
        )
    };
    let (method, body) = match kind.as_str() {
        "large" => (
            "tools/call",
            call(&format!(
                r#"{{"a":2,"b":3,"pad":"{}"}}"#,
                "x".repeat(100_000)
            )),
        ),
        "list" => (
            "tools/list",
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{meta}}}}}"#),
        ),
        _ => ("tools/call", call(r#"{"a":2,"b":3}"#)),
    };
    let body = Bytes::from(body);
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let mut bytes = 0u64;
    runtime.block_on(async {
        for _ in 0..n {
            let request = http::Request::post("/mcp")
                .header("host", "127.0.0.1:8080")
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", method)
                .header("mcp-name", "add")
                .body(Full::new(body.clone()))
                .unwrap_or_default();
            let response = service.serve(request).await;
            bytes += http_body::Body::size_hint(response.body())
                .exact()
                .unwrap_or(0);
        }
    });
    println!("{n} requests, {bytes} response bytes");
    Ok(())
}
