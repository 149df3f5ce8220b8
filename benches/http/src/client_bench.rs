//! The client bench (issue 50): one client process making N sequential small `tools/call`s of
//! `add` over HTTP to a fast server on loopback (`hyper-add`, which must not be the bottleneck),
//! and what they cost the client: CPU time per call (user + system, `getrusage` of this whole
//! process, every thread) and calls per second. Not a test; driven by scripts/bench-client.
//!
//! Usage: `client-bench tollgate|rmcp 2025-11-25|2026-07-28 CALLS` (the server at
//! `127.0.0.1:$PORT`, default 18400). The handshake and 200 warm-up calls are not measured.
//! Prints one line: `client revision calls cpu_ns_per_call calls_per_second`.

use std::time::{Duration, Instant};

const WARM_UP: u64 = 200;

fn cpu() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a whole `rusage` into the pointer it is given, which points to
    // one; RUSAGE_SELF is always valid.
    #[allow(unsafe_code, reason = "getrusage has no safe wrapper in std")]
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr());
        usage.assume_init()
    };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

type Call<'a> = Box<dyn FnMut(i64) -> std::pin::Pin<Box<dyn Future<Output = i64> + 'a>> + 'a>;

async fn measure(mut call: Call<'_>, calls: u64) -> (Duration, Duration) {
    for i in 0..WARM_UP {
        assert_eq!(call(i as i64).await, i as i64 + 3);
    }
    let (cpu0, wall0) = (cpu(), Instant::now());
    for i in 0..calls {
        assert_eq!(call(i as i64).await, i as i64 + 3);
    }
    (cpu() - cpu0, wall0.elapsed())
}

async fn tollgate(url: &str, revision: &str, calls: u64) -> (Duration, Duration) {
    use tollgate_client::{Client, Revision, json::JsonObject};
    let revision = Revision::from_wire(revision).expect("a revision the client speaks");
    let client = Client::builder()
        .revisions([revision])
        .connect_http(url)
        .await
        .expect("connect");
    let client = &client;
    let call: Call<'_> = Box::new(move |a| {
        Box::pin(async move {
            let args = JsonObject::builder().insert("a", a).insert("b", 3).build();
            let result = client.call_tool("add", args).await.expect("call");
            result
                .get("structuredContent")
                .and_then(|s| s.get("sum"))
                .and_then(|n| n.as_number())
                .and_then(|n| n.to_i64())
                .unwrap_or(-1)
        })
    });
    measure(call, calls).await
}

async fn rmcp(url: &str, revision: &str, calls: u64) -> (Duration, Duration) {
    use rmcp::model::{CallToolRequestParams, ProtocolVersion};
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
    use rmcp::transport::StreamableHttpClientTransport;
    let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
    let lifecycle = match revision {
        "2026-07-28" => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
        _ => ClientLifecycleMode::Initialize,
    };
    let client = ().serve_with_lifecycle(transport, lifecycle).await.expect("connect");
    let client = &client;
    let call: Call<'_> = Box::new(move |a| {
        Box::pin(async move {
            let mut args = serde_json::Map::new();
            args.insert("a".to_owned(), a.into());
            args.insert("b".to_owned(), 3.into());
            let params = CallToolRequestParams::new("add").with_arguments(args);
            let result = client.call_tool(params).await.expect("call");
            result
                .structured_content
                .as_ref()
                .and_then(|s| s.get("sum"))
                .and_then(serde_json::Value::as_i64)
                .unwrap_or(-1)
        })
    });
    measure(call, calls).await
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [client, revision, calls] = args.as_slice() else {
        eprintln!("usage: client-bench tollgate|rmcp 2025-11-25|2026-07-28 CALLS");
        std::process::exit(2);
    };
    let calls: u64 = calls.parse().expect("CALLS is a number");
    let port = std::env::var("PORT").unwrap_or_else(|_| "18400".to_owned());
    let url = format!("http://127.0.0.1:{port}/mcp");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (cpu, wall) = runtime.block_on(async {
        match client.as_str() {
            "tollgate" => tollgate(&url, revision, calls).await,
            "rmcp" => rmcp(&url, revision, calls).await,
            _ => panic!("client is tollgate or rmcp"),
        }
    });
    println!(
        "{client} {revision} {calls} {} {:.0}",
        cpu.as_nanos() / u128::from(calls.max(1)),
        calls as f64 / wall.as_secs_f64()
    );
}
