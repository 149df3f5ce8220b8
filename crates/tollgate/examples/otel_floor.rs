//! The least an unsampled request asks of the OpenTelemetry API and SDK, without Tollgate, for
//! profiling (feature `otel`): `valgrind --tool=callgrind target/release/examples/otel_floor
//! MODE N`, at two values of `N`; the difference divided by theirs is one request's share.
//!
//! Each iteration does what any instrumentation of a request must under an SDK tracer whose
//! sampler records nothing (`Sampler::AlwaysOff`) and an SDK meter provider with a reader: read
//! the clock, ask the tracer for the request's span under the current context, keep the span's
//! context as the current one while the request runs (one attach), then record the duration
//! through a bound histogram handle. `MODE` chooses how the span is asked for:
//! `boxed-attrs` (the global tracer provider's `BoxedTracer`, with the three attributes the
//! conventions give at creation, as Tollgate does), `boxed` (without them), `direct-attrs` and
//! `direct` (the SDK's tracer itself, which an instrumentation library reaching the tracer
//! through the global provider cannot use).

use std::hint::black_box;
use std::time::Instant;

use opentelemetry::trace::{Span as _, TracerProvider as _};
use opentelemetry::trace::{SpanBuilder, SpanKind, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider};

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let n: usize = std::env::args()
        .nth(2)
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    let provider = SdkTracerProvider::builder()
        .with_sampler(Sampler::AlwaysOff)
        .build();
    opentelemetry::global::set_tracer_provider(provider.clone());
    let meter = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(InMemoryMetricExporter::default()).build())
        .build();
    opentelemetry::global::set_meter_provider(meter);
    let boxed = opentelemetry::global::tracer("floor");
    let direct = provider.tracer("floor");
    let histogram = opentelemetry::global::meter("floor")
        .f64_histogram("mcp.server.operation.duration")
        .build();
    let bound = histogram.bind(&[KeyValue::new("mcp.method.name", "tools/call")]);
    for _ in 0..n {
        let started = Instant::now();
        let parent = Context::current();
        let mut builder = SpanBuilder::from_name("tools/call").with_kind(SpanKind::Server);
        if mode.ends_with("attrs") {
            builder = builder.with_attributes(vec![
                KeyValue::new("mcp.method.name", "tools/call"),
                KeyValue::new("network.transport", "tcp"),
                KeyValue::new("network.protocol.name", "http"),
            ]);
        }
        let own = if mode.starts_with("direct") {
            direct
                .build_with_context(builder, &parent)
                .span_context()
                .clone()
        } else {
            boxed
                .build_with_context(builder, &parent)
                .span_context()
                .clone()
        };
        let cx = parent.with_remote_span_context(own);
        {
            let _attached = cx.clone().attach();
            black_box(&cx);
        }
        drop(cx);
        bound.record(started.elapsed().as_secs_f64());
    }
}
