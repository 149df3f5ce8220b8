//! The seasonal offer: `catalog.seasonal`, called with `{"enabled": true}` or
//! `{"enabled": false}`, adds or removes the typed tool `catalog.gift_wrap` (on every revision
//! the demo serves) through the endpoint's live catalog, and every listening client hears
//! `notifications/tools/list_changed` (a 2025 session on its `GET` stream, a 2026-07-28 client
//! through `subscriptions/listen` with `toolsListChanged`). Calls already running finish on the
//! catalog they started on.
//!
//! The change is the catalog event `catalog.seasonal` (payload `{"enabled": bool}`), published
//! with `Catalogs::publish`: alone the demo applies it at once; in a cluster (a PostgreSQL
//! store, `stores.rs`) every instance applies it through [`apply`] and the call answers once all
//! of them have, so any instance behind the load balancer lists the change after it.

use std::sync::OnceLock;

use serde::Serialize;
use tollgate::endpoint::{CatalogChange, Catalogs};
use tollgate::json::{JsonObject, JsonValue};
use tollgate::{BuildError, Endpoint, ToolRegistration, tool};

/// The catalog `catalog.seasonal` changes: the first demo endpoint of this process
/// ([`attach`]).
static CATALOGS: OnceLock<Catalogs> = OnceLock::new();

/// Lets `catalog.seasonal` change `endpoint`'s catalog (call it once the endpoint is built).
pub(crate) fn attach(endpoint: &Endpoint) {
    if let Some(catalogs) = endpoint.catalogs() {
        let _ = CATALOGS.set(catalogs);
    }
}

/// The tool the offer adds.
const GIFT_WRAP: &str = "catalog.gift_wrap";

/// The catalog event that turns the offer on or off (payload `{"enabled": bool}`).
pub(crate) const EVENT: &str = "catalog.seasonal";

/// The change the event makes of the catalog now: adds or removes `catalog.gift_wrap` as
/// asked (nothing when it is already as asked, or the payload asks nothing).
pub(crate) fn apply(catalogs: &Catalogs, payload: &JsonValue) -> Result<CatalogChange, BuildError> {
    let enabled = payload.get("enabled").and_then(JsonValue::as_bool);
    let offered = catalogs.tool_names().iter().any(|t| t == GIFT_WRAP);
    Ok(match (enabled, offered) {
        (Some(true), false) => CatalogChange::new().add_tool(gift_wrap_tool()?),
        (Some(false), true) => CatalogChange::new().remove_tool(GIFT_WRAP),
        _ => CatalogChange::new(),
    })
}

#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct Season {
    /// Whether gift wrapping is offered now.
    enabled: bool,
    /// The catalog's tools now, in list order.
    tools: Vec<String>,
}

/// Why the offer could not be changed (the catalog event's error, which never names the
/// payload).
#[derive(Debug)]
pub(crate) struct NotChanged(String);

impl std::fmt::Display for NotChanged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotChanged {}

/// Turns the seasonal offer on or off: adds or removes `catalog.gift_wrap`.
#[tool(
    name = "catalog.seasonal",
    title = "Seasonal offer",
    description = "Turns the seasonal gift wrapping offer (the catalog.gift_wrap tool) on or off",
    revisions = [V2026_07_28, V2025_11_25, V2025_06_18, V2025_03_26, V2024_11_05],
    idempotent,
    open_world = false
)]
async fn seasonal(
    #[arg(description = "Whether gift wrapping is offered")] enabled: bool,
) -> Result<Season, NotChanged> {
    let catalogs = CATALOGS
        .get()
        .ok_or_else(|| NotChanged("the catalog cannot change here".to_owned()))?;
    let payload: JsonValue = JsonObject::builder()
        .insert("enabled", enabled)
        .build()
        .into();
    // Applied here and (in a cluster) on every instance before this returns.
    catalogs
        .publish(EVENT, &payload)
        .await
        .map_err(|e| NotChanged(e.to_string()))?;
    let tools = catalogs.tool_names();
    Ok(Season {
        enabled: tools.iter().any(|t| t == GIFT_WRAP),
        tools,
    })
}

#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct Wrapped {
    sku: String,
    /// The gift card's text.
    card: String,
    /// What the wrapping adds to the price.
    price_cents: u32,
}

/// Gift-wraps one item, with a card.
#[tool(
    name = "catalog.gift_wrap",
    title = "Gift wrap",
    description = "Gift-wraps an item with a card (a seasonal offer)",
    revisions = [V2026_07_28, V2025_11_25, V2025_06_18, V2025_03_26, V2024_11_05],
    idempotent,
    open_world = false
)]
async fn gift_wrap(
    #[arg(description = "The item's SKU")] sku: String,
    #[arg(description = "The card's text (default: Season's greetings)")] card: Option<String>,
) -> Result<Wrapped, std::convert::Infallible> {
    Ok(Wrapped {
        sku,
        card: card.unwrap_or_else(|| "Season's greetings".to_owned()),
        price_cents: 350,
    })
}

/// `catalog.seasonal`, for the endpoint's builder.
pub(crate) fn offer_tool() -> Result<ToolRegistration, tollgate::BuildError> {
    seasonal_tool()
}
