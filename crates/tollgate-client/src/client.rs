//! The typed client: connecting (version negotiation), and the methods applications call. It
//! owns what a request carries on each revision (`_meta` on 2026-07-28, the 2025 handshake),
//! the `input_required` loop and the output-schema check; it must not know how bytes move
//! (that is `transport/`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tollgate_json::{JsonObject, JsonValue};

use crate::auth::Authorizer;
use crate::cache::{Invalidating, ListCache, ttl_of};
use crate::error::{Error, ErrorKind};
use crate::handler::{Handler, NoHandler};
use crate::known::KnownTool;
use crate::limits::ClientLimits;
use crate::mirror;
use crate::notify::{Router, Routing};
use crate::revision::{ClientInfo, Revision, with_meta};
use crate::transport::{Outgoing, Transport};

/// The JSON-RPC code of the unsupported-version error (2026-07-28).
const UNSUPPORTED_VERSION: i64 = -32022;

/// Builds a [`Client`]: revisions offered, identity, capabilities, limits, the handler for what
/// the server sends, and for HTTP the extra headers and credentials.
pub struct ClientBuilder {
    pub(crate) revisions: Vec<Revision>,
    pub(crate) info: ClientInfo,
    pub(crate) capabilities: JsonObject,
    pub(crate) limits: ClientLimits,
    pub(crate) handler: Arc<dyn Handler>,
    pub(crate) headers: http::HeaderMap,
    pub(crate) authorizer: Option<Arc<dyn Authorizer>>,
    pub(crate) check_output: bool,
    pub(crate) stderr: Option<crate::transport::stdio::StderrSink>,
    pub(crate) sole_call: bool,
    cache: Arc<ListCache>,
    router: Arc<Router>,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        Self {
            revisions: Revision::ALL.to_vec(),
            info: ClientInfo::default(),
            capabilities: JsonObject::new(),
            limits: ClientLimits::default(),
            handler: Arc::new(NoHandler),
            headers: http::HeaderMap::new(),
            authorizer: None,
            check_output: true,
            stderr: None,
            sole_call: false,
            cache: Arc::default(),
            router: Arc::default(),
        }
    }
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("revisions", &self.revisions)
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// A builder offering every revision, newest first, with no handler and default limits.
    pub fn new() -> Self {
        Self::default()
    }

    /// The revisions to offer, in order of preference (default: all, newest first).
    pub fn revisions(mut self, revisions: impl IntoIterator<Item = Revision>) -> Self {
        self.revisions = revisions.into_iter().collect();
        self
    }

    /// The `clientInfo` sent (default: `tollgate-client` and this crate's version).
    pub fn client_info(mut self, info: ClientInfo) -> Self {
        self.info = info;
        self
    }

    /// The client capabilities declared (default: none). Declare what the handler answers,
    /// for example `{"elicitation":{}}`.
    pub fn capabilities(mut self, capabilities: JsonObject) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// The bounds on what the server sends (default: [`ClientLimits::default`]).
    pub fn limits(mut self, limits: ClientLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The handler for server notifications and requests (default: none answered).
    pub fn handler(mut self, handler: impl Handler) -> Self {
        self.handler = Arc::new(handler);
        self
    }

    /// An extra header on every HTTP request (default: none).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Argument`] when HTTP refuses the name or the value (the value is not
    /// repeated in the error).
    pub fn header(mut self, name: &str, value: &str) -> Result<Self, Error> {
        let name = http::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| Error::new(ErrorKind::Argument, "invalid header name"))?;
        let mut value = http::HeaderValue::from_str(value)
            .map_err(|_| Error::new(ErrorKind::Argument, "invalid header value"))?;
        value.set_sensitive(true);
        self.headers.append(name, value);
        Ok(self)
    }

    /// A static bearer token on every HTTP request (default: none).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Argument`] when the token is not a valid header value.
    pub fn bearer_token(self, token: &str) -> Result<Self, Error> {
        self.header("authorization", &format!("Bearer {token}"))
    }

    /// The authorizer that supplies HTTP credentials and answers challenges (default: none).
    pub fn authorizer(mut self, authorizer: Arc<dyn Authorizer>) -> Self {
        self.authorizer = Some(authorizer);
        self
    }

    /// Skip the structured-result check against a tool's `outputSchema` (default: checked,
    /// and a schema outside Profile 1 is an [`ErrorKind::Schema`] error).
    pub fn unchecked_output_schemas(mut self) -> Self {
        self.check_output = false;
        self
    }

    /// Connects over Streamable HTTP to `url` and negotiates a revision.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Connect`], [`ErrorKind::Negotiation`] or the server's answer.
    pub async fn connect_http(self, url: &str) -> Result<Client, Error> {
        let http = crate::transport::http::Http::new(
            crate::transport::http::reqwest_client()?,
            url.to_owned(),
            self.headers.clone(),
            self.authorizer.clone(),
            self.limits.clone(),
            self.transport_handler(),
        );
        Client::negotiate(self, Arc::new(http)).await
    }

    /// Connects over the HTTP+SSE transport of 2024-11-05 (a server that predates Streamable
    /// HTTP): a `GET` event stream at `url` whose `endpoint` event names where messages are
    /// POSTed (refused unless it is on `url`'s origin), and `initialize` at 2024-11-05 only. The
    /// builder's headers and bearer token go on every request; an [`Authorizer`] is not asked.
    /// [`Client::close`] ends the stream.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Status`] when `url` answers no event stream, [`ErrorKind::Protocol`]
    /// without a usable `endpoint` event, else as [`ClientBuilder::connect_http`].
    pub async fn connect_legacy_sse(mut self, url: &str) -> Result<Client, Error> {
        let lines = crate::transport::legacy_sse::connect(
            crate::transport::http::reqwest_client()?,
            url,
            self.headers.clone(),
            self.limits.clone(),
            self.transport_handler(),
            self.sole_call,
        )
        .await?;
        self.revisions = vec![Revision::V2024_11_05];
        Client::negotiate(self, Arc::new(lines)).await
    }

    /// Over stdio, the in-process pipe and 2024-11-05's HTTP+SSE, where nothing on the wire
    /// names the call a server's request belongs to: a request or log message the server sends while exactly one request
    /// of this client is outstanding goes to that request's own handler
    /// ([`CallOptions::handler`](crate::CallOptions::handler)) when it has one, as it would on
    /// that request's own response stream over Streamable HTTP. Off by default, since the
    /// wire cannot confirm it: the server may send a request that belongs to no call (a
    /// `roots/list` of its own) while one is outstanding, or one for a call just dropped when
    /// the next is already outstanding, and that call's handler would get it. With two or more
    /// outstanding (or none), such messages go to the client's handler either way.
    pub fn sole_call_requests(mut self, on: bool) -> Self {
        self.sole_call = on;
        self
    }

    /// Where a stdio server's stderr goes, line by line (each cut to 8 KiB; default: this
    /// process's own stderr).
    pub fn stderr(mut self, sink: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.stderr = Some(Arc::new(sink));
        self
    }

    /// Starts `command` as a stdio server (newline-delimited JSON-RPC on its stdin and
    /// stdout), probes with `server/discover` and falls back to `initialize`. The child is
    /// ended by [`Client::close`] (stdin closed, killed after 5 s) and killed if the client is
    /// dropped.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Connect`] when the process cannot start; as [`ClientBuilder::connect_http`].
    pub async fn connect_stdio(self, command: tokio::process::Command) -> Result<Client, Error> {
        let lines = crate::transport::stdio::spawn(
            command,
            self.limits.clone(),
            self.transport_handler(),
            self.stderr.clone(),
            self.sole_call,
        )?;
        Client::negotiate(self, Arc::new(lines)).await
    }

    /// Serves `endpoint` in this process over an in-memory pipe (its stdio server; no sockets)
    /// and connects to it: the pair to test tools with.
    ///
    /// # Errors
    ///
    /// As [`ClientBuilder::connect_http`].
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use tollgate::{Endpoint, Implementation, ProtocolVersion};
    /// use tollgate_client::Client;
    ///
    /// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28], Implementation::new("demo", "1"))
    ///     .build()?;
    /// let client = Client::builder().connect_in_process(endpoint).await?;
    /// assert!(client.list_tools().await?.is_empty());
    /// client.close().await?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "in-process")]
    pub async fn connect_in_process(self, endpoint: tollgate::Endpoint) -> Result<Client, Error> {
        let lines = crate::transport::memory::serve(
            endpoint,
            self.limits.clone(),
            self.transport_handler(),
            self.sole_call,
        );
        Client::negotiate(self, Arc::new(lines)).await
    }

    /// What the transport hands server messages to: the application's handler, behind the
    /// list cache's invalidation and the routing of progress and listens.
    fn transport_handler(&self) -> Arc<dyn Handler> {
        Arc::new(Invalidating {
            inner: Arc::new(Routing {
                router: Arc::clone(&self.router),
                inner: Arc::clone(&self.handler),
            }),
            cache: Arc::clone(&self.cache),
        })
    }

    pub(crate) fn into_parts(self) -> Parts {
        Parts {
            info: self.info,
            capabilities: self.capabilities,
            limits: self.limits,
            handler: self.handler,
            check_output: self.check_output,
            cache: self.cache,
            router: self.router,
        }
    }
}

pub(crate) struct Parts {
    info: ClientInfo,
    capabilities: JsonObject,
    limits: ClientLimits,
    pub(crate) handler: Arc<dyn Handler>,
    pub(crate) check_output: bool,
    cache: Arc<ListCache>,
    pub(crate) router: Arc<Router>,
}

/// One page of a list.
#[derive(Debug, Clone)]
pub struct Page {
    /// The items (tools, prompts, resources or templates) as the server sent them.
    pub items: Vec<JsonValue>,
    /// The cursor of the next page, when there is one.
    pub next_cursor: Option<String>,
    /// How long the server lets the page be cached (`ttlMs`, 2026-07-28), when it says.
    pub ttl_ms: Option<u64>,
}

/// A connected MCP client. Cheap to share behind an `Arc`; calls may run concurrently.
pub struct Client {
    transport: Arc<dyn Transport>,
    revision: Revision,
    server: JsonValue,
    pub(crate) parts: Parts,
    /// Tools seen in `tools/list` with their compiled schemas, by name.
    tools: Mutex<HashMap<String, Arc<KnownTool>>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("revision", &self.revision)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A builder.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::new()
    }

    /// Probes for a stateless revision with `server/discover`, retries with a revision from an
    /// unsupported-version answer's `data.supported`, and falls back to `initialize` when the
    /// server shows no sign of being modern.
    pub(crate) async fn negotiate(
        builder: ClientBuilder,
        transport: Arc<dyn Transport>,
    ) -> Result<Client, Error> {
        let offered = builder.revisions.clone();
        if !offered.iter().any(|r| transport.speaks(*r)) {
            return Err(Error::new(
                ErrorKind::Negotiation,
                "no revision offered is spoken on this transport",
            ));
        }
        let mut client = Client {
            transport,
            revision: *offered
                .first()
                .ok_or(Error::new(ErrorKind::Negotiation, "no revision offered"))?,
            server: JsonValue::Null,
            parts: builder.into_parts(),
            tools: Mutex::default(),
        };
        let mut legacy: Vec<Revision> = offered
            .iter()
            .copied()
            .filter(|r| !r.is_stateless() && client.transport.speaks(*r))
            .collect();
        let mut modern = offered.iter().copied().find(|r| r.is_stateless());
        // At most one retry after an unsupported-version answer.
        let mut retried = false;
        while let Some(revision) = modern.take() {
            client.revision = revision;
            client.transport.set_revision(Some(revision));
            match client.raw("server/discover", None).await {
                Ok(result) => {
                    client.server = result;
                    return Ok(client);
                }
                Err(e) if e.code() == Some(UNSUPPORTED_VERSION) => {
                    // The server is modern: retry with a revision it names, never fall back
                    // to guessing.
                    let supported = supported_revisions(e.data());
                    legacy.retain(|r| supported.contains(r));
                    if !retried {
                        modern = offered
                            .iter()
                            .copied()
                            .find(|r| r.is_stateless() && supported.contains(r));
                        retried = true;
                    }
                    if modern.is_none() && legacy.is_empty() {
                        return Err(Error::new(
                            ErrorKind::Negotiation,
                            "the server supports none offered",
                        ));
                    }
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::Connect | ErrorKind::Auth | ErrorKind::Closed
                    ) =>
                {
                    return Err(e);
                }
                // An older server: a 400, 404 or 405 with no modern error, or -32601.
                Err(_) => {}
            }
        }
        let first = *legacy.first().ok_or(Error::new(
            ErrorKind::Negotiation,
            "the server is not stateless",
        ))?;
        client.initialize(first, &legacy).await?;
        Ok(client)
    }

    async fn initialize(&mut self, revision: Revision, accepted: &[Revision]) -> Result<(), Error> {
        // A probe may have set 2026-07-28: `initialize` carries no revision header.
        self.transport.set_revision(None);
        let params = JsonObject::builder()
            .insert("protocolVersion", revision.as_str())
            .insert("capabilities", self.parts.capabilities.clone())
            .insert("clientInfo", self.parts.info.to_json())
            .build();
        let result = self
            .timed(self.transport.request(Outgoing {
                method: "initialize".to_owned(),
                params: Some(params),
                ..Outgoing::default()
            }))
            .await?;
        let chosen = result
            .get("protocolVersion")
            .and_then(JsonValue::as_str)
            .and_then(Revision::from_wire)
            .filter(|r| accepted.contains(r))
            .ok_or(Error::new(
                ErrorKind::Negotiation,
                "the server chose a revision not offered",
            ))?;
        self.revision = chosen;
        self.transport.set_revision(Some(chosen));
        self.server = result;
        self.transport
            .notify("notifications/initialized", None)
            .await?;
        Arc::clone(&self.transport).session_started().await;
        Ok(())
    }

    pub(crate) fn limits(&self) -> &ClientLimits {
        &self.parts.limits
    }

    /// The revision in use.
    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// What the server said about itself: the `server/discover` result on 2026-07-28, the
    /// `initialize` result on 2025 (`serverInfo`, `capabilities`, ...).
    pub fn server(&self) -> &JsonValue {
        &self.server
    }

    /// Sends any request and returns its result: `_meta` added on 2026-07-28, `Mcp-Name`
    /// mirrored. The escape hatch below the typed methods.
    ///
    /// # Errors
    ///
    /// The transport's errors, or the server's JSON-RPC error ([`ErrorKind::Rpc`]).
    pub async fn request(
        &self,
        method: &str,
        params: Option<JsonObject>,
    ) -> Result<JsonValue, Error> {
        self.raw(method, params).await
    }

    async fn raw(&self, method: &str, params: Option<JsonObject>) -> Result<JsonValue, Error> {
        self.send(method, params, Vec::new()).await
    }

    /// `request` bounded by [`ClientLimits::request_timeout`]: past it the request's future is
    /// dropped, which cancels it as its transport and revision say.
    async fn timed(
        &self,
        request: impl Future<Output = Result<JsonValue, Error>>,
    ) -> Result<JsonValue, Error> {
        tokio::time::timeout(self.parts.limits.request_timeout(), request)
            .await
            .unwrap_or(Err(Error::new(ErrorKind::TimedOut, "")))
    }

    /// Sends one request (every one but `subscriptions/listen` under the request timeout).
    pub(crate) async fn send(
        &self,
        method: &str,
        params: Option<JsonObject>,
        headers: Vec<(String, String)>,
    ) -> Result<JsonValue, Error> {
        self.send_for(method, params, headers, None).await
    }

    /// [`send`](Self::send) with the call's own handler for what the server sends on its
    /// stream ([`CallOptions::handler`](crate::CallOptions::handler)).
    pub(crate) async fn send_for(
        &self,
        method: &str,
        params: Option<JsonObject>,
        headers: Vec<(String, String)>,
        call: Option<Arc<dyn Handler>>,
    ) -> Result<JsonValue, Error> {
        let name = mirror::name_source(method)
            .and_then(|key| params.as_ref()?.get(key)?.as_str().map(mirror::encode_text));
        let params = if self.revision.is_stateless() {
            Some(with_meta(
                params,
                self.revision,
                &self.parts.info,
                &self.parts.capabilities,
            ))
        } else {
            params
        };
        let request = self.transport.request(Outgoing {
            method: method.to_owned(),
            params,
            name,
            headers,
            handler: call,
        });
        if method == "subscriptions/listen" {
            request.await
        } else {
            self.timed(request).await
        }
    }

    /// Sends a request and answers the server's `input_required` results (2026-07-28) with
    /// the call's handler (`call`, else the client's), retrying with `inputResponses` and the `requestState`, up to
    /// [`ClientLimits::max_input_rounds`] rounds.
    pub(crate) async fn send_answering(
        &self,
        method: &str,
        params: JsonObject,
        headers: Vec<(String, String)>,
        call: Option<Arc<dyn Handler>>,
    ) -> Result<JsonValue, Error> {
        let mut result = self
            .send_for(method, Some(params.clone()), headers.clone(), call.clone())
            .await?;
        let mut rounds = 0;
        while result.get("resultType").and_then(JsonValue::as_str) == Some("input_required") {
            if rounds >= self.parts.limits.max_input_rounds() {
                return Err(Error::new(
                    ErrorKind::Limit,
                    "too many input_required rounds",
                ));
            }
            rounds += 1;
            let handler = call.as_ref().unwrap_or(&self.parts.handler);
            let responses = Self::answer_inputs(handler, &result).await?;
            let mut retry = JsonObject::builder();
            for (k, v) in params.iter() {
                if !matches!(k.as_str(), "inputResponses" | "requestState") {
                    retry.push(k.clone(), v.clone());
                }
            }
            retry.push("inputResponses", responses);
            if let Some(state) = result.get("requestState") {
                retry.push("requestState", state.clone());
            }
            result = self
                .send_for(method, Some(retry.build()), headers.clone(), call.clone())
                .await?;
        }
        Ok(result)
    }

    /// The answers of `handler` to an `input_required` result's input requests, keyed as asked.
    async fn answer_inputs(
        handler: &Arc<dyn Handler>,
        result: &JsonValue,
    ) -> Result<JsonObject, Error> {
        let requests = result
            .get("inputRequests")
            .and_then(JsonValue::as_object)
            .ok_or(Error::new(
                ErrorKind::Protocol,
                "input_required without inputRequests",
            ))?;
        let mut responses = JsonObject::builder();
        for (key, request) in requests.iter() {
            let method = request
                .get("method")
                .and_then(JsonValue::as_str)
                .ok_or(Error::new(
                    ErrorKind::Protocol,
                    "an input request without a method",
                ))?;
            let params = request.get("params").and_then(JsonValue::as_object);
            let answer = handler.request(method, params).await.map_err(|_| {
                Error::new(ErrorKind::Refused, "the handler refused an input request")
            })?;
            responses.push(key.clone(), answer);
        }
        Ok(responses.build())
    }

    /// One page of `tools/list`, `prompts/list`, `resources/list` or
    /// `resources/templates/list` (`method`), whose items are under `key`.
    async fn page(&self, method: &str, key: &str, cursor: Option<&str>) -> Result<Page, Error> {
        let params = cursor.map(|c| JsonObject::builder().insert("cursor", c).build());
        let result = self.raw(method, params).await?;
        let items = result
            .get(key)
            .and_then(JsonValue::as_array)
            .ok_or(Error::new(
                ErrorKind::Protocol,
                "a list result without its items",
            ))?
            .to_vec();
        let items = crate::older::project_items(self.revision, items);
        let next_cursor = match result.get("nextCursor") {
            None | Some(JsonValue::Null) => None,
            Some(JsonValue::String(s)) => Some(s.as_str().to_owned()),
            Some(_) => {
                return Err(Error::new(
                    ErrorKind::Protocol,
                    "nextCursor is not a string",
                ));
            }
        };
        Ok(Page {
            items,
            next_cursor,
            ttl_ms: ttl_of(&result),
        })
    }

    /// Every page, up to [`ClientLimits::max_pages`].
    pub(crate) async fn all_of(&self, method: &str, key: &str) -> Result<Vec<JsonValue>, Error> {
        self.all(method, key).await
    }

    /// A fresh cached list is answered without asking; a list read whole is cached for the
    /// shortest `ttlMs` of its pages.
    async fn all(&self, method: &str, key: &str) -> Result<Vec<JsonValue>, Error> {
        if let Some(items) = self.parts.cache.get(method) {
            return Ok(items);
        }
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        let mut ttl = Some(u64::MAX);
        for _ in 0..self.parts.limits.max_pages() {
            let page = self.page(method, key, cursor.as_deref()).await?;
            items.extend(page.items);
            ttl = ttl.zip(page.ttl_ms).map(|(a, b)| a.min(b));
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => {
                    if let Some(ttl) = ttl {
                        self.parts.cache.put(method, ttl, &items);
                    }
                    return Ok(items);
                }
            }
        }
        Err(Error::new(ErrorKind::Limit, "too many pages"))
    }

    /// One page of `tools/list`.
    ///
    /// # Errors
    ///
    /// The transport's errors or the server's.
    pub async fn list_tools_page(&self, cursor: Option<&str>) -> Result<Page, Error> {
        let page = self.page("tools/list", "tools", cursor).await?;
        self.remember_tools(&page.items);
        Ok(page)
    }

    /// Every tool, page by page (at most [`ClientLimits::max_pages`] pages).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Limit`] past the page bound, the transport's errors or the server's.
    pub async fn list_tools(&self) -> Result<Vec<JsonValue>, Error> {
        let tools = self.all("tools/list", "tools").await?;
        self.remember_tools(&tools);
        Ok(tools)
    }

    fn remember_tools(&self, tools: &[JsonValue]) {
        let mut known = self
            .tools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for tool in tools {
            if let Some(name) = tool.get("name").and_then(JsonValue::as_str) {
                known.insert(name.to_owned(), Arc::new(KnownTool::new(tool.clone())));
            }
        }
    }

    pub(crate) fn known_tool(&self, name: &str) -> Option<Arc<KnownTool>> {
        let known = self
            .tools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        known.get(name).cloned()
    }

    /// Every prompt, page by page.
    ///
    /// # Errors
    ///
    /// As [`Client::list_tools`].
    pub async fn list_prompts(&self) -> Result<Vec<JsonValue>, Error> {
        self.all("prompts/list", "prompts").await
    }

    /// Every resource, page by page.
    ///
    /// # Errors
    ///
    /// As [`Client::list_tools`].
    pub async fn list_resources(&self) -> Result<Vec<JsonValue>, Error> {
        self.all("resources/list", "resources").await
    }

    /// Every resource template, page by page.
    ///
    /// # Errors
    ///
    /// As [`Client::list_tools`].
    pub async fn list_resource_templates(&self) -> Result<Vec<JsonValue>, Error> {
        self.all("resources/templates/list", "resourceTemplates")
            .await
    }

    /// `prompts/get` with string arguments.
    ///
    /// # Errors
    ///
    /// The transport's errors or the server's.
    pub async fn get_prompt(&self, name: &str, arguments: JsonObject) -> Result<JsonValue, Error> {
        self.get_prompt_with(name, arguments, crate::CallOptions::new())
            .await
    }

    /// `resources/read`.
    ///
    /// # Errors
    ///
    /// The transport's errors or the server's.
    pub async fn read_resource(&self, uri: &str) -> Result<JsonValue, Error> {
        self.read_resource_with(uri, crate::CallOptions::new())
            .await
    }

    /// `completion/complete` for a reference (`{"type":"ref/prompt","name":...}` or
    /// `{"type":"ref/resource","uri":...}`) and the argument being typed.
    ///
    /// # Errors
    ///
    /// The transport's errors or the server's.
    pub async fn complete(
        &self,
        reference: JsonObject,
        argument: &str,
        value: &str,
    ) -> Result<JsonValue, Error> {
        let params = JsonObject::builder()
            .insert("ref", reference)
            .insert(
                "argument",
                JsonObject::builder()
                    .insert("name", argument)
                    .insert("value", value)
                    .build(),
            )
            .build();
        self.raw("completion/complete", Some(params)).await
    }

    /// Ends the session (2025 over HTTP: `DELETE`; stdio: the child is ended).
    ///
    /// # Errors
    ///
    /// The transport's errors.
    pub async fn close(&self) -> Result<(), Error> {
        self.transport.close().await
    }
}

/// The revisions an unsupported-version error's `data.supported` names.
fn supported_revisions(data: Option<&JsonValue>) -> Vec<Revision> {
    data.and_then(|d| d.get("supported"))
        .and_then(JsonValue::as_array)
        .map(|list| {
            list.iter()
                .filter_map(JsonValue::as_str)
                .filter_map(Revision::from_wire)
                .collect()
        })
        .unwrap_or_default()
}
