//! A small agent loop against the catalog demo: list the tools, call them, and answer the
//! demo's elicitation ("How many shall we reserve?") as the user would.
//!
//! ```text
//! tollgate serve-demo &                       # http://127.0.0.1:8080/mcp
//! cargo run -p tollgate-client --example agent -- http://127.0.0.1:8080/mcp
//! ```
//!
//! The "model" here is a fixed plan (search, then reserve what it found); a real agent hands the
//! tool list to its model and loops on what the model asks for. The user's answers come from
//! stdin, or are the schema's defaults and a quantity of 1 when stdin is not a terminal.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "an example talking to its user"
)]

use std::io::IsTerminal;

use tollgate_client::Client;
use tollgate_client::handler::{Handler, HandlerFuture, Refusal, apply_elicitation_defaults};
use tollgate_client::json::{JsonNumber, JsonObject, JsonValue};

/// Asks the user when the server asks; prints progress and log notifications.
struct User;

impl Handler for User {
    fn notification(&self, method: &str, params: Option<&JsonObject>) {
        let message = params
            .and_then(|p| p.get("message").or_else(|| p.get("data")))
            .and_then(JsonValue::as_str)
            .unwrap_or("");
        eprintln!("[{method}] {message}");
    }

    fn request<'a>(&'a self, method: &'a str, params: Option<&'a JsonObject>) -> HandlerFuture<'a> {
        Box::pin(async move {
            if method != "elicitation/create" {
                return Err(Refusal::METHOD_NOT_FOUND);
            }
            let question = params
                .and_then(|p| p.get("message"))
                .and_then(JsonValue::as_str)
                .unwrap_or("?");
            println!("server asks: {question}");
            let quantity = if std::io::stdin().is_terminal() {
                let mut line = String::new();
                let _ = std::io::stdin().read_line(&mut line);
                line.trim().parse::<u64>().unwrap_or(1)
            } else {
                1
            };
            println!("user answers: {quantity}");
            let content = JsonObject::builder()
                .insert("quantity", JsonNumber::from(quantity))
                .build();
            Ok(JsonObject::builder()
                .insert("action", "accept")
                .insert("content", apply_elicitation_defaults(params, content))
                .build()
                .into())
        })
    }
}

fn text(result: &JsonValue) -> String {
    let blocks = result.get("content").and_then(JsonValue::as_array);
    blocks
        .map(|b| {
            b.iter()
                .filter_map(|b| b.get("text").and_then(JsonValue::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "http://127.0.0.1:8080/mcp".to_owned());
    let client = Client::builder()
        .capabilities(
            JsonObject::builder()
                .insert("elicitation", JsonObject::new())
                .build(),
        )
        .handler(User)
        .connect_http(&url)
        .await?;
    println!("connected on {}", client.revision());
    let tools = client.list_tools().await?;
    for tool in &tools {
        println!(
            "tool: {}",
            tool.get("name").and_then(JsonValue::as_str).unwrap_or("?")
        );
    }
    // The plan: search, then reserve the first item found.
    let plan: [(&str, JsonObject); 2] = [
        (
            "catalog.search",
            JsonObject::builder().insert("query", "pot").build(),
        ),
        (
            "catalog.reserve",
            JsonObject::builder().insert("sku", "POT-001").build(),
        ),
    ];
    for (tool, arguments) in plan {
        println!("calling {tool}");
        match client.call_tool(tool, arguments).await {
            Ok(result) => println!("{}", text(&result)),
            Err(e) => println!("{tool} failed: {e}"),
        }
    }
    client.close().await?;
    Ok(())
}
