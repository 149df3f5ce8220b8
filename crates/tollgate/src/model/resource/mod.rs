//! Resources: exact-URI registrations, URI-template registrations (RFC 6570 Level 1, parsed and
//! matched by `template`), unlisted read fallbacks for a URI prefix (`fallback`), the contents a read returns, and the routing of a read.
//!
//! Owns [`ResourceRegistration`], [`ResourceTemplateRegistration`], [`ResourceRequest`] and
//! [`ResourceOutput`], template parsing (failing closed on anything past Level 1) and matching
//! (no regex engine; a fixed work budget). Knows nothing of transports or sessions; the protocol
//! module renders catalogs and reads per revision, and the stream module delivers update
//! notifications to subscribed sessions.

use std::fmt;
use std::sync::Arc;

use tollgate_json::{JsonObject, JsonValue};

use crate::facts::error::{BuildError, BuildErrorKind};
use crate::model::cache::CachePolicy;
use crate::model::content::ResourceContents;
use crate::model::content::icon::{Icon, render_icons};
use crate::model::handler::{Erased, Handler, Outcome, erase};
use crate::model::prompt::completion::{CompletionFn, InvokeCompletion, boxed_completion};
use crate::policy::authorization::Scopes;
use crate::version::{ProtocolVersion, ProtocolVersions};

pub(crate) mod fallback;
pub(crate) mod template;

use template::{MATCH_BUDGET, MAX_TEMPLATE_ROUTED_URI_BYTES, UriTemplate};

/// What a resource read receives: the URI asked for and, for a template, its variables
/// (percent-decoded).
///
/// # Examples
///
/// ```
/// use tollgate::resource::ResourceRequest;
///
/// let request = ResourceRequest::for_test("test://items/42", [("id", "42")]);
/// assert_eq!(request.uri(), "test://items/42");
/// assert_eq!(request.variable("id"), Some("42"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceRequest {
    uri: Arc<str>,
    variables: Vec<(Arc<str>, Arc<str>)>,
}

impl ResourceRequest {
    /// A request for unit-testing a handler.
    pub fn for_test<'a>(
        uri: &str,
        variables: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Self {
        Self {
            uri: Arc::from(uri),
            variables: variables
                .into_iter()
                .map(|(k, v)| (Arc::from(k), Arc::from(v)))
                .collect(),
        }
    }

    pub(crate) fn routed(uri: &str, variables: Vec<(Arc<str>, Arc<str>)>) -> Self {
        Self {
            uri: Arc::from(uri),
            variables,
        }
    }

    /// The URI the client asked for, exactly as sent.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// A template variable's value (percent-decoded); `None` for an exact resource.
    pub fn variable(&self, name: &str) -> Option<&str> {
        self.variables
            .iter()
            .find(|(k, _)| &**k == name)
            .map(|(_, v)| &**v)
    }
}

/// What a read returns: one or more contents (text or blob), in order.
///
/// # Examples
///
/// ```
/// use tollgate::{content::ResourceContents, resource::ResourceOutput};
///
/// let output = ResourceOutput::with_contents(
///     ResourceContents::text("test://notes", Some("text/plain"), "hello")?,
/// );
/// assert_eq!(output.contents().len(), 1);
/// # Ok::<(), tollgate::content::ContentError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceOutput {
    contents: Vec<ResourceContents>,
    /// The first contents' `_meta` (an MCP Apps view's `_meta.ui`).
    first_meta: Option<JsonObject>,
}

impl ResourceOutput {
    /// An output starting with `contents` (an output is never empty: an empty one would be
    /// ambiguous with a resource that does not exist).
    pub fn with_contents(contents: ResourceContents) -> Self {
        Self {
            contents: vec![contents],
            first_meta: None,
        }
    }

    /// The answer for a URI a template matches but that names nothing (an unknown id): the
    /// client receives the revision's "Resource not found" error, as for an unmatched URI.
    ///
    /// ```
    /// let missing = tollgate::resource::ResourceOutput::not_found();
    /// assert!(missing.is_not_found());
    /// ```
    pub fn not_found() -> Self {
        Self {
            contents: Vec::new(),
            first_meta: None,
        }
    }

    /// Whether this is [`ResourceOutput::not_found`].
    pub fn is_not_found(&self) -> bool {
        self.contents.is_empty()
    }

    /// A `ReadResourceResult` read back from its wire form, every contents through the same
    /// constructors, and so the same checks, as an application's: `None` when any fails one or
    /// there are none (a gateway relaying another server's resource answers that with the
    /// fixed internal error).
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::json::{JsonLimits, from_str};
    /// use tollgate::resource::ResourceOutput;
    ///
    /// let wire = from_str(r#"{"contents":[{"uri":"file:///a.txt","mimeType":"text/plain","text":"a"}]}"#, &JsonLimits::default()).unwrap();
    /// assert_eq!(ResourceOutput::from_wire(wire.as_object().unwrap()).unwrap().contents().len(), 1);
    /// let bad = from_str(r#"{"contents":[{"uri":"file:///a.bin","blob":"not base64!"}]}"#, &JsonLimits::default()).unwrap();
    /// assert!(ResourceOutput::from_wire(bad.as_object().unwrap()).is_none());
    /// ```
    pub fn from_wire(result: &tollgate_json::JsonObject) -> Option<Self> {
        use crate::model::content::parse::contents;
        let mut all = result.get("contents")?.as_array()?.iter();
        let mut output = Self::with_contents(contents(all.next()?.as_object()?)?);
        for c in all {
            output = output.add_contents(contents(c.as_object()?)?);
        }
        Some(output)
    }

    /// Appends contents.
    #[must_use]
    pub fn add_contents(mut self, contents: ResourceContents) -> Self {
        self.contents.push(contents);
        self
    }

    /// The contents.
    pub fn contents(&self) -> &[ResourceContents] {
        &self.contents
    }

    /// What a read of an MCP Apps view answers: its HTML as `text/html;profile=mcp-app`, with
    /// the view's `_meta`.
    pub(crate) fn of_view(view: &crate::model::app::AppView) -> Self {
        let v = &view.inner;
        let contents = ResourceContents::Text {
            uri: v.uri.clone(),
            mime_type: Some(Arc::from(crate::model::app::APP_VIEW_MIME_TYPE)),
            text: v.html.clone(),
        };
        Self {
            contents: vec![contents],
            first_meta: v.meta.clone(),
        }
    }

    /// The `resources/read` result on `revision`: the contents (the first with its `_meta`,
    /// when it has one), the result type and `cache` on 2026-07-28; `None` when a contents
    /// cannot be rendered.
    pub(crate) fn render_result(
        &self,
        revision: ProtocolVersion,
        cache: CachePolicy,
    ) -> Option<tollgate_json::JsonObjectBuilder> {
        let mut contents = Vec::with_capacity(self.contents.len());
        for (i, c) in self.contents.iter().enumerate() {
            let value = c.render().ok()?;
            match (&self.first_meta, value) {
                (Some(meta), JsonValue::Object(o)) if i == 0 => {
                    let mut b = o.to_builder();
                    b.push("_meta", meta.clone());
                    contents.push(JsonValue::from(b.build()));
                }
                (_, value) => contents.push(value),
            }
        }
        let legacy = crate::version::is_legacy(revision);
        let mut out = JsonObject::builder();
        if !legacy {
            out.push("resultType", "complete");
        }
        out.push("contents", JsonValue::from(contents));
        if !legacy {
            cache.push_into(&mut out);
        }
        Some(out)
    }
}

/// What a resource handler answers: the contents (or [`ResourceOutput::not_found`]), or
/// (2026-07-28) a request for input first. Handlers return either type directly; both convert.
pub type ResourceOutcome = Outcome<ResourceOutput>;

impl From<ResourceOutput> for ResourceOutcome {
    fn from(output: ResourceOutput) -> Self {
        Self::Complete(output)
    }
}

/// The metadata every resource and template carries.
#[derive(Clone, Debug, Default)]
struct Metadata {
    title: Option<Arc<str>>,
    description: Option<Arc<str>>,
    mime_type: Option<Arc<str>>,
    size: Option<u64>,
    icons: Vec<Icon>,
    cache: Option<CachePolicy>,
    /// The listing's `_meta` (2025-06-18 on): an MCP Apps view's `_meta.ui`.
    meta: Option<JsonObject>,
}

impl Metadata {
    fn render_into(&self, b: &mut tollgate_json::JsonObjectBuilder, revision: ProtocolVersion) {
        if let Some(t) = self
            .title
            .as_ref()
            .filter(|_| revision.carries_titles_and_structure())
        {
            b.push("title", &**t);
        }
        if let Some(d) = &self.description {
            b.push("description", &**d);
        }
        if let Some(m) = &self.mime_type {
            b.push("mimeType", &**m);
        }
        if let Some(s) = self.size {
            b.push("size", s);
        }
        if !self.icons.is_empty() && revision.carries_icons() {
            b.push("icons", render_icons(&self.icons));
        }
        if let Some(m) = self
            .meta
            .as_ref()
            .filter(|_| revision.carries_titles_and_structure())
        {
            b.push("_meta", m.clone());
        }
    }
}

/// A resource or template registration's shared parts.
pub(crate) struct ResourceInner {
    pub(crate) name: Arc<str>,
    metadata: Metadata,
    revisions: ProtocolVersions,
    pub(crate) handler: Box<dyn Erased<ResourceRequest, ResourceOutcome>>,
    /// The scopes a caller's token must grant to read (or subscribe to) it.
    pub(crate) required_scopes: Scopes,
}

impl ResourceInner {
    pub(crate) fn cache(&self) -> Option<CachePolicy> {
        self.metadata.cache
    }
}

/// An immutable registration of one resource at an exact URI.
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use tollgate::{
///     InvocationFeatures, ProtocolVersion, RequestContext, content::ResourceContents,
///     resource::{ResourceOutput, ResourceRegistration, ResourceRequest},
/// };
///
/// async fn readme(
///     _: &RequestContext,
///     request: ResourceRequest,
///     _: &InvocationFeatures,
/// ) -> Result<ResourceOutput, tollgate::content::ContentError> {
///     Ok(ResourceOutput::with_contents(ResourceContents::text(
///         request.uri(), Some("text/markdown"), "# Read me",
///     )?))
/// }
///
/// let resource = ResourceRegistration::with_uri(
///     "file:///project/README.md", "README", [ProtocolVersion::V2026_07_28],
/// )
/// .handler(readme)
/// .mime_type("text/markdown")
/// .build()?;
/// assert_eq!(resource.uri(), "file:///project/README.md");
/// # Ok::<(), tollgate::BuildError>(())
/// ```
#[derive(Clone)]
pub struct ResourceRegistration {
    pub(crate) uri: Arc<str>,
    pub(crate) inner: Arc<ResourceInner>,
}

impl fmt::Debug for ResourceRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceRegistration")
            .field("uri", &self.uri)
            .finish_non_exhaustive()
    }
}

/// An immutable registration of a family of resources addressed by a URI template.
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use tollgate::{
///     InvocationFeatures, ProtocolVersion, RequestContext, content::ResourceContents,
///     resource::{ResourceOutput, ResourceRequest, ResourceTemplateRegistration},
/// };
///
/// async fn item(
///     _: &RequestContext,
///     request: ResourceRequest,
///     _: &InvocationFeatures,
/// ) -> Result<ResourceOutput, tollgate::content::ContentError> {
///     let id = request.variable("id").unwrap_or_default();
///     Ok(ResourceOutput::with_contents(ResourceContents::text(
///         request.uri(), Some("text/plain"), format!("item {id}"),
///     )?))
/// }
///
/// let template = ResourceTemplateRegistration::with_uri_template(
///     "shop://items/{id}", "Item", [ProtocolVersion::V2026_07_28],
/// )
/// .handler(item)
/// .build()?;
/// assert_eq!(template.uri_template(), "shop://items/{id}");
/// # Ok::<(), tollgate::BuildError>(())
/// ```
#[derive(Clone)]
pub struct ResourceTemplateRegistration {
    pub(crate) template: Arc<UriTemplate>,
    pub(crate) inner: Arc<ResourceInner>,
    /// Completes its variables' values (`completion/complete` with `ref/resource`).
    pub(crate) completion: Option<Arc<dyn InvokeCompletion>>,
}

impl fmt::Debug for ResourceTemplateRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceTemplateRegistration")
            .field("uri_template", &self.template.source)
            .finish_non_exhaustive()
    }
}

impl ResourceRegistration {
    /// Starts a registration of the resource at `uri` (an absolute URI), called `name`.
    pub fn with_uri(
        uri: impl Into<Arc<str>>,
        name: impl Into<Arc<str>>,
        revisions: impl Into<ProtocolVersions>,
    ) -> ResourceHandlerStage<Exact> {
        ResourceHandlerStage {
            address: Exact(uri.into()),
            name: name.into(),
            revisions: revisions.into(),
        }
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The revisions it is served on.
    pub fn revisions(&self) -> ProtocolVersions {
        self.inner.revisions
    }

    /// A resource whose contents are fixed when the endpoint is built (a skill's file), served on
    /// 2026-07-28: its read returns `contents` through the same pipeline as any other.
    pub(crate) fn served(
        name: Arc<str>,
        description: Option<Arc<str>>,
        size: u64,
        contents: ResourceContents,
    ) -> Self {
        let (uri, mime_type) = match &contents {
            ResourceContents::Text { uri, mime_type, .. }
            | ResourceContents::Blob { uri, mime_type, .. } => (uri.clone(), mime_type.clone()),
        };
        let metadata = Metadata {
            description,
            mime_type,
            size: Some(size),
            ..Metadata::default()
        };
        Self {
            uri,
            inner: Arc::new(ResourceInner {
                name,
                metadata,
                revisions: [ProtocolVersion::V2026_07_28].into(),
                handler: Box::new(Served(contents)),
                required_scopes: Scopes::default(),
            }),
        }
    }

    /// An MCP Apps view served as a resource on `revisions`: listed with its title,
    /// description, media type and `_meta`, read as its HTML with the same `_meta`.
    pub(crate) fn served_view(
        view: &crate::model::app::AppView,
        revisions: ProtocolVersions,
    ) -> Self {
        let v = &view.inner;
        let mime: Arc<str> = Arc::from(crate::model::app::APP_VIEW_MIME_TYPE);
        let metadata = Metadata {
            title: v.title.clone(),
            description: v.description.clone(),
            mime_type: Some(mime.clone()),
            meta: v.meta.clone(),
            ..Metadata::default()
        };
        let output = ResourceOutput::of_view(view);
        Self {
            uri: v.uri.clone(),
            inner: Arc::new(ResourceInner {
                name: v.name.clone(),
                metadata,
                revisions,
                handler: Box::new(ServedView(output)),
                required_scopes: Scopes::default(),
            }),
        }
    }

    pub(crate) fn descriptor(&self, revision: ProtocolVersion) -> JsonValue {
        let mut b = JsonObject::builder()
            .insert("uri", &*self.uri)
            .insert("name", &*self.inner.name);
        self.inner.metadata.render_into(&mut b, revision);
        b.build().into()
    }
}

impl ResourceTemplateRegistration {
    /// Starts a registration of the resources matching `uri_template` (RFC 6570 Level 1: literal
    /// text and `{variable}` expressions), called `name`.
    pub fn with_uri_template(
        uri_template: impl Into<Arc<str>>,
        name: impl Into<Arc<str>>,
        revisions: impl Into<ProtocolVersions>,
    ) -> ResourceHandlerStage<Template> {
        ResourceHandlerStage {
            address: Template(uri_template.into()),
            name: name.into(),
            revisions: revisions.into(),
        }
    }

    /// The URI template, as registered.
    pub fn uri_template(&self) -> &str {
        &self.template.source
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The revisions it is served on.
    pub fn revisions(&self) -> ProtocolVersions {
        self.inner.revisions
    }

    /// Whether it completes its variables (`completion/complete`).
    pub(crate) fn completes(&self) -> bool {
        self.completion.is_some()
    }

    pub(crate) fn descriptor(&self, revision: ProtocolVersion) -> JsonValue {
        let mut b = JsonObject::builder()
            .insert("uriTemplate", &*self.template.source)
            .insert("name", &*self.inner.name);
        self.inner.metadata.render_into(&mut b, revision);
        b.build().into()
    }
}

/// The address of an exact resource (a type parameter of [`ResourceHandlerStage`]).
#[derive(Debug)]
pub struct Exact(Arc<str>);

/// The address of a template (a type parameter of [`ResourceHandlerStage`]).
#[derive(Debug)]
pub struct Template(Arc<str>);

/// The first stage of a resource or template registration: the handler.
#[must_use = "install a handler, then build()"]
#[derive(Debug)]
pub struct ResourceHandlerStage<K> {
    address: K,
    name: Arc<str>,
    revisions: ProtocolVersions,
}

impl<K> ResourceHandlerStage<K> {
    /// Installs the handler that reads the resource.
    pub fn handler<H, T, E>(self, handler: H) -> ResourceBuilder<K>
    where
        H: for<'a> Handler<'a, ResourceRequest, T, E>,
        T: Into<ResourceOutcome> + 'static,
        E: 'static,
    {
        ResourceBuilder {
            address: self.address,
            name: self.name,
            revisions: self.revisions,
            metadata: Metadata::default(),
            handler: erase(handler),
            required_scopes: Vec::new(),
            completion: None,
        }
    }
}

/// Builds a resource or template registration once its handler is installed.
#[must_use = "call build() to finish the registration"]
pub struct ResourceBuilder<K> {
    address: K,
    name: Arc<str>,
    revisions: ProtocolVersions,
    metadata: Metadata,
    handler: Box<dyn Erased<ResourceRequest, ResourceOutcome>>,
    required_scopes: Vec<String>,
    /// A template's completion handler (set only through `ResourceBuilder<Template>`).
    completion: Option<Box<dyn InvokeCompletion>>,
}

impl<K: fmt::Debug> fmt::Debug for ResourceBuilder<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceBuilder")
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

impl<K> ResourceBuilder<K> {
    /// A human-readable title.
    pub fn title(mut self, title: impl Into<Arc<str>>) -> Self {
        self.metadata.title = Some(title.into());
        self
    }

    /// What the resource holds.
    pub fn description(mut self, description: impl Into<Arc<str>>) -> Self {
        self.metadata.description = Some(description.into());
        self
    }

    /// Its media type (checked when built).
    pub fn mime_type(mut self, mime_type: impl Into<Arc<str>>) -> Self {
        self.metadata.mime_type = Some(mime_type.into());
        self
    }

    /// Its size in bytes, when known.
    pub fn size(mut self, bytes: u64) -> Self {
        self.metadata.size = Some(bytes);
        self
    }

    /// Appends an icon (omitted on 2025-06-18).
    pub fn add_icon(mut self, icon: Icon) -> Self {
        self.metadata.icons.push(icon);
        self
    }

    /// Caching hints for its reads on 2026-07-28 (default: the endpoint's policy).
    pub fn cache_policy(mut self, policy: CachePolicy) -> Self {
        self.metadata.cache = Some(policy);
        self
    }

    /// Requires the caller's token to grant each of `scopes` to read it (a template: any URI
    /// it routes) or subscribe to it (see
    /// [`ToolBuilder::required_scopes`](crate::tool::ToolBuilder::required_scopes)). Adds to
    /// scopes set before.
    pub fn required_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.required_scopes
            .extend(scopes.into_iter().map(Into::into));
        self
    }

    fn inner(
        self,
        fail: impl Fn(BuildErrorKind) -> BuildError,
    ) -> Result<(K, ResourceInner), BuildError> {
        if self.revisions.is_empty() {
            return Err(fail(BuildErrorKind::EmptyRevisions));
        }
        if self.name.is_empty() || self.name.len() > 1024 {
            return Err(fail(BuildErrorKind::InvalidResource));
        }
        if let Some(m) = &self.metadata.mime_type
            && !crate::wire::syntax::is_media_type(m)
        {
            return Err(fail(BuildErrorKind::InvalidResource));
        }
        let Some(required_scopes) = Scopes::parse(&self.required_scopes) else {
            return Err(fail(BuildErrorKind::InvalidAuthorization));
        };
        Ok((
            self.address,
            ResourceInner {
                name: self.name,
                metadata: self.metadata,
                revisions: self.revisions,
                handler: self.handler,
                required_scopes,
            },
        ))
    }
}

impl ResourceBuilder<Exact> {
    /// Finishes the registration.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::EmptyRevisions`], or [`BuildErrorKind::InvalidResource`] for a URI
    /// that is not absolute or longer than 1,048,576 bytes, an empty name, or a malformed media
    /// type.
    pub fn build(self) -> Result<ResourceRegistration, BuildError> {
        let uri = self.address.0.clone();
        let fail = |kind| BuildError::new(kind).resource(&uri);
        if uri.len() > 1_048_576 || !crate::wire::syntax::is_absolute_uri(&uri) {
            return Err(fail(BuildErrorKind::InvalidResource));
        }
        let (Exact(uri), inner) = self.inner(fail)?;
        Ok(ResourceRegistration {
            uri,
            inner: Arc::new(inner),
        })
    }
}

impl ResourceBuilder<Template> {
    /// Completes values of the template's variables for `completion/complete` with a
    /// `ref/resource` reference to this template (and advertises the `completions` capability):
    /// the request's argument is one of its variables, its context the others' chosen values.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use tollgate::{InvocationFeatures, ProtocolVersion, RequestContext};
    /// use tollgate::prompt::{Completion, CompletionRequest};
    /// use tollgate::resource::{ResourceOutput, ResourceRequest, ResourceTemplateRegistration};
    ///
    /// ResourceTemplateRegistration::with_uri_template("shop://items/{id}", "Item", [ProtocolVersion::V2026_07_28])
    ///     .handler(|_: &RequestContext, _: ResourceRequest, _: &InvocationFeatures| async {
    ///         Ok::<_, Infallible>(ResourceOutput::not_found())
    ///     })
    ///     .completion(|_: &RequestContext, request: CompletionRequest| async move {
    ///         let ids = ["apple", "apricot", "banana"].into_iter();
    ///         Ok::<_, Infallible>(Completion::from_values(ids.filter(|id| id.starts_with(request.value()))))
    ///     })
    ///     .build()?;
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn completion<H, E>(mut self, handler: H) -> Self
    where
        H: for<'a> CompletionFn<'a, E>,
        E: 'static,
    {
        self.completion = Some(boxed_completion(handler));
        self
    }

    /// Finishes the registration.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::EmptyRevisions`], [`BuildErrorKind::InvalidUriTemplate`] (anything
    /// past RFC 6570 Level 1, two expressions side by side, a repeated variable, or a limit:
    /// 8,192 bytes, 32 variables, 128-byte names), or [`BuildErrorKind::InvalidResource`].
    pub fn build(mut self) -> Result<ResourceTemplateRegistration, BuildError> {
        let source = self.address.0.clone();
        let fail = |kind| BuildError::new(kind).resource(&source);
        let template =
            UriTemplate::parse(&source).ok_or_else(|| fail(BuildErrorKind::InvalidUriTemplate))?;
        let completion = self.completion.take().map(Arc::from);
        let (_, inner) = self.inner(fail)?;
        Ok(ResourceTemplateRegistration {
            template: Arc::new(template),
            inner: Arc::new(inner),
            completion,
        })
    }
}

/// The handler of a [`ResourceRegistration::served`] resource: its fixed contents.
struct Served(ResourceContents);

impl Erased<ResourceRequest, ResourceOutcome> for Served {
    fn invoke<'a>(
        &'a self,
        _: &'a crate::facts::context::RequestContext,
        _: ResourceRequest,
        _: &'a crate::model::features::InvocationFeatures,
        _: &'a crate::facts::report::Failures,
    ) -> crate::model::guard::BoxFuture<'a, Option<ResourceOutcome>> {
        let output = ResourceOutput::with_contents(self.0.clone());
        Box::pin(std::future::ready(Some(Outcome::Complete(output))))
    }
}

/// The handler of a [`ResourceRegistration::served_view`] resource: the view's HTML with its
/// `_meta`.
struct ServedView(ResourceOutput);

impl Erased<ResourceRequest, ResourceOutcome> for ServedView {
    fn invoke<'a>(
        &'a self,
        _: &'a crate::facts::context::RequestContext,
        _: ResourceRequest,
        _: &'a crate::model::features::InvocationFeatures,
        _: &'a crate::facts::report::Failures,
    ) -> crate::model::guard::BoxFuture<'a, Option<ResourceOutcome>> {
        Box::pin(std::future::ready(Some(Outcome::Complete(self.0.clone()))))
    }
}

/// What a read routes to.
pub(crate) enum Route<'e> {
    Exact(&'e ResourceRegistration),
    Template(&'e ResourceTemplateRegistration, Vec<(Arc<str>, Arc<str>)>),
}

/// Routes `uri`: exact registrations first, then templates in registration order, within the
/// matching budget.
pub(crate) fn route<'e>(
    uri: &str,
    revision: ProtocolVersion,
    exact: &'e [ResourceRegistration],
    templates: &'e [ResourceTemplateRegistration],
) -> Option<Route<'e>> {
    if let Some(r) = exact
        .iter()
        .find(|r| &*r.uri == uri && r.revisions().contains(revision))
    {
        return Some(Route::Exact(r));
    }
    if uri.len() > MAX_TEMPLATE_ROUTED_URI_BYTES {
        return None;
    }
    let mut budget = MATCH_BUDGET;
    for t in templates
        .iter()
        .filter(|t| t.revisions().contains(revision))
    {
        if let Some(variables) = t.template.matches(uri, &mut budget) {
            return Some(Route::Template(t, variables));
        }
        if budget == 0 {
            return None;
        }
    }
    None
}
