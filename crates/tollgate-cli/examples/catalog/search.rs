//! `catalog.search` and its MCP Apps view (the `io.modelcontextprotocol/ui` extension): the
//! typed tool (arguments and structured result derived from Rust types) names
//! `ui://catalog/search`, a product table whose Reserve buttons call `catalog.reserve` through
//! the host. The view's HTML is the committed, self-contained bundle `view/search.bundle.html`,
//! built from `view/search.html` and `view/search.mjs` (the `App` class of
//! `@modelcontextprotocol/ext-apps`) by `scripts/apps/build-view.mjs`; `scripts/apps-e2e`
//! rebuilds it with pinned packages and fails when it differs, so building the demo never needs
//! npm. Reads the catalog's items; knows nothing of the other tools or of the endpoint beyond
//! the tool and view it declares.

use std::convert::Infallible;

use serde::{Deserialize, Serialize};
use tollgate::app::AppCsp;
use tollgate::tool::ToolAnnotations;
use tollgate::{
    AppView, BuildError, InvocationFeatures, RequestContext, ToolArguments, ToolRegistration,
};

use super::{ALL, ITEMS};

/// The view's URI, named by `catalog.search`.
const VIEW: &str = "ui://catalog/search";

/// The bundled view: its HTML, script and style in one file.
const VIEW_HTML: &str = include_str!("view/search.bundle.html");

/// The one origin the view's CSP lets it reach (`connectDomains`) unless
/// `TOLLGATE_CATALOG_VIEW_ORIGIN` names another: the shop's web page origin, the demo's default
/// page origin. The host's browser refuses every other.
const DEFAULT_VIEW_ORIGIN: &str = "http://localhost:5173";

#[derive(Serialize, schemars::JsonSchema)]
struct SearchItem {
    sku: String,
    name: String,
    price_cents: u32,
}

#[derive(Serialize, schemars::JsonSchema)]
struct SearchResult {
    items: Vec<SearchItem>,
}

// Arguments of `catalog.search` (a plain comment: a doc comment would become the schema's
// description, which the tool has not had).
#[derive(Deserialize, schemars::JsonSchema)]
#[schemars(title = "catalog.search")]
struct SearchArguments {
    /// Words to look for in item names (case-insensitive)
    query: String,
    /// The most items to return (default 10)
    limit: Option<u8>,
}

/// Searches catalog items by name. Registered with the builder rather than `#[tool]`, which has
/// no option naming a view: its typed result is what the view draws.
async fn search(
    _: &RequestContext,
    arguments: ToolArguments<SearchArguments>,
    _: &InvocationFeatures,
) -> Result<SearchResult, Infallible> {
    let SearchArguments { query, limit } = arguments.into_converted();
    let query = query.to_lowercase();
    let items = ITEMS
        .iter()
        .filter(|item| {
            query
                .split_whitespace()
                .all(|w| item.name.to_lowercase().contains(w))
        })
        .take(usize::from(limit.unwrap_or(10)))
        .map(|item| SearchItem {
            sku: item.sku.into(),
            name: item.name.into(),
            price_cents: item.price_cents,
        })
        .collect();
    Ok(SearchResult { items })
}

/// The `catalog.search` registration, naming its view.
pub(super) fn tool() -> Result<ToolRegistration, BuildError> {
    ToolRegistration::with_name("catalog.search", ALL)
        .argument_and_output_types::<SearchArguments, SearchResult>()
        .handler(search)
        .title("Catalog search")
        .description("Searches catalog items by name.")
        .annotations(
            ToolAnnotations::new()
                .read_only_hint(true)
                .idempotent_hint(true)
                .open_world_hint(false),
        )
        .app_view(VIEW)
        .build()
}

/// `ui://catalog/search`: the view, its CSP granting one origin, drawn with a border.
///
/// # Errors
///
/// A [`BuildError`] when `TOLLGATE_CATALOG_VIEW_ORIGIN` is not an origin (or the
/// wildcard-subdomain form) the extension allows.
pub(super) fn view() -> Result<AppView, BuildError> {
    let origin = std::env::var("TOLLGATE_CATALOG_VIEW_ORIGIN")
        .unwrap_or_else(|_| DEFAULT_VIEW_ORIGIN.to_owned());
    AppView::html(VIEW, VIEW_HTML)
        .name("Catalog search")
        .title("Catalog search results")
        .description("The items catalog.search found, each with a button that reserves it")
        .csp(AppCsp::new().connect_domain(origin))
        .prefers_border(true)
        .build()
}
