//! The commands that talk to an MCP server (`list`, `call`, `read`, `prompt`, `listen`,
//! `tasks`), over HTTP or a stdio child, on tollgate-client. It owns connecting from the command
//! line and printing results; the protocol is the client's.

use std::error::Error;

use tollgate_client::handler::Handler;
use tollgate_client::json::{JsonArray, JsonLimits, JsonObject, JsonValue, from_str};
use tollgate_client::{Client, Revision};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// How to reach the server: flags shared by every remote command.
#[derive(clap::Args, Debug)]
pub(crate) struct Connect {
    /// The revision to speak (default: negotiated, newest first).
    #[arg(long)]
    revision: Option<String>,
    /// An extra HTTP header, `Name: value` (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// A bearer token sent on every HTTP request (default: the tokens `tollgate login` kept
    /// for the URL, if any).
    #[arg(long)]
    token: Option<String>,
    /// Start the server as a child and speak stdio to it: the command and its arguments follow
    /// `--`, and the server URL is left out.
    #[arg(long)]
    stdio: bool,
    /// The stdio server command (after `--`).
    #[arg(last = true, value_name = "CMD")]
    command: Vec<String>,
}

/// Prints notifications as they come (progress, log messages, list changes, updates).
struct Print;

impl Handler for Print {
    fn notification(&self, method: &str, params: Option<&JsonObject>) {
        let params = params
            .map(|p| tollgate_json::to_string(&p.clone().into(), &Default::default()))
            .and_then(std::result::Result::ok)
            .unwrap_or_default();
        eprintln!("{method} {params}");
    }
}

impl Connect {
    /// Splits the positional words: with `--stdio` there is no URL in front.
    pub(crate) fn target<'a>(
        &self,
        words: &'a [String],
    ) -> Result<(Option<&'a str>, &'a [String])> {
        if self.stdio {
            return Ok((None, words));
        }
        let (url, rest) = words.split_first().ok_or("the server URL is missing")?;
        Ok((Some(url.as_str()), rest))
    }

    pub(crate) async fn connect(&self, url: Option<&str>) -> Result<Client> {
        self.connect_printing(url, true).await
    }

    /// Connects; with `print`, notifications are printed to stderr as they come (`listen`
    /// prints its stream's own to stdout instead).
    pub(crate) async fn connect_printing(&self, url: Option<&str>, print: bool) -> Result<Client> {
        let mut builder = Client::builder().client_info(tollgate_client::ClientInfo::new(
            "tollgate-cli",
            env!("CARGO_PKG_VERSION"),
        ));
        if let Some(revision) = &self.revision {
            let revision = Revision::from_wire(revision).ok_or("unknown revision")?;
            builder = builder.revisions([revision]);
        }
        for header in &self.headers {
            let (name, value) = header.split_once(':').ok_or("a header is `Name: value`")?;
            builder = builder.header(name.trim(), value.trim())?;
        }
        if let Some(token) = &self.token {
            builder = builder.bearer_token(token)?;
        } else if url.is_some()
            && let Some(oauth) = crate::login::stored()
        {
            // Tokens from `tollgate login`, when there are some for this URL.
            builder = builder.authorizer(oauth);
        }
        if print {
            builder = builder.handler(Print);
        }
        match url {
            Some(url) => match builder.connect_http(url).await {
                Ok(client) => Ok(client),
                Err(e) if e.kind() == tollgate_client::ErrorKind::Auth => {
                    Err(format!("{e} (log in with `tollgate login URL`, or pass --token)").into())
                }
                Err(e) => Err(e.into()),
            },
            None => {
                let (program, args) = self
                    .command
                    .split_first()
                    .ok_or("--stdio needs the server command after `--`")?;
                let mut command = tokio::process::Command::new(program);
                command.args(args);
                Ok(builder.connect_stdio(command).await?)
            }
        }
    }
}

/// Prints each notification of a listen as a JSON line (`{"method":...,"params":...}`) until
/// the server ends it (then its result, when there is one) or Ctrl-C.
pub(crate) async fn listen(client: &Client, filter: JsonObject) -> Result<()> {
    let mut listen = client.listen(filter)?;
    loop {
        tokio::select! {
            item = listen.next() => match item {
                Some(notification) => {
                    let notification = notification?;
                    let line = JsonObject::builder()
                        .insert("method", notification.method())
                        .insert("params", notification.params().clone())
                        .build();
                    println!("{}", json(&line.into()));
                }
                None => break,
            },
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    if let Some(result) = listen.result() {
        println!("{}", json(result));
    }
    Ok(())
}

/// `ARGS-JSON` must be an object.
pub(crate) fn object(text: Option<&String>) -> Result<JsonObject> {
    let Some(text) = text else {
        return Ok(JsonObject::new());
    };
    match from_str(text, &JsonLimits::default())? {
        JsonValue::Object(o) => Ok(o),
        _ => Err("the arguments must be a JSON object".into()),
    }
}

/// One line per item: its name (or URI), then its title or description.
pub(crate) fn print_items(items: &[JsonValue]) {
    for item in items {
        let name = item
            .get("name")
            .or_else(|| item.get("uri"))
            .or_else(|| item.get("uriTemplate"))
            .and_then(JsonValue::as_str)
            .unwrap_or("?");
        let about = item
            .get("description")
            .or_else(|| item.get("title"))
            .and_then(JsonValue::as_str)
            .unwrap_or("");
        println!("{name}\t{about}");
    }
}

/// Text content as text, other blocks as their type, then the structured content.
pub(crate) fn print_call(result: &JsonValue) {
    if result.get("isError") == Some(&JsonValue::Bool(true)) {
        println!("(tool error)");
    }
    if result.get("resultType").and_then(JsonValue::as_str) == Some("task") {
        println!("(task) {}", json(result.get("task").unwrap_or(result)));
        return;
    }
    print_blocks(result.get("content"));
    if let Some(structured) = result.get("structuredContent") {
        println!("structuredContent: {}", json(structured));
    }
}

fn print_blocks(blocks: Option<&JsonValue>) {
    let empty = JsonArray::new();
    for block in blocks
        .and_then(JsonValue::as_array)
        .unwrap_or(&empty)
        .iter()
    {
        match (
            block.get("type").and_then(JsonValue::as_str),
            block.get("text").and_then(JsonValue::as_str),
        ) {
            (Some("text"), Some(text)) => println!("{text}"),
            (Some(kind), _) => println!("[{kind}]"),
            _ => {}
        }
    }
}

/// A prompt's messages: role, then the text.
pub(crate) fn print_prompt(result: &JsonValue) {
    let empty = JsonArray::new();
    let messages = result.get("messages").and_then(JsonValue::as_array);
    for message in messages.unwrap_or(&empty).iter() {
        let role = message
            .get("role")
            .and_then(JsonValue::as_str)
            .unwrap_or("?");
        let content = message.get("content");
        match content
            .and_then(|c| c.get("text"))
            .and_then(JsonValue::as_str)
        {
            Some(text) => println!("{role}: {text}"),
            None => println!("{role}: {}", content.map(json).unwrap_or_default()),
        }
    }
}

/// A resource's contents: text as text, blobs by size.
pub(crate) fn print_contents(result: &JsonValue) {
    let empty = JsonArray::new();
    let contents = result.get("contents").and_then(JsonValue::as_array);
    for item in contents.unwrap_or(&empty).iter() {
        match (
            item.get("text").and_then(JsonValue::as_str),
            item.get("blob").and_then(JsonValue::as_str),
        ) {
            (Some(text), _) => println!("{text}"),
            (None, Some(blob)) => println!("[blob, {} base64 characters]", blob.len()),
            _ => println!("{}", json(item)),
        }
    }
}

pub(crate) fn json(value: &JsonValue) -> String {
    tollgate_json::to_string(value, &Default::default()).unwrap_or_default()
}
