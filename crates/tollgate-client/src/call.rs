//! Calling tools: JSON and serde arguments, the `x-mcp-header` mirrors, a call's own progress
//! callback and handler ([`CallOptions`], which prompts and reads take too), and the
//! output-schema check of the result. It owns what a
//! `tools/call` carries and checks; it must not know transports.

use std::sync::Arc;

use tollgate_json::{BindLimits, JsonObject, JsonValue};

use crate::client::Client;
use crate::error::{Error, ErrorKind};
use crate::handler::Handler;
use crate::mirror;
use crate::notify::{Progress, ProgressFn};
use crate::older;
use crate::output::check_output;

/// Options of one call ([`Client::call_tool_with`]), prompt ([`Client::get_prompt_with`]) or
/// read ([`Client::read_resource_with`]).
///
/// # Examples
///
/// ```no_run
/// use tollgate_client::{CallOptions, Client, json::JsonObject};
///
/// # async fn run(client: &Client) -> Result<(), tollgate_client::Error> {
/// let options = CallOptions::new().on_progress(|p| println!("{} of {:?}", p.progress(), p.total()));
/// let result = client.call_tool_with("catalog.inventory", JsonObject::new(), options).await?;
/// # let _ = result;
/// # Ok(()) }
/// ```
#[derive(Default, Clone)]
pub struct CallOptions {
    progress: Option<ProgressFn>,
    log_level: Option<&'static str>,
    return_input_required: bool,
    retry: Option<(JsonObject, Option<JsonValue>)>,
    capabilities: Option<JsonObject>,
    handler: Option<Arc<dyn Handler>>,
}

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions")
            .field("progress", &self.progress.is_some())
            .field("log_level", &self.log_level)
            .field("return_input_required", &self.return_input_required)
            .field("retry", &self.retry.is_some())
            .field("capabilities", &self.capabilities.is_some())
            .field("handler", &self.handler.is_some())
            .finish()
    }
}

impl CallOptions {
    /// No options: a plain call.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks for progress: the call carries a fresh `progressToken`, and each
    /// `notifications/progress` with that token goes to `callback` (not to the handler) while
    /// the call lasts. The callback runs on the transport's reading task: keep it short.
    pub fn on_progress(mut self, callback: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(callback));
        self
    }

    /// Hands an `input_required` result (2026-07-28) back as the call's result instead of
    /// answering it with the handler, for a caller that relays it to its own client (a
    /// gateway); answer it with [`retry`](Self::retry).
    #[must_use]
    pub fn return_input_required(mut self) -> Self {
        self.return_input_required = true;
        self
    }

    /// Makes the call the retry of an `input_required` result: `responses` (keyed as the
    /// result's `inputRequests`) and the result's `requestState`, sent as given.
    #[must_use]
    pub fn retry(mut self, responses: JsonObject, state: Option<JsonValue>) -> Self {
        self.retry = Some((responses, state));
        self
    }

    /// Declares `capabilities` for this call instead of the client's own: on 2026-07-28, where
    /// a request carries its client's capabilities in `_meta`; ignored on 2025, where they are
    /// the session's. For a caller that passes its own client's on (a gateway).
    #[must_use]
    pub fn client_capabilities(mut self, capabilities: JsonObject) -> Self {
        self.capabilities = Some(capabilities);
        self
    }

    /// Gives the call its own handler: what the server sends that belongs to this call goes to
    /// `handler` instead of the client's ([`ClientBuilder::handler`](crate::ClientBuilder::handler)),
    /// so an application serving many callers (a gateway) can answer each call's requests for
    /// the caller who made it. What belongs to the call:
    ///
    /// - over Streamable HTTP on the 2025 revisions, the server's requests (`elicitation/create`,
    ///   `sampling/createMessage`, `roots/list`, `ping`) and log messages
    ///   (`notifications/message`) that arrive on the call's own response stream;
    /// - on 2026-07-28, the input requests of the call's `input_required` results (unless
    ///   [`return_input_required`](Self::return_input_required) hands them back).
    ///
    /// Everything else still goes to the client's handler: the call's progress (to
    /// [`on_progress`](Self::on_progress) when given), list changes and resource updates (which
    /// concern the session, not the call), and whatever arrives on a 2025 session's `GET`
    /// stream. Over stdio (and the 2024-11-05 HTTP+SSE transport) nothing on the wire names the
    /// call a server request or log message belongs to, so there the client's handler gets them
    /// all and this one only answers `input_required`.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use tollgate_client::handler::{Handler, HandlerFuture, Refusal};
    /// use tollgate_client::json::JsonObject;
    /// use tollgate_client::{CallOptions, Client};
    ///
    /// /// Answers for one caller (here: declines every elicitation).
    /// struct ForCaller;
    ///
    /// impl Handler for ForCaller {
    ///     fn request<'a>(&'a self, method: &'a str, _: Option<&'a JsonObject>) -> HandlerFuture<'a> {
    ///         Box::pin(async move {
    ///             match method {
    ///                 "elicitation/create" => {
    ///                     Ok(JsonObject::builder().insert("action", "decline").build().into())
    ///                 }
    ///                 _ => Err(Refusal::METHOD_NOT_FOUND),
    ///             }
    ///         })
    ///     }
    /// }
    ///
    /// # async fn run(client: &Client) -> Result<(), tollgate_client::Error> {
    /// let options = CallOptions::new().handler(ForCaller);
    /// let result = client.call_tool_with("ask", JsonObject::new(), options).await?;
    /// # let _ = result;
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn handler(mut self, handler: impl Handler) -> Self {
        self.handler = Some(Arc::new(handler));
        self
    }

    /// Asks for the call's log messages at `level` and above (`debug`, `info`, `notice`,
    /// `warning`, `error`, `critical`, `alert`, `emergency`; default: none asked). On
    /// 2026-07-28 log delivery is a per-request opt-in (`_meta`
    /// `io.modelcontextprotocol/logLevel`): without it the server sends none. On 2025 the level
    /// is the session's (`logging/setLevel` through [`Client::request`]) and this is not sent.
    /// The messages go to the handler as `notifications/message`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Argument`] for a level the protocol does not name.
    pub fn log_level(mut self, level: &str) -> Result<Self, Error> {
        const LEVELS: [&str; 8] = [
            "debug",
            "info",
            "notice",
            "warning",
            "error",
            "critical",
            "alert",
            "emergency",
        ];
        let level = LEVELS
            .into_iter()
            .find(|l| *l == level)
            .ok_or(Error::new(ErrorKind::Argument, "not a log level"))?;
        self.log_level = Some(level);
        Ok(self)
    }
}

impl Client {
    /// Calls a tool with JSON arguments and returns its result. On 2026-07-28 the tool's
    /// `x-mcp-header` values are mirrored (the tool list is read once if the tool is not yet
    /// known) and `input_required` results are answered by the handler. A `structuredContent`
    /// is checked against the tool's `outputSchema` (see
    /// [`ClientBuilder::unchecked_output_schemas`](crate::ClientBuilder::unchecked_output_schemas)).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Schema`] for a structured result outside the output schema, or a schema
    /// outside Profile 1; [`ErrorKind::TimedOut`] past the request timeout; the transport's
    /// errors or the server's. A tool's own failure is a result with `isError: true`, not an
    /// error.
    pub async fn call_tool(&self, name: &str, arguments: JsonObject) -> Result<JsonValue, Error> {
        self.call_tool_with(name, arguments, CallOptions::new())
            .await
    }

    /// [`Client::call_tool`] with options: a progress callback ([`CallOptions::on_progress`]).
    ///
    /// # Errors
    ///
    /// As [`Client::call_tool`].
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: JsonObject,
        options: CallOptions,
    ) -> Result<JsonValue, Error> {
        let mut tool = self.known_tool(name);
        let stateless = self.revision().is_stateless();
        if tool.is_none() && (stateless || self.parts.check_output) {
            let _ = self.list_tools().await;
            tool = self.known_tool(name);
        }
        let headers = match (&tool, stateless) {
            (Some(tool), true) => match tool.definition().get("inputSchema") {
                Some(schema) => mirror::param_headers(schema, tool.input(), &arguments)?,
                None => Vec::new(),
            },
            _ => Vec::new(),
        };
        let params = JsonObject::builder()
            .insert("name", name)
            .insert("arguments", arguments)
            .build();
        let result = self
            .send_with("tools/call", params, headers, options)
            .await?;
        let result = older::project_result(self.revision(), result);
        if self.parts.check_output {
            check_output(tool.as_deref(), &result)?;
        }
        Ok(result)
    }

    /// [`Client::get_prompt`] with options, as [`Client::call_tool_with`] takes them: progress,
    /// the log level, the call's own handler (a 2025 server's requests on the prompt's own
    /// stream, a 2026-07-28 server's `input_required` answered through it, within
    /// [`ClientLimits::max_input_rounds`](crate::ClientLimits::max_input_rounds) rounds), declared capabilities, an
    /// `input_required` result handed back, a retry.
    ///
    /// # Errors
    ///
    /// As [`Client::get_prompt`].
    pub async fn get_prompt_with(
        &self,
        name: &str,
        arguments: JsonObject,
        options: CallOptions,
    ) -> Result<JsonValue, Error> {
        let params = JsonObject::builder()
            .insert("name", name)
            .insert("arguments", arguments)
            .build();
        self.send_with("prompts/get", params, Vec::new(), options)
            .await
    }

    /// [`Client::read_resource`] with options, as [`Client::get_prompt_with`] takes them.
    ///
    /// # Errors
    ///
    /// As [`Client::read_resource`].
    pub async fn read_resource_with(
        &self,
        uri: &str,
        options: CallOptions,
    ) -> Result<JsonValue, Error> {
        let params = JsonObject::builder().insert("uri", uri).build();
        self.send_with("resources/read", params, Vec::new(), options)
            .await
    }

    /// One request of a tool call, a prompt or a read with its [`CallOptions`]: the progress
    /// token, log level and capabilities in `_meta` (the last two on 2026-07-28 only), a retry's
    /// members, and its `input_required` results handed back or answered by its handler.
    async fn send_with(
        &self,
        method: &str,
        params: JsonObject,
        headers: Vec<(String, String)>,
        options: CallOptions,
    ) -> Result<JsonValue, Error> {
        let stateless = self.revision().is_stateless();
        // The token is withdrawn when this request ends (or its future is dropped).
        let token = options.progress.map(|f| self.parts.router.progress(f));
        let mut meta = JsonObject::builder();
        if let Some(token) = &token {
            meta.push("progressToken", token.as_str());
        }
        if let Some(level) = options.log_level.filter(|_| stateless) {
            meta.push("io.modelcontextprotocol/logLevel", level);
        }
        if let Some(capabilities) = options.capabilities.filter(|_| stateless) {
            meta.push("io.modelcontextprotocol/clientCapabilities", capabilities);
        }
        let meta = meta.build();
        let mut params = params.to_builder();
        if !meta.is_empty() {
            params.push("_meta", meta);
        }
        if let Some((responses, state)) = options.retry {
            params.push("inputResponses", responses);
            if let Some(state) = state {
                params.push("requestState", state);
            }
        }
        let call = options.handler;
        let result = if options.return_input_required {
            self.send_for(method, Some(params.build()), headers, call)
                .await
        } else {
            self.send_answering(method, params.build(), headers, call)
                .await
        };
        drop(token);
        result
    }

    /// Calls a tool with serde arguments and binds its `structuredContent` to `R` (under the
    /// JSON crate's default binding limits). Before 2025-06-18, which has no structured
    /// results, the JSON text of the result's only text block is bound instead.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Argument`] when the arguments are not an object; [`ErrorKind::Rpc`]-free
    /// tool errors (`isError: true`) and a missing or unbindable `structuredContent` are
    /// [`ErrorKind::Protocol`]; otherwise as [`Client::call_tool`].
    pub async fn call_tool_as<A, R>(&self, name: &str, arguments: &A) -> Result<R, Error>
    where
        A: serde::Serialize + ?Sized,
        R: serde::de::DeserializeOwned,
    {
        let JsonValue::Object(arguments) = tollgate_json::to_value(arguments).map_err(|_| {
            Error::new(ErrorKind::Argument, "the arguments could not be serialised")
        })?
        else {
            return Err(Error::new(
                ErrorKind::Argument,
                "the arguments are not an object",
            ));
        };
        let result = self.call_tool(name, arguments).await?;
        if result.get("isError") == Some(&JsonValue::Bool(true)) {
            return Err(Error::new(
                ErrorKind::Protocol,
                "the tool answered an error",
            ));
        }
        // Before 2025-06-18 there is no structured result: its only text block is read as JSON.
        let parsed;
        let structured = if self.revision().carries_structure() {
            result.get("structuredContent")
        } else {
            let text = older::only_text(&result).unwrap_or_default();
            parsed = tollgate_json::from_str(text, self.limits().json()).ok();
            parsed.as_ref()
        };
        let structured = structured.ok_or(Error::new(
            ErrorKind::Protocol,
            "the result has no structuredContent",
        ))?;
        tollgate_json::from_value(structured, &BindLimits::default())
            .map_err(|_| Error::new(ErrorKind::Protocol, "structuredContent does not bind"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_levels_are_the_protocol_s_eight() {
        assert!(CallOptions::new().log_level("debug").is_ok());
        assert!(CallOptions::new().log_level("emergency").is_ok());
        let wrong = CallOptions::new().log_level("verbose");
        assert_eq!(wrong.map(|_| ()).unwrap_err().kind(), ErrorKind::Argument);
        assert_eq!(
            format!("{:?}", CallOptions::new().log_level("info").map_err(|_| ())),
            r#"Ok(CallOptions { progress: false, log_level: Some("info"), return_input_required: false, retry: false, capabilities: false, handler: false })"#
        );
    }
}
