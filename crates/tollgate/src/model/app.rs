//! MCP Apps views (the `io.modelcontextprotocol/ui` extension, SEP-1865): the `ui://` view
//! registration ([`AppView`]: its HTML, content-security lists, permissions and rendering hints),
//! the checks each declaration passes when it is built (the URI's scheme and form, every CSP
//! entry an origin or the wildcard-subdomain form, the `domain` hint), a tool's view and
//! visibility ([`AppVisibility`], carried by the tool builder), and how each renders as `_meta.ui`.
//!
//! Knows nothing of endpoints, catalogs or requests: whether a view a tool names exists, whether
//! its read fits the output limits and which client sees the view metadata are decided by the
//! registry (`registry/apps.rs`) and the methods.

use std::sync::Arc;

use tollgate_json::{JsonArray, JsonObject, JsonValue};

use crate::facts::context::ClientCapabilities;
use crate::facts::error::{BuildError, BuildErrorKind};

/// The extension's identifier: the key of its settings under `capabilities.extensions`.
///
/// ```
/// assert_eq!(tollgate::app::APPS_EXTENSION, "io.modelcontextprotocol/ui");
/// ```
pub const APPS_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The media type of every view (`mimeType` on its listing and its read), and the one a client
/// must name in its capability's `mimeTypes` to be sent view metadata.
///
/// ```
/// assert_eq!(tollgate::app::APP_VIEW_MIME_TYPE, "text/html;profile=mcp-app");
/// ```
pub const APP_VIEW_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The longest view URI, in bytes (`ui://` included).
///
/// ```
/// assert_eq!(tollgate::app::MAX_APP_VIEW_URI_BYTES, 2048);
/// ```
pub const MAX_APP_VIEW_URI_BYTES: usize = 2048;

/// The most entries one CSP list ([`AppCsp`]'s connect, resource, frame or base-URI domains)
/// holds.
///
/// ```
/// assert_eq!(tollgate::app::MAX_APP_CSP_DOMAINS, 64);
/// ```
pub const MAX_APP_CSP_DOMAINS: usize = 64;

/// The longest host name in a CSP entry or the `domain` hint, in bytes (DNS's limit; each label
/// holds 1 to 63 bytes).
///
/// ```
/// assert_eq!(tollgate::app::MAX_APP_HOST_BYTES, 253);
/// ```
pub const MAX_APP_HOST_BYTES: usize = 253;

/// Who may see and call a tool ([`ToolBuilder::app_visibility`](crate::tool::ToolBuilder::app_visibility)),
/// published as the tool's `_meta.ui.visibility`. The host enforces it: every tool is still
/// listed and callable on the wire.
///
/// # Examples
///
/// ```
/// use tollgate::app::AppVisibility;
///
/// assert_eq!(AppVisibility::default(), AppVisibility::ModelAndApp);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AppVisibility {
    /// `["model"]`: the model sees and calls it; views do not.
    Model,
    /// `["app"]`: only views of this server call it; the host hides it from the model.
    App,
    /// `["model", "app"]` (the extension's default).
    #[default]
    ModelAndApp,
}

impl AppVisibility {
    fn render(self) -> JsonArray {
        let names: &[&str] = match self {
            Self::Model => &["model"],
            Self::App => &["app"],
            Self::ModelAndApp => &["model", "app"],
        };
        names.iter().map(|n| JsonValue::from(*n)).collect()
    }
}

/// Whether a client's capabilities declare MCP Apps with HTML views: the
/// `io.modelcontextprotocol/ui` extension whose required `mimeTypes` names
/// [`APP_VIEW_MIME_TYPE`]. Such a client is sent the tools' view metadata; a handler may read it
/// too (a tool with a view still answers meaningful `content` for the others).
///
/// # Examples
///
/// ```
/// use tollgate::app::client_renders_views;
/// use tollgate::context::ClientCapabilities;
/// use tollgate::json::{JsonLimits, from_str};
///
/// let declared = from_str(
///     r#"{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}"#,
///     &JsonLimits::default(),
/// ).unwrap();
/// let caps = ClientCapabilities::from_json(declared.as_object().unwrap().clone());
/// assert!(client_renders_views(&caps));
/// assert!(!client_renders_views(&ClientCapabilities::default()));
/// ```
pub fn client_renders_views(capabilities: &ClientCapabilities) -> bool {
    capabilities
        .raw()
        .get("extensions")
        .and_then(|e| e.get(APPS_EXTENSION))
        .and_then(|settings| settings.get("mimeTypes"))
        .and_then(JsonValue::as_array)
        .is_some_and(|types| types.iter().any(|t| t.as_str() == Some(APP_VIEW_MIME_TYPE)))
}

/// What a tool declares of the extension: its view, if any, and its visibility.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ToolApp {
    pub(crate) view: Option<Arc<str>>,
    pub(crate) visibility: AppVisibility,
}

impl ToolApp {
    /// The tool's `_meta.ui`: `resourceUri` when it has a view, and its visibility.
    pub(crate) fn render(&self) -> JsonObject {
        let mut b = JsonObject::builder();
        if let Some(view) = &self.view {
            b.push("resourceUri", &**view);
        }
        b.push("visibility", self.visibility.render());
        b.build()
    }
}

/// The origins a view may reach, by CSP directive (the resource's `_meta.ui.csp`). Empty lists
/// are omitted, and the host then allows nothing of that kind. Each entry is an origin
/// (`https://api.example.com`, `wss://live.example.com:8443`, `http://localhost:3000`) or the
/// wildcard-subdomain form (`https://*.example.com`): scheme `http`, `https`, `ws` or `wss`, a
/// lower-case host name, IPv4 or bracketed IPv6 address, an optional port, and nothing after
/// it. Entries are checked when the view is built ([`AppViewBuilder::build`]); each list holds
/// at most [`MAX_APP_CSP_DOMAINS`].
///
/// # Examples
///
/// ```
/// use tollgate::app::AppCsp;
///
/// let csp = AppCsp::new()
///     .connect_domain("https://api.example.com")
///     .resource_domain("https://*.cdn.example.com");
/// # let _ = csp;
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[must_use]
pub struct AppCsp {
    connect: Vec<Arc<str>>,
    resource: Vec<Arc<str>>,
    frame: Vec<Arc<str>>,
    base_uri: Vec<Arc<str>>,
}

impl AppCsp {
    /// No origin granted (the host's restrictive default).
    pub fn new() -> Self {
        Self::default()
    }

    /// Grants `origin` to network requests (`connectDomains`: fetch, XHR, WebSocket).
    pub fn connect_domain(mut self, origin: impl Into<Arc<str>>) -> Self {
        self.connect.push(origin.into());
        self
    }

    /// Grants `origin` to static resources (`resourceDomains`: scripts, images, styles,
    /// fonts, media).
    pub fn resource_domain(mut self, origin: impl Into<Arc<str>>) -> Self {
        self.resource.push(origin.into());
        self
    }

    /// Grants `origin` to nested frames (`frameDomains`).
    pub fn frame_domain(mut self, origin: impl Into<Arc<str>>) -> Self {
        self.frame.push(origin.into());
        self
    }

    /// Grants `origin` as the document's base URI (`baseUriDomains`).
    pub fn base_uri_domain(mut self, origin: impl Into<Arc<str>>) -> Self {
        self.base_uri.push(origin.into());
        self
    }

    fn lists(&self) -> [(&'static str, &[Arc<str>]); 4] {
        [
            ("connectDomains", &self.connect),
            ("resourceDomains", &self.resource),
            ("frameDomains", &self.frame),
            ("baseUriDomains", &self.base_uri),
        ]
    }

    fn check(&self) -> Result<(), &'static str> {
        for (_, list) in self.lists() {
            if list.len() > MAX_APP_CSP_DOMAINS {
                return Err("a CSP list holds more than 64 entries");
            }
            if !list.iter().all(|o| is_csp_origin(o)) {
                return Err("a CSP entry is not an origin or the wildcard-subdomain form");
            }
        }
        Ok(())
    }

    fn render(&self) -> Option<JsonObject> {
        let mut b = JsonObject::builder();
        for (key, list) in self.lists() {
            if !list.is_empty() {
                let entries: JsonArray = list.iter().map(|o| JsonValue::from(&**o)).collect();
                b.push(key, entries);
            }
        }
        (!b.is_empty()).then(|| b.build())
    }
}

/// The browser permissions a view asks for (the resource's `_meta.ui.permissions`). A host may
/// grant them through the iframe's `allow` attribute, or not: a view must detect them.
///
/// # Examples
///
/// ```
/// use tollgate::app::AppPermissions;
///
/// let permissions = AppPermissions::new().clipboard_write();
/// # let _ = permissions;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[must_use]
pub struct AppPermissions {
    camera: bool,
    microphone: bool,
    geolocation: bool,
    clipboard_write: bool,
}

impl AppPermissions {
    /// None asked for.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks for the camera (`camera`).
    pub fn camera(mut self) -> Self {
        self.camera = true;
        self
    }

    /// Asks for the microphone (`microphone`).
    pub fn microphone(mut self) -> Self {
        self.microphone = true;
        self
    }

    /// Asks for the position (`geolocation`).
    pub fn geolocation(mut self) -> Self {
        self.geolocation = true;
        self
    }

    /// Asks to write the clipboard (`clipboardWrite`).
    pub fn clipboard_write(mut self) -> Self {
        self.clipboard_write = true;
        self
    }

    fn render(self) -> Option<JsonObject> {
        let mut b = JsonObject::builder();
        for (asked, key) in [
            (self.camera, "camera"),
            (self.microphone, "microphone"),
            (self.geolocation, "geolocation"),
            (self.clipboard_write, "clipboardWrite"),
        ] {
            if asked {
                b.push(key, JsonObject::new());
            }
        }
        (!b.is_empty()).then(|| b.build())
    }
}

/// A view: an HTML document served as the `ui://` resource a tool names
/// ([`ToolBuilder::app_view`](crate::tool::ToolBuilder::app_view)), with the origins and
/// permissions it needs. Serve it with
/// [`EndpointBuilder::app_view`](crate::endpoint::EndpointBuilder::app_view). It is listed by
/// `resources/list` and read by `resources/read` as `text/html;profile=mcp-app` with its
/// `_meta.ui`, on the endpoint's revisions that carry `_meta` (2025-06-18 on).
///
/// # Examples
///
/// ```
/// use tollgate::app::{AppCsp, AppPermissions};
/// use tollgate::AppView;
///
/// let view = AppView::html("ui://shop/products", "<!doctype html><title>Products</title>")
///     .name("Products")
///     .csp(AppCsp::new().connect_domain("https://api.example.com"))
///     .permissions(AppPermissions::new().clipboard_write())
///     .prefers_border(true)
///     .build()?;
/// assert_eq!(view.uri(), "ui://shop/products");
/// # Ok::<(), tollgate::BuildError>(())
/// ```
#[derive(Clone)]
pub struct AppView {
    pub(crate) inner: Arc<AppViewInner>,
}

pub(crate) struct AppViewInner {
    pub(crate) uri: Arc<str>,
    pub(crate) name: Arc<str>,
    pub(crate) title: Option<Arc<str>>,
    pub(crate) description: Option<Arc<str>>,
    pub(crate) html: Arc<str>,
    /// `{"ui": {...}}` when any of the CSP, permissions, domain or border hint is set.
    pub(crate) meta: Option<JsonObject>,
}

impl std::fmt::Debug for AppView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppView")
            .field("uri", &self.inner.uri)
            .finish_non_exhaustive()
    }
}

impl AppView {
    /// Starts a view at `uri` (`ui://` and at least one character, at most
    /// [`MAX_APP_VIEW_URI_BYTES`], checked by [`build`](AppViewBuilder::build)) holding `html`.
    pub fn html(uri: impl Into<Arc<str>>, html: impl Into<Arc<str>>) -> AppViewBuilder {
        AppViewBuilder {
            uri: uri.into(),
            html: html.into(),
            name: None,
            title: None,
            description: None,
            csp: AppCsp::default(),
            permissions: AppPermissions::default(),
            domain: None,
            prefers_border: None,
        }
    }

    /// Its `ui://` URI.
    pub fn uri(&self) -> &str {
        &self.inner.uri
    }

    /// Its name (the URI unless [`AppViewBuilder::name`] set one).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The HTML it serves.
    pub fn html_text(&self) -> &str {
        &self.inner.html
    }
}

/// Builds an [`AppView`]: its name and descriptions, CSP, permissions and hints.
#[must_use = "call build() to finish the view"]
#[derive(Debug)]
pub struct AppViewBuilder {
    uri: Arc<str>,
    html: Arc<str>,
    name: Option<Arc<str>>,
    title: Option<Arc<str>>,
    description: Option<Arc<str>>,
    csp: AppCsp,
    permissions: AppPermissions,
    domain: Option<Arc<str>>,
    prefers_border: Option<bool>,
}

impl AppViewBuilder {
    /// The resource's name (1 to 1,024 bytes; default: its URI).
    pub fn name(mut self, name: impl Into<Arc<str>>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// A human-readable title (listed on 2025-06-18 and later).
    pub fn title(mut self, title: impl Into<Arc<str>>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// What the view shows.
    pub fn description(mut self, description: impl Into<Arc<str>>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The origins the view may reach (default: none).
    pub fn csp(mut self, csp: AppCsp) -> Self {
        self.csp = csp;
        self
    }

    /// The browser permissions the view asks for (default: none).
    pub fn permissions(mut self, permissions: AppPermissions) -> Self {
        self.permissions = permissions;
        self
    }

    /// A dedicated sandbox origin the view asks its host for (`_meta.ui.domain`; its format is
    /// the host's): a lower-case host name of at most [`MAX_APP_HOST_BYTES`] or an `https`
    /// origin. Default: none (the host's per-conversation origin).
    pub fn domain(mut self, domain: impl Into<Arc<str>>) -> Self {
        self.domain = Some(domain.into());
        self
    }

    /// Whether the host should draw a border and background around the view
    /// (`_meta.ui.prefersBorder`; default: unset, the host decides).
    pub fn prefers_border(mut self, border: bool) -> Self {
        self.prefers_border = Some(border);
        self
    }

    /// Finishes the view.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::InvalidAppView`] (with [`BuildError::detail`]) for a URI that is not
    /// `ui://` followed by at least one character, or is over [`MAX_APP_VIEW_URI_BYTES`], holds
    /// white space, a control character or a template brace; a name that is empty or over 1,024
    /// bytes; a CSP entry that is neither an origin nor the wildcard-subdomain form, or a list
    /// over [`MAX_APP_CSP_DOMAINS`]; a `domain` that is neither a host name nor an `https`
    /// origin. Whether its read fits the output limits is checked by its endpoint's build.
    pub fn build(self) -> Result<AppView, BuildError> {
        let fail = |detail| {
            Err(BuildError::new(BuildErrorKind::InvalidAppView)
                .resource(&self.uri)
                .with_detail(detail))
        };
        if let Err(detail) = check_view_uri(&self.uri) {
            return fail(detail);
        }
        if self
            .name
            .as_ref()
            .is_some_and(|n| n.is_empty() || n.len() > 1024)
        {
            return fail("a view's name holds 1 to 1,024 bytes");
        }
        let name = self.name.clone().unwrap_or_else(|| self.uri.clone());
        if let Err(detail) = self.csp.check() {
            return fail(detail);
        }
        if let Some(domain) = &self.domain
            && !is_host(domain)
            && !domain
                .strip_prefix("https://")
                .is_some_and(|rest| is_host_port(rest, false))
        {
            return fail("a view's domain is a host name or an https origin");
        }
        let mut ui = JsonObject::builder();
        if let Some(csp) = self.csp.render() {
            ui.push("csp", csp);
        }
        if let Some(permissions) = self.permissions.render() {
            ui.push("permissions", permissions);
        }
        if let Some(domain) = &self.domain {
            ui.push("domain", &**domain);
        }
        if let Some(border) = self.prefers_border {
            ui.push("prefersBorder", border);
        }
        let meta = (!ui.is_empty()).then(|| JsonObject::builder().insert("ui", ui.build()).build());
        Ok(AppView {
            inner: Arc::new(AppViewInner {
                uri: self.uri,
                name,
                title: self.title,
                description: self.description,
                html: self.html,
                meta,
            }),
        })
    }
}

/// A view URI: `ui://`, then 1 or more bytes of visible ASCII or UTF-8 beyond it, no template
/// brace, at most [`MAX_APP_VIEW_URI_BYTES`] in all.
pub(crate) fn check_view_uri(uri: &str) -> Result<(), &'static str> {
    if uri.len() > MAX_APP_VIEW_URI_BYTES {
        return Err("a view URI holds at most 2,048 bytes");
    }
    let Some(rest) = uri.strip_prefix("ui://") else {
        return Err("a view URI starts with ui://");
    };
    if rest.is_empty()
        || rest
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '{' | '}'))
    {
        return Err("a view URI names something after ui:// without spaces or braces");
    }
    Ok(())
}

/// A CSP entry: `scheme://host[:port]` with scheme `http`, `https`, `ws` or `wss`, or the same
/// with `*.` before a host name of at least two labels.
fn is_csp_origin(entry: &str) -> bool {
    let Some((scheme, rest)) = entry.split_once("://") else {
        return false;
    };
    if !matches!(scheme, "http" | "https" | "ws" | "wss") {
        return false;
    }
    match rest.strip_prefix("*.") {
        Some(host) => is_host_port(host, true),
        None => is_host_port(rest, false),
    }
}

/// `host[:port]`: a host name (for a wildcard's suffix, one of two labels or more) or a
/// bracketed IPv6 address (not after a wildcard), then an optional port of 1 to 65535.
fn is_host_port(text: &str, wildcard: bool) -> bool {
    let (host, port) = if let Some(inner) = text.strip_prefix('[') {
        if wildcard {
            return false;
        }
        let Some((address, after)) = inner.split_once(']') else {
            return false;
        };
        if address.is_empty()
            || address.len() > 39
            || !address
                .bytes()
                .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
        {
            return false;
        }
        (None, after)
    } else {
        match text.find(':') {
            Some(i) => (Some(&text[..i]), &text[i..]),
            None => (Some(text), ""),
        }
    };
    if let Some(host) = host
        && (!is_host(host) || (wildcard && !host.contains('.')))
    {
        return false;
    }
    match port.strip_prefix(':') {
        None => port.is_empty(),
        Some(digits) => {
            (1..=5).contains(&digits.len())
                && digits.bytes().all(|b| b.is_ascii_digit())
                && digits
                    .parse::<u32>()
                    .is_ok_and(|p| (1..=65_535).contains(&p))
        }
    }
}

/// A lower-case host name: labels of 1 to 63 bytes of `a-z 0-9 -` (no hyphen first or last)
/// joined by dots, at most [`MAX_APP_HOST_BYTES`] in all (IPv4 addresses are of this form).
fn is_host(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= MAX_APP_HOST_BYTES
        && host.split('.').all(|label| {
            (1..=63).contains(&label.len())
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        })
}

#[cfg(test)]
#[path = "app_tests.rs"]
mod tests;
