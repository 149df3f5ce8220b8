//! The `tollgate` command: check and validate Tool Schema Profile 1 schemas, list and call MCP
//! tools by hand, and serve the catalog demo.
//!
//! A thin shell over the library crates; it owns argument parsing and output formats only.

mod client;
mod locate;

use std::io::{BufRead, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tollgate_json::{JsonLimits, JsonObject, JsonValue, from_str};
use tollgate_schema::CompiledSchema;

#[path = "../../../examples/catalog/endpoint.rs"]
#[allow(unreachable_pub, reason = "shared with the catalog example")]
mod demo;

/// Tollgate: a strict, bounded MCP server framework.
#[derive(Parser)]
#[command(name = "tollgate", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Tool Schema Profile 1: check and validate schemas.
    #[command(subcommand)]
    Schema(SchemaCommand),
    /// List a server's tools (`http://` URLs).
    List {
        /// The MCP endpoint, e.g. http://127.0.0.1:8080/mcp.
        url: String,
        /// The revision to speak: 2026-07-28 or 2025-11-25.
        #[arg(long, default_value = "2026-07-28")]
        revision: String,
    },
    /// Call a tool (`http://` URLs).
    Call {
        /// The MCP endpoint.
        url: String,
        /// The tool name.
        tool: String,
        /// The arguments, a JSON object.
        #[arg(default_value = "{}")]
        arguments: String,
        /// The revision to speak: 2026-07-28 or 2025-11-25.
        #[arg(long, default_value = "2026-07-28")]
        revision: String,
    },
    /// Serve the catalog demo.
    ServeDemo {
        /// Where to listen.
        #[arg(long, default_value = "127.0.0.1:8080")]
        addr: std::net::SocketAddr,
        /// Serve stdin and stdout instead of HTTP.
        #[arg(long)]
        stdio: bool,
    },
}

#[derive(Subcommand)]
enum SchemaCommand {
    /// Compile FILE as a tool input schema; print the violation with its pointer, line and column.
    Check {
        /// The schema document.
        file: std::path::PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Lift the object-root rule of tool input schemas.
        #[arg(long)]
        any_root: bool,
    },
    /// Validate INSTANCE against SCHEMA (exit 1 when invalid).
    Validate {
        /// The schema document.
        schema: std::path::PathBuf,
        /// The instance document.
        instance: std::path::PathBuf,
        /// Lift the object-root rule of tool input schemas.
        #[arg(long)]
        any_root: bool,
    },
    /// Read JSON lines `{"schema":…,"instance":…}` from stdin and write `{"valid":…}` or
    /// `{"compile_error":…}` per line.
    Batch {
        /// Lift the object-root rule of tool input schemas.
        #[arg(long)]
        any_root: bool,
    },
}

fn compile(
    document: &JsonValue,
    any_root: bool,
) -> Result<CompiledSchema, tollgate_schema::CompileError> {
    if any_root {
        CompiledSchema::compile(document)
    } else {
        CompiledSchema::compile_tool_input(document)
    }
}

fn read(path: &std::path::Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn check(file: &std::path::Path, json: bool, any_root: bool) -> Result<bool, String> {
    let text = read(file)?;
    let name = file.display().to_string();
    let report =
        |line: usize, column: usize, pointer: &str, keyword: Option<&str>, message: &str| {
            if json {
                let mut o = JsonObject::builder()
                    .insert("file", name.as_str())
                    .insert("line", line as u64)
                    .insert("column", column as u64)
                    .insert("pointer", pointer)
                    .insert("message", message);
                if let Some(k) = keyword {
                    o.push("keyword", k);
                }
                println!(
                    "{}",
                    tollgate_json::to_string(&o.build().into(), &Default::default())
                        .unwrap_or_default()
                );
            } else {
                let keyword = keyword
                    .map(|k| format!(" (keyword `{k}`)"))
                    .unwrap_or_default();
                println!("{name}:{line}:{column}: {message}{keyword} at \"{pointer}\"");
            }
        };
    let document = match from_str(&text, &JsonLimits::default()) {
        Ok(d) => d,
        Err(e) => {
            let (line, column) = e.line_column(text.as_bytes());
            report(
                line,
                column,
                "",
                None,
                &format!("not JSON: {}", e.kind().description()),
            );
            return Ok(false);
        }
    };
    match compile(&document, any_root) {
        Ok(schema) => {
            if json {
                println!(
                    r#"{{"file":{},"valid":true,"nodes":{}}}"#,
                    tollgate_json::to_string(&JsonValue::from(name.as_str()), &Default::default())
                        .unwrap_or_default(),
                    schema.node_count()
                );
            } else {
                println!(
                    "{name}: a valid Profile 1 {}schema ({} nodes)",
                    if any_root { "" } else { "tool input " },
                    schema.node_count()
                );
            }
            Ok(true)
        }
        Err(e) => {
            let pointer = match e.keyword() {
                Some(k) => format!(
                    "{}/{}",
                    e.location(),
                    k.replace('~', "~0").replace('/', "~1")
                ),
                None => e.location().to_owned(),
            };
            let (line, column) = locate::line_column(&text, locate::offset_of(&text, &pointer));
            report(
                line,
                column,
                e.location(),
                e.keyword(),
                e.kind().description(),
            );
            Ok(false)
        }
    }
}

fn validate(
    schema: &std::path::Path,
    instance: &std::path::Path,
    any_root: bool,
) -> Result<bool, String> {
    let limits = JsonLimits::default();
    let schema_doc = from_str(&read(schema)?, &limits)
        .map_err(|e| format!("{}: not JSON: {e}", schema.display()))?;
    let instance_doc = from_str(&read(instance)?, &limits)
        .map_err(|e| format!("{}: not JSON: {e}", instance.display()))?;
    let compiled =
        compile(&schema_doc, any_root).map_err(|e| format!("{}: {e}", schema.display()))?;
    match compiled.validate(&instance_doc) {
        Ok(()) => {
            println!("valid");
            Ok(true)
        }
        Err(e) => {
            match e.diagnostic() {
                Some(d) => println!(
                    "invalid: `{}` at schema \"{}\", instance \"{}\"",
                    d.keyword(),
                    d.schema_location(),
                    d.instance_pointer()
                ),
                None => println!("invalid: {e}"),
            }
            Ok(false)
        }
    }
}

fn batch(any_root: bool) -> Result<bool, String> {
    let limits = JsonLimits::default();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| e.to_string())?;
        if line.trim().is_empty() {
            continue;
        }
        let answer = match from_str(&line, &limits) {
            Err(e) => format!(r#"{{"error":"not JSON: {}"}}"#, e.kind().description()),
            Ok(pair) => match (pair.get("schema"), pair.get("instance")) {
                (Some(schema), Some(instance)) => match compile(schema, any_root) {
                    Ok(compiled) => {
                        format!(r#"{{"valid":{}}}"#, compiled.validate(instance).is_ok())
                    }
                    Err(e) => format!(r#"{{"compile_error":"{:?}"}}"#, e.kind()),
                },
                _ => r#"{"error":"expected {\"schema\":…,\"instance\":…}"}"#.to_owned(),
            },
        };
        writeln!(out, "{answer}").map_err(|e| e.to_string())?;
    }
    Ok(true)
}

async fn run(cli: Cli) -> Result<bool, Box<dyn std::error::Error>> {
    Ok(match cli.command {
        Command::Schema(SchemaCommand::Check {
            file,
            json,
            any_root,
        }) => check(&file, json, any_root)?,
        Command::Schema(SchemaCommand::Validate {
            schema,
            instance,
            any_root,
        }) => validate(&schema, &instance, any_root)?,
        Command::Schema(SchemaCommand::Batch { any_root }) => batch(any_root)?,
        Command::List { url, revision } => {
            let target = client::parse_url(&url)?;
            client::print_tools(
                &client::request(&target, &revision, "tools/list", "", None, &[]).await?,
            );
            true
        }
        Command::Call {
            url,
            tool,
            arguments,
            revision,
        } => {
            let target = client::parse_url(&url)?;
            let arguments = client::arguments(&arguments)?;
            let mirrored = if revision == "2026-07-28" {
                client::mirrored_headers(&target, &tool, &arguments).await?
            } else {
                Vec::new()
            };
            let name =
                tollgate_json::to_string(&JsonValue::from(tool.as_str()), &Default::default())?;
            let args = tollgate_json::to_string(&arguments.into(), &Default::default())?;
            let params = format!(r#""name":{name},"arguments":{args}"#);
            let result = client::request(
                &target,
                &revision,
                "tools/call",
                &params,
                Some(&tool),
                &mirrored,
            )
            .await?;
            client::print_call(&result);
            true
        }
        Command::ServeDemo { addr, stdio } => {
            let tasks = tollgate::task::SqliteTaskStore::open(demo::task_database()).await?;
            // `catalog.reserve`'s state is single use, its used states beside the tasks.
            let uses = tollgate::endpoint::SqliteReplayStore::open(demo::task_database()).await?;
            let endpoint = demo::endpoint(tasks, Some(std::sync::Arc::new(uses)))?;
            if stdio {
                tollgate::transport::StdioServer::new(endpoint)
                    .serve_stdio()
                    .await?;
            } else {
                let server =
                    tollgate::Server::bind(addr, tollgate::McpService::new(endpoint)).await?;
                eprintln!("Tollgate catalog demo: http://{}/mcp", server.local_addr()?);
                server
                    .serve_with_shutdown(async {
                        let _ = tokio::signal::ctrl_c().await;
                    })
                    .await?;
            }
            true
        }
    })
}

#[tokio::main]
async fn main() -> ExitCode {
    match run(Cli::parse()).await {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("tollgate: {e}");
            ExitCode::from(2)
        }
    }
}
