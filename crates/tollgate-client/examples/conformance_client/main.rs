//! The client the official conformance suite drives: `conformance_client URL`, with the scenario
//! in `MCP_CONFORMANCE_SCENARIO`, its context (JSON) in `MCP_CONFORMANCE_CONTEXT` and the
//! revision to speak in `MCP_CONFORMANCE_PROTOCOL_VERSION`. It behaves as an ordinary
//! application would: connect, list, call what the scenario offers, answer elicitations with
//! the schema's defaults. `scripts/conformance-client` runs every client scenario through it.

#![allow(
    clippy::print_stderr,
    reason = "an example reporting to the suite's log"
)]

mod auth;

use std::process::ExitCode;

use tollgate_client::handler::{Handler, HandlerFuture, Refusal, apply_elicitation_defaults};
use tollgate_client::json::{JsonArray, JsonObject, JsonValue};
use tollgate_client::{Client, Revision};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Accepts every elicitation with the requested schema's defaults; no roots; no sampling.
struct Conformance;

impl Handler for Conformance {
    fn request<'a>(&'a self, method: &'a str, params: Option<&'a JsonObject>) -> HandlerFuture<'a> {
        Box::pin(async move {
            match method {
                "elicitation/create" => Ok(JsonObject::builder()
                    .insert("action", "accept")
                    .insert(
                        "content",
                        apply_elicitation_defaults(params, JsonObject::new()),
                    )
                    .build()
                    .into()),
                "roots/list" => Ok(JsonObject::builder()
                    .insert("roots", JsonArray::new())
                    .build()
                    .into()),
                "ping" => Ok(JsonObject::new().into()),
                _ => Err(Refusal::METHOD_NOT_FOUND),
            }
        })
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().next_back() else {
        eprintln!("usage: conformance_client URL");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| tollgate_client::json::from_str(&c, &Default::default()).ok());
    let outcome = if scenario.starts_with("auth/") {
        auth::run(&url, &scenario, context.as_ref()).await
    } else {
        run(&url, &scenario, context.as_ref()).await
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{scenario}: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(url: &str, scenario: &str, context: Option<&JsonValue>) -> Result<()> {
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_default();
    let revisions = match Revision::from_wire(&version) {
        Some(revision) => vec![revision],
        None => Revision::ALL.to_vec(),
    };
    let capabilities = JsonObject::builder()
        .insert("elicitation", JsonObject::new())
        .insert("roots", JsonObject::new())
        .build();
    let client = Client::builder()
        .revisions(revisions)
        .capabilities(capabilities)
        .handler(Conformance)
        .connect_http(url)
        .await?;
    eprintln!("connected on {}", client.revision());
    let tools = client.list_tools().await?;
    match scenario {
        "json-schema-2020-12-preservation" => echo_schema(&client, &tools).await?,
        s if s.starts_with("sep-2640-") => skills(&client, s).await?,
        _ => call_tools(&client, &tools, context).await,
    }
    if scenario == "http-standard-headers" {
        everything_else(&client).await;
    }
    client.close().await?;
    Ok(())
}

/// Calls the context's `toolCalls` when it has them, else every listed tool with arguments made
/// from its schema. A refused call (a tool the client rejects, a tool error) is reported and
/// the run goes on, as an application would.
async fn call_tools(client: &Client, tools: &[JsonValue], context: Option<&JsonValue>) {
    let planned = context
        .and_then(|c| c.get("toolCalls"))
        .and_then(JsonValue::as_array);
    let calls: Vec<(String, JsonObject)> = match planned {
        Some(list) => list
            .iter()
            .filter_map(|c| {
                let name = c.get("name")?.as_str()?.to_owned();
                let args = c.get("arguments").and_then(JsonValue::as_object).cloned();
                Some((name, args.unwrap_or_default()))
            })
            .collect(),
        None => tools
            .iter()
            .filter_map(|t| {
                let name = t.get("name")?.as_str()?.to_owned();
                Some((name, arguments_for(t.get("inputSchema"))))
            })
            .collect(),
    };
    for (name, arguments) in calls {
        match client.call_tool(&name, arguments).await {
            Ok(_) => eprintln!("called {name}"),
            Err(e) => eprintln!("{name}: {e}"),
        }
    }
}

/// Arguments for a schema's required properties: 1 for numbers, "x" for strings, true, {}, [].
fn arguments_for(schema: Option<&JsonValue>) -> JsonObject {
    let mut out = JsonObject::builder();
    let properties = schema.and_then(|s| s.get("properties"));
    let required = schema
        .and_then(|s| s.get("required"))
        .and_then(JsonValue::as_array);
    for name in required
        .iter()
        .flat_map(|r| r.iter())
        .filter_map(JsonValue::as_str)
    {
        let kind = properties
            .and_then(|p| p.get(name))
            .and_then(|p| p.get("type"))
            .and_then(JsonValue::as_str);
        let value: JsonValue = match kind {
            Some("number" | "integer") => tollgate_client::json::JsonNumber::from(1u8).into(),
            Some("boolean") => true.into(),
            Some("object") => JsonObject::new().into(),
            Some("array") => JsonArray::new().into(),
            _ => "x".into(),
        };
        out.push(name, value);
    }
    out.build()
}

/// Hands one tool's `inputSchema` back, verbatim, to the tool that takes a `schema`.
async fn echo_schema(client: &Client, tools: &[JsonValue]) -> Result<()> {
    let takes_schema = |t: &&JsonValue| {
        t.get("inputSchema")
            .and_then(|s| s.get("properties"))
            .and_then(|p| p.get("schema"))
            .is_some()
    };
    let echo = tools.iter().find(takes_schema).ok_or("no echo tool")?;
    let focal = tools
        .iter()
        .find(|t| !takes_schema(t))
        .ok_or("no focal tool")?;
    let name = echo
        .get("name")
        .and_then(JsonValue::as_str)
        .ok_or("no name")?;
    let schema = focal.get("inputSchema").cloned().unwrap_or_default();
    let arguments = JsonObject::builder().insert("schema", schema).build();
    client.call_tool(name, arguments).await?;
    Ok(())
}

/// The resources and prompts methods, once each.
async fn everything_else(client: &Client) {
    if let Ok(resources) = client.list_resources().await
        && let Some(uri) = resources
            .first()
            .and_then(|r| r.get("uri"))
            .and_then(JsonValue::as_str)
    {
        let _ = client.read_resource(uri).await;
    }
    if let Ok(prompts) = client.list_prompts().await
        && let Some(name) = prompts
            .first()
            .and_then(|p| p.get("name"))
            .and_then(JsonValue::as_str)
    {
        let _ = client.get_prompt(name, JsonObject::new()).await;
    }
}

/// The skills extension: list, then (unless the scenario is about not prefetching) load the
/// first skill, verified against its entry; its other files are read only after that.
async fn skills(client: &Client, scenario: &str) -> Result<()> {
    let skills = client.list_skills().await?;
    if scenario == "sep-2640-client-no-prefetch" {
        return Ok(());
    }
    let entry = skills.first().ok_or("no skill listed")?;
    let skill = client.load_skill(entry).await?;
    eprintln!("loaded {}", skill.uri());
    for file in skill.other_files() {
        client.read_skill_file(entry, file).await?;
    }
    Ok(())
}
