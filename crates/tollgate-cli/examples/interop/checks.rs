//! The client interop checks (`scripts/interop`, and the in-process run in `tests/interop.rs`):
//! what tollgate-client does against each server it is tried with, as one profile of data per
//! server, and the one run that checks a profile. It owns the profiles and the checks; it must
//! not know how the server was reached (HTTP, stdio or in-process).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tollgate_client::handler::Handler;
use tollgate_client::json::{JsonLimits, JsonObject, JsonValue, from_str};
use tollgate_client::{CallOptions, Client, ClientBuilder, Revision};

/// A failed check: what was expected, and what came instead.
pub(crate) type Failure = String;

/// How a server's log notifications are caused.
#[derive(Clone, Copy)]
pub(crate) enum Log {
    /// The server sends none (or not where the client can see it).
    Never,
    /// The progress call also logs.
    WithProgress,
    /// A tool switches logging on, and the same tool off again once one arrived.
    Toggle(&'static str),
}

/// What one server offers, and what the client checks of it.
#[derive(Clone, Copy)]
pub(crate) struct Profile {
    /// Tools that must be listed.
    pub(crate) tools: &'static [&'static str],
    /// A tool, its arguments (JSON) and a text its result holds (as JSON).
    pub(crate) call: (&'static str, &'static str, &'static str),
    /// A listed resource's URI prefix and a text its contents hold.
    pub(crate) resource: (&'static str, &'static str),
    /// A prompt, its arguments (JSON) and a text its messages hold.
    pub(crate) prompt: (&'static str, &'static str, &'static str),
    /// A completion: the reference (JSON), the argument, the typed value, a value offered.
    pub(crate) completion: (&'static str, &'static str, &'static str, &'static str),
    /// A tool reporting progress, its arguments (JSON), the fewest notifications expected.
    pub(crate) progress: (&'static str, &'static str, usize),
    /// How log notifications are caused.
    pub(crate) log: Log,
    /// A tool that changes the tool list, with the arguments that change it and those that
    /// change it back: a listen for `toolsListChanged` must hear it.
    pub(crate) list_change: Option<(&'static str, &'static str, &'static str)>,
}

/// The official TypeScript SDK's reference server, `@modelcontextprotocol/server-everything`.
pub(crate) const EVERYTHING: Profile = Profile {
    tools: &["echo", "get-sum", "trigger-long-running-operation"],
    call: ("get-sum", r#"{"a":2,"b":3}"#, "The sum of 2 and 3 is 5."),
    resource: ("demo://resource/static/document/", ""),
    prompt: (
        "args-prompt",
        r#"{"city":"Lyon"}"#,
        "What's weather in Lyon?",
    ),
    completion: (
        r#"{"type":"ref/prompt","name":"completable-prompt"}"#,
        "department",
        "En",
        "Engineering",
    ),
    progress: (
        "trigger-long-running-operation",
        r#"{"duration":0.3,"steps":3}"#,
        3,
    ),
    log: Log::Toggle("toggle-simulated-logging"),
    list_change: None,
};

/// The Python SDK server of `scripts/interop-server.py`.
pub(crate) const PYTHON: Profile = Profile {
    tools: &["add", "count"],
    call: ("add", r#"{"a":2,"b":3}"#, r#""result":5"#),
    resource: ("interop://greeting", "hello from Python"),
    prompt: ("review", r#"{"language":"rust"}"#, "review this rust code"),
    completion: (
        r#"{"type":"ref/prompt","name":"review"}"#,
        "language",
        "ru",
        "rust",
    ),
    progress: ("count", r#"{"steps":3}"#, 3),
    log: Log::WithProgress,
    list_change: None,
};

/// The same server on the older Python SDK (`scripts/interop-server-older.py`, 2025-03-26 and
/// 2024-11-05): no structured results, so the sum is read in the text block.
pub(crate) const PYTHON_OLDER: Profile = Profile {
    call: ("add", r#"{"a":2,"b":3}"#, r#""text":"5""#),
    ..PYTHON
};

/// The same server on the older TypeScript SDK (`scripts/interop-server-older.mjs`,
/// 2025-03-26).
pub(crate) const TYPESCRIPT_OLDER: Profile = Profile {
    resource: ("interop://greeting", "hello from TypeScript"),
    ..PYTHON_OLDER
};

/// The catalog demo (`crates/tollgate-cli/examples/catalog`).
pub(crate) const CATALOG: Profile = Profile {
    tools: &["catalog.search", "catalog.get", "catalog.inventory"],
    // The SKU, in `structuredContent` or (before 2025-06-18) in the text block.
    call: ("catalog.search", r#"{"query":"mug"}"#, "MUG-001"),
    resource: ("catalog://price-list", "MUG-001"),
    prompt: (
        "catalog.pairing",
        r#"{"occasion":"evening"}"#,
        "for evening",
    ),
    completion: (
        r#"{"type":"ref/prompt","name":"catalog.pairing"}"#,
        "occasion",
        "aft",
        "afternoon",
    ),
    progress: ("catalog.inventory", "{}", 4),
    log: Log::Never,
    list_change: Some((
        "catalog.seasonal",
        r#"{"enabled":true}"#,
        r#"{"enabled":false}"#,
    )),
};

/// The profile named on the command line.
pub(crate) fn profile(name: &str) -> Option<Profile> {
    match name {
        "everything" => Some(EVERYTHING),
        "python" => Some(PYTHON),
        "python-older" => Some(PYTHON_OLDER),
        "typescript-older" => Some(TYPESCRIPT_OLDER),
        "catalog" => Some(CATALOG),
        _ => None,
    }
}

/// Records the notifications the server sends.
#[derive(Clone, Default)]
pub(crate) struct Recorder {
    seen: Arc<Mutex<Vec<(String, JsonObject)>>>,
}

impl Handler for Recorder {
    fn notification(&self, method: &str, params: Option<&JsonObject>) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.push((method.to_owned(), params.cloned().unwrap_or_default()));
        }
    }
}

impl Recorder {
    fn count(&self, keep: impl Fn(&str, &JsonObject) -> bool) -> usize {
        self.seen
            .lock()
            .map(|seen| seen.iter().filter(|(m, p)| keep(m, p)).count())
            .unwrap_or(0)
    }

    /// Waits (a bounded while) until at least `n` notifications pass `keep`.
    async fn wait_for(&self, n: usize, keep: impl Fn(&str, &JsonObject) -> bool) -> bool {
        for _ in 0..200 {
            if self.count(&keep) >= n {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }
}

/// A client builder offering `offer` (every revision when `None`), recording notifications.
pub(crate) fn builder(offer: Option<Revision>, recorder: &Recorder) -> ClientBuilder {
    let builder = Client::builder().handler(recorder.clone());
    match offer {
        Some(revision) => builder.revisions([revision]),
        None => builder,
    }
}

fn json(text: &str) -> Result<JsonObject, Failure> {
    match from_str(text, &JsonLimits::default()) {
        Ok(JsonValue::Object(object)) => Ok(object),
        _ => Err(format!("not a JSON object: {text}")),
    }
}

fn text(value: &JsonValue) -> String {
    tollgate_json::to_string(value, &Default::default()).unwrap_or_default()
}

fn names(items: &[JsonValue], key: &str) -> Vec<String> {
    items
        .iter()
        .filter_map(|i| i.get(key)?.as_str().map(str::to_owned))
        .collect()
}

fn holds(what: &str, value: &JsonValue, needle: &str) -> Result<(), Failure> {
    let written = text(value);
    if written.contains(needle) {
        Ok(())
    } else {
        Err(format!("{what}: expected {needle:?} in {written}"))
    }
}

fn failed(what: &str) -> impl Fn(tollgate_client::Error) -> Failure + '_ {
    move |e| format!("{what}: {e}")
}

/// Runs every check of `profile` on a connected client, then closes it; the lines it prints
/// say what passed.
pub(crate) async fn run(
    client: &Client,
    recorder: &Recorder,
    profile: &Profile,
) -> Result<(), Failure> {
    let tools = names(
        &client.list_tools().await.map_err(failed("tools/list"))?,
        "name",
    );
    for tool in profile.tools {
        if !tools.iter().any(|t| t == tool) {
            return Err(format!("tools/list: {tool} missing from {tools:?}"));
        }
    }
    let (tool, arguments, expected) = profile.call;
    let result = client
        .call_tool(tool, json(arguments)?)
        .await
        .map_err(failed("tools/call"))?;
    holds("tools/call", &result, expected)?;
    if result.get("isError") == Some(&JsonValue::Bool(true)) {
        return Err(format!("tools/call: a tool error: {}", text(&result)));
    }
    read_resource(client, profile).await?;
    let (prompt, arguments, expected) = profile.prompt;
    let rendered = client
        .get_prompt(prompt, json(arguments)?)
        .await
        .map_err(failed("prompts/get"))?;
    holds("prompts/get", &rendered, expected)?;
    let (reference, argument, value, expected) = profile.completion;
    let completed = client
        .complete(json(reference)?, argument, value)
        .await
        .map_err(failed("completion/complete"))?;
    holds(
        "completion/complete",
        &completed,
        &format!("\"{expected}\""),
    )?;
    progress_and_log(client, recorder, profile).await?;
    if let Some(change) = profile.list_change {
        listen(client, change).await?;
    }
    let log = match profile.log {
        Log::Never => "",
        _ => " and log",
    };
    let listened = match profile.list_change {
        Some(_) => ", listened",
        None => "",
    };
    println!(
        "  {}: listed, called {tool}, read, prompted, completed, progress{log}{listened} ok",
        client.revision(),
    );
    client.close().await.map_err(failed("close"))
}

/// A listen for tool-list changes hears the change `tool` makes; the change is undone after.
async fn listen(
    client: &Client,
    (tool, change, undo): (&'static str, &'static str, &'static str),
) -> Result<(), Failure> {
    let filter = JsonObject::builder()
        .insert("toolsListChanged", true)
        .build();
    let mut listen = client.listen(filter).map_err(failed("listen"))?;
    let bounded = Duration::from_secs(10);
    if client.revision().is_stateless() {
        let first = tokio::time::timeout(bounded, listen.next()).await;
        match first {
            Ok(Some(Ok(n))) if n.method() == "notifications/subscriptions/acknowledged" => {}
            _ => return Err("listen: no acknowledgement".to_owned()),
        }
    }
    let changed = client
        .call_tool(tool, json(change)?)
        .await
        .map_err(failed("list change"))?;
    if changed.get("isError") == Some(&JsonValue::Bool(true)) {
        return Err(format!("list change: {}", text(&changed)));
    }
    // A generous bound so a lost notification fails rather than hangs (not a timing check).
    let heard = tokio::time::timeout(bounded, listen.next()).await;
    drop(listen);
    client
        .call_tool(tool, json(undo)?)
        .await
        .map_err(failed("list change undone"))?;
    match heard {
        Ok(Some(Ok(n))) if n.method() == "notifications/tools/list_changed" => Ok(()),
        Ok(Some(Ok(n))) => Err(format!("listen: {} instead of a list change", n.method())),
        Ok(Some(Err(e))) => Err(format!("listen: {e}")),
        _ => Err("listen: no notifications/tools/list_changed".to_owned()),
    }
}

async fn read_resource(client: &Client, profile: &Profile) -> Result<(), Failure> {
    let (prefix, expected) = profile.resource;
    let listed = names(
        &client
            .list_resources()
            .await
            .map_err(failed("resources/list"))?,
        "uri",
    );
    let uri = listed
        .iter()
        .find(|u| u.starts_with(prefix))
        .ok_or_else(|| format!("resources/list: nothing under {prefix} in {listed:?}"))?;
    let read = client
        .read_resource(uri)
        .await
        .map_err(failed("resources/read"))?;
    let contents = read
        .get("contents")
        .and_then(JsonValue::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| format!("resources/read: no contents in {}", text(&read)))?;
    if contents.get("uri").and_then(JsonValue::as_str) != Some(uri.as_str()) {
        return Err(format!("resources/read: another URI in {}", text(&read)));
    }
    let body = contents.get("text").or_else(|| contents.get("blob"));
    if body.and_then(JsonValue::as_str).is_none_or(str::is_empty) {
        return Err(format!("resources/read: empty contents in {}", text(&read)));
    }
    holds("resources/read", &read, expected)
}

async fn progress_and_log(
    client: &Client,
    recorder: &Recorder,
    profile: &Profile,
) -> Result<(), Failure> {
    let (tool, arguments, fewest) = profile.progress;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    // Logs asked for per request (the 2026-07-28 opt-in; a 2025 session sends them anyway).
    let options = CallOptions::new()
        .on_progress(move |p| {
            if let Ok(mut seen) = sink.lock() {
                seen.push(p.progress());
            }
        })
        .log_level("debug")
        .map_err(failed("log level"))?;
    let result = client
        .call_tool_with(tool, json(arguments)?, options)
        .await
        .map_err(failed("tools/call with progress"))?;
    if result.get("isError") == Some(&JsonValue::Bool(true)) {
        return Err(format!("tools/call with progress: {}", text(&result)));
    }
    let seen = seen.lock().map(|s| s.clone()).unwrap_or_default();
    if seen.len() < fewest || seen.windows(2).any(|w| w[0] >= w[1]) {
        return Err(format!(
            "progress: {seen:?}, not {fewest} or more increasing values"
        ));
    }
    // The handler saw none of the call's progress: it went to the call's callback.
    let stray = |method: &str, _: &JsonObject| method == "notifications/progress";
    if recorder.count(stray) > 0 {
        return Err("progress: notifications reached the handler".to_owned());
    }
    let logged = |method: &str, _: &JsonObject| method == "notifications/message";
    match profile.log {
        Log::Never => Ok(()),
        Log::WithProgress => match recorder.wait_for(1, logged).await {
            true => Ok(()),
            false => Err("log: no notifications/message".to_owned()),
        },
        Log::Toggle(switch) => {
            client
                .call_tool(switch, JsonObject::new())
                .await
                .map_err(failed("log switch"))?;
            let arrived = recorder.wait_for(1, logged).await;
            client
                .call_tool(switch, JsonObject::new())
                .await
                .map_err(failed("log switch"))?;
            match arrived {
                true => Ok(()),
                false => Err("log: no notifications/message".to_owned()),
            }
        }
    }
}
