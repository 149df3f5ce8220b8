//! The `tollgate` command: check and validate Tool Schema Profile 1 schemas, talk to MCP servers
//! by hand (over HTTP or a stdio child, on tollgate-client), serve the catalog demo, and run the
//! gateway; what it serves exports to OpenTelemetry when `OTEL_EXPORTER_OTLP_ENDPOINT` is set
//! (`telemetry.rs`).
//!
//! A thin shell over the library crates; it owns argument parsing and output formats only.

mod gateway;
mod locate;
mod login;
mod remote;
mod telemetry;

use std::io::{BufRead, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tollgate_json::{JsonLimits, JsonObject, JsonValue, from_str};
use tollgate_schema::CompiledSchema;

#[path = "../examples/catalog/endpoint.rs"]
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
    /// List a server's tools (or prompts, resources, templates, skills): `list [URL]`.
    List {
        /// The server URL (left out with `--stdio`).
        #[arg(value_name = "URL")]
        words: Vec<String>,
        /// What to list.
        #[arg(long, value_enum, default_value = "tools")]
        kind: Kind,
        #[command(flatten)]
        connect: remote::Connect,
    },
    /// Call a tool: `call [URL] TOOL [ARGS-JSON]`.
    Call {
        /// [URL] TOOL [ARGS-JSON] (the arguments a JSON object, default `{}`).
        #[arg(value_name = "URL TOOL ARGS")]
        words: Vec<String>,
        #[command(flatten)]
        connect: remote::Connect,
    },
    /// Read a resource: `read [URL] URI`.
    Read {
        /// [URL] URI.
        #[arg(value_name = "URL URI")]
        words: Vec<String>,
        #[command(flatten)]
        connect: remote::Connect,
    },
    /// Get a prompt: `prompt [URL] NAME [ARGS-JSON]`.
    Prompt {
        /// [URL] NAME [ARGS-JSON].
        #[arg(value_name = "URL NAME ARGS")]
        words: Vec<String>,
        #[command(flatten)]
        connect: remote::Connect,
    },
    /// Print the server's notifications, one JSON line each, until it ends the listen or
    /// Ctrl-C: `listen [URL] [FILTER-JSON]` (2026-07-28: `subscriptions/listen` with the
    /// filter, such as `{"toolsListChanged":true}`; 2025: the session's stream).
    Listen {
        /// [URL] [FILTER-JSON].
        #[arg(value_name = "URL FILTER")]
        words: Vec<String>,
        #[command(flatten)]
        connect: remote::Connect,
    },
    /// A task: `tasks [URL] get|wait|cancel TASK-ID`.
    Tasks {
        /// [URL] get|wait|cancel TASK-ID.
        #[arg(value_name = "URL ACTION ID")]
        words: Vec<String>,
        #[command(flatten)]
        connect: remote::Connect,
    },
    /// Put Tollgate's checks in front of the MCP servers a TOML file names:
    /// `gateway --config gateway.toml [--addr HOST:PORT | --stdio | --check]`, or authorize
    /// one upstream's OAuth authorization-code grant once:
    /// `gateway login --config gateway.toml --upstream NAME [--open]`.
    Gateway(gateway::GatewayArgs),
    /// Log in to a protected server (OAuth, a browser and a loopback redirect) and keep its
    /// tokens in the user's config directory (`TOLLGATE_TOKEN_FILE` overrides) for the other
    /// commands: `login URL`.
    Login {
        /// The server URL.
        url: String,
        /// An extra HTTP header, `Name: value` (repeatable).
        #[arg(long = "header", value_name = "NAME: VALUE")]
        headers: Vec<String>,
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

/// What `list` lists.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Kind {
    Tools,
    Prompts,
    Resources,
    Templates,
    Skills,
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
        Command::List {
            words,
            kind,
            connect,
        } => {
            let (url, _) = connect.target(&words)?;
            let client = connect.connect(url).await?;
            let items = match kind {
                Kind::Tools => client.list_tools().await?,
                Kind::Prompts => client.list_prompts().await?,
                Kind::Resources => client.list_resources().await?,
                Kind::Templates => client.list_resource_templates().await?,
                Kind::Skills => client.list_skills().await?,
            };
            remote::print_items(&items);
            client.close().await?;
            true
        }
        Command::Call { words, connect } => {
            let (url, rest) = connect.target(&words)?;
            let tool = rest.first().ok_or("the tool name is missing")?;
            let arguments = remote::object(rest.get(1))?;
            let client = connect.connect(url).await?;
            let result = client.call_tool(tool, arguments).await;
            client.close().await?;
            remote::print_call(&result?);
            true
        }
        Command::Read { words, connect } => {
            let (url, rest) = connect.target(&words)?;
            let uri = rest.first().ok_or("the resource URI is missing")?;
            let client = connect.connect(url).await?;
            let result = client.read_resource(uri).await;
            client.close().await?;
            remote::print_contents(&result?);
            true
        }
        Command::Prompt { words, connect } => {
            let (url, rest) = connect.target(&words)?;
            let name = rest.first().ok_or("the prompt name is missing")?;
            let arguments = remote::object(rest.get(1))?;
            let client = connect.connect(url).await?;
            let result = client.get_prompt(name, arguments).await;
            client.close().await?;
            remote::print_prompt(&result?);
            true
        }
        Command::Login { url, headers } => {
            login::login(&url, &headers).await?;
            true
        }
        Command::Listen { words, connect } => {
            let (url, rest) = connect.target(&words)?;
            let filter = remote::object(rest.first())?;
            let client = connect.connect_printing(url, false).await?;
            let listened = remote::listen(&client, filter).await;
            client.close().await?;
            listened?;
            true
        }
        Command::Tasks { words, connect } => {
            let (url, rest) = connect.target(&words)?;
            let (Some(action), Some(id)) = (rest.first(), rest.get(1)) else {
                return Err("usage: tasks [URL] get|wait|cancel TASK-ID".into());
            };
            let client = connect.connect(url).await?;
            let result = match action.as_str() {
                "get" => client.get_task(id).await,
                "wait" => client.wait_task(id).await,
                "cancel" => client.cancel_task(id).await,
                _ => return Err("the task action is get, wait or cancel".into()),
            };
            client.close().await?;
            println!("{}", remote::json(&result?));
            true
        }
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
        Command::Gateway(args) => gateway::run(args).await?,
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    // OpenTelemetry for what the command serves (`gateway`, `serve-demo`; with
    // `OTEL_EXPORTER_OTLP_ENDPOINT`): the exporters send from threads of their own, so they are
    // installed before the runtime starts and flushed after it ends.
    let serves = matches!(cli.command, Command::Gateway(_) | Command::ServeDemo { .. });
    let telemetry = match serves.then(|| telemetry::from_env("tollgate")) {
        None => None,
        Some(Ok(telemetry)) => telemetry,
        Some(Err(e)) => {
            eprintln!("tollgate: OpenTelemetry: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("tollgate: {e}");
            return ExitCode::from(2);
        }
    };
    let outcome = runtime.block_on(run(cli));
    drop(runtime);
    if let Some(telemetry) = telemetry {
        telemetry.shutdown();
    }
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("tollgate: {e}");
            ExitCode::from(2)
        }
    }
}
