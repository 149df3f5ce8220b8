//! tollgate-client against other servers (`scripts/interop`): lists tools, calls one with
//! arguments, reads a resource, gets a prompt, completes an argument, and receives progress and
//! log notifications, over HTTP or a stdio child, on one revision or on the one negotiation picks.
//!
//! Usage: `interop PROFILE REVISION (URL | sse:URL | -- COMMAND ARGS...)` (`sse:` for the
//! 2024-11-05 HTTP+SSE transport), where PROFILE is `everything`,
//! `python`, `python-older`, `typescript-older` or `catalog` (`checks.rs`) and REVISION is a revision to offer alone, or
//! `auto:REVISION` to offer every revision and expect negotiation to pick that one.

mod checks;

use std::process::ExitCode;

use tollgate_client::Revision;

const USAGE: &str = "usage: interop everything|python|python-older|typescript-older|catalog REVISION|auto:REVISION (URL | sse:URL | -- COMMAND ARGS...)";

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("interop: {failure}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Vec<String>) -> Result<(), String> {
    let [profile, revision, target, rest @ ..] = args.as_slice() else {
        return Err(USAGE.to_owned());
    };
    let profile = checks::profile(profile).ok_or(USAGE)?;
    let (offer, expected) = match revision.strip_prefix("auto:") {
        Some(expected) => (None, expected),
        None => (Some(revision.as_str()), revision.as_str()),
    };
    let expected = Revision::from_wire(expected).ok_or(USAGE)?;
    let offer = offer.map(|_| expected);
    let recorder = checks::Recorder::default();
    let builder = checks::builder(offer, &recorder);
    let client = if target == "--" {
        let (program, arguments) = rest.split_first().ok_or(USAGE)?;
        let mut command = tokio::process::Command::new(program);
        command.args(arguments);
        builder
            .stderr(|_| {})
            .connect_stdio(command)
            .await
            .map_err(|e| format!("connect over stdio: {e}"))?
    } else if let Some(url) = target.strip_prefix("sse:") {
        builder
            .connect_legacy_sse(url)
            .await
            .map_err(|e| format!("connect over HTTP+SSE to {url}: {e}"))?
    } else {
        builder
            .connect_http(target)
            .await
            .map_err(|e| format!("connect to {target}: {e}"))?
    };
    if client.revision() != expected {
        return Err(format!(
            "negotiated {} where {expected} was expected",
            client.revision()
        ));
    }
    checks::run(&client, &recorder, &profile).await
}
