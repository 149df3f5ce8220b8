//! The demo's options: flags first, then the environment, then defaults. Where to listen
//! (`--addr HOST:PORT` or `TOLLGATE_ADDR`, default 127.0.0.1:8080; `--stdio`), the extra `Host`
//! values and browser origins the service accepts (`--allowed-host` / `TOLLGATE_ALLOWED_HOSTS`,
//! `--allowed-origin` / `TOLLGATE_ALLOWED_ORIGINS`, comma-separated in the environment), and
//! logging: `RUST_LOG` (default `info`) filters tracing's events, written to standard error in a
//! human format, or as JSON lines with `--log-json` or `TOLLGATE_LOG_FORMAT=json`.

use std::net::SocketAddr;

/// Where to serve: HTTP on an address, or stdio.
pub(crate) enum Listen {
    Http(SocketAddr),
    Stdio,
}

/// What the command line and the environment asked for.
pub(crate) struct Options {
    pub(crate) listen: Listen,
    pub(crate) allowed_hosts: Vec<String>,
    pub(crate) allowed_origins: Vec<String>,
    pub(crate) json_logs: bool,
}

const USAGE: &str = "usage: catalog [--addr HOST:PORT | --stdio] [--allowed-host HOST]... \
                     [--allowed-origin ORIGIN]... [--log-json]";

/// A comma-separated list from the environment (empty when unset).
fn list(var: &str) -> Vec<String> {
    std::env::var(var)
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Reads the flags, then the environment for what the flags left unset.
pub(crate) fn from_args_and_env() -> Result<Options, Box<dyn std::error::Error>> {
    let mut listen = None;
    let (mut hosts, mut origins, mut json_logs) = (Vec::new(), Vec::new(), false);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => listen = Some(Listen::Http(args.next().ok_or(USAGE)?.parse()?)),
            "--stdio" => listen = Some(Listen::Stdio),
            "--allowed-host" => hosts.push(args.next().ok_or(USAGE)?),
            "--allowed-origin" => origins.push(args.next().ok_or(USAGE)?),
            "--log-json" => json_logs = true,
            _ => return Err(USAGE.into()),
        }
    }
    let listen = match listen {
        Some(listen) => listen,
        None => match std::env::var("TOLLGATE_ADDR") {
            Ok(addr) => Listen::Http(addr.parse()?),
            Err(_) => Listen::Http(tollgate::transport::DEFAULT_ADDR),
        },
    };
    if hosts.is_empty() {
        hosts = list("TOLLGATE_ALLOWED_HOSTS");
    }
    if origins.is_empty() {
        origins = list("TOLLGATE_ALLOWED_ORIGINS");
    }
    json_logs |= std::env::var("TOLLGATE_LOG_FORMAT").is_ok_and(|f| f == "json");
    Ok(Options {
        listen,
        allowed_hosts: hosts,
        allowed_origins: origins,
        json_logs,
    })
}

/// Installs the log subscriber: `RUST_LOG` (default `info`), standard error, human or JSON.
pub(crate) fn init_logs(json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if json {
        logs.json().init();
    } else {
        logs.init();
    }
}
