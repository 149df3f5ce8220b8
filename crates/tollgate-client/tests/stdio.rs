//! Stdio: this test binary starts itself as the server (`TOLLGATE_CLIENT_STDIO_CHILD` set) and
//! the client speaks to it over the child's stdin and stdout, its stderr surfaced to a callback.
//! No libtest harness, so nothing but the server writes to the child's stdout.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::sync::{Arc, Mutex};

use support::{ALL, endpoint, text};
use tollgate::json::JsonObject;
use tollgate_client::{Client, Revision};

const CHILD: &str = "TOLLGATE_CLIENT_STDIO_CHILD";

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    if std::env::var_os(CHILD).is_some() {
        eprintln!("child ready");
        let server = tollgate::transport::StdioServer::new(endpoint(&ALL, Arc::default()));
        runtime.block_on(server.serve_stdio()).unwrap();
        return;
    }
    for revision in Revision::ALL {
        runtime.block_on(lists_and_calls(revision));
        println!("test stdio::lists_and_calls({revision}) ... ok");
    }
}

async fn lists_and_calls(revision: Revision) {
    let mut command = tokio::process::Command::new(std::env::current_exe().unwrap());
    command.env(CHILD, "1");
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = Arc::clone(&seen);
    let client = Client::builder()
        .revisions([revision])
        .stderr(move |line| sink.lock().unwrap().push(line.to_owned()))
        .connect_stdio(command)
        .await
        .unwrap();
    assert_eq!(client.revision(), revision);
    assert!(client.list_tools().await.unwrap().len() >= 4);
    let args = JsonObject::builder().insert("region", "eu").build();
    assert_eq!(text(&client.call_tool("echo", args).await.unwrap()), "eu");
    client.close().await.unwrap();
    assert!(seen.lock().unwrap().iter().any(|l| l == "child ready"));
}
