//! OpenTelemetry export for what the `tollgate` command serves (the gateway, the demo) and for
//! the catalog example, which includes this file: when `OTEL_EXPORTER_OTLP_ENDPOINT` (or its `_TRACES_` /
//! `_METRICS_` form) is set, Tollgate's request spans and instruments go to that OTLP receiver
//! over HTTP (protobuf), with the exporter's and the SDK's other `OTEL_*` variables honoured
//! (headers, timeout, `OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`,
//! `OTEL_METRIC_EXPORT_INTERVAL`). Unset, nothing is installed and nothing is exported.
//!
//! Set up before the async runtime starts and shut down after it ends: the exporters send from
//! threads of their own with a blocking HTTP client.

use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;

/// The installed providers, flushed and shut down when the process stops serving.
pub(crate) struct Telemetry {
    tracer: SdkTracerProvider,
    meter: SdkMeterProvider,
}

fn set(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty())
}

/// Installs the OTLP exporters as the global providers when the environment names a receiver,
/// as `service` unless `OTEL_SERVICE_NAME` names it.
pub(crate) fn from_env(service: &str) -> Result<Option<Telemetry>, Box<dyn std::error::Error>> {
    let traces = set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    let metrics = set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT");
    if !traces && !metrics {
        return Ok(None);
    }
    let mut resource = Resource::builder();
    if !set("OTEL_SERVICE_NAME") {
        resource = resource.with_service_name(service.to_owned());
    }
    let resource = resource.build();
    // The exporter's reqwest client is built on rustls without a crypto provider of its own
    // (the tree's one reqwest leaves the choice to the application): the process's default is
    // ring, as Tollgate's own HTTP clients use. Already installed is fine.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut tracer = SdkTracerProvider::builder().with_resource(resource.clone());
    if traces {
        let spans = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .build()?;
        tracer = tracer.with_batch_exporter(spans);
    }
    let tracer = tracer.build();
    let mut meter = SdkMeterProvider::builder().with_resource(resource);
    if metrics {
        let exporter = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .build()?;
        meter = meter.with_periodic_exporter(exporter);
    }
    let meter = meter.build();
    opentelemetry::global::set_tracer_provider(tracer.clone());
    opentelemetry::global::set_meter_provider(meter.clone());
    Ok(Some(Telemetry { tracer, meter }))
}

impl Telemetry {
    /// Sends what is still buffered and stops the exporters.
    pub(crate) fn shutdown(self) {
        if let Err(e) = self.tracer.shutdown() {
            eprintln!("OpenTelemetry traces: {e}");
        }
        if let Err(e) = self.meter.shutdown() {
            eprintln!("OpenTelemetry metrics: {e}");
        }
    }
}
