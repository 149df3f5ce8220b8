//! Catalog events without a bus: an event applied through its handler at once, the payload
//! bound at and one past, an unknown name, a refused change leaving the catalog as it was, and
//! the build's checks of the settings.

#![allow(clippy::unwrap_used, reason = "tests")]

use std::convert::Infallible;

use tollgate_json::{JsonObject, JsonValue};

use super::*;
use crate::facts::context::RequestContext;
use crate::facts::error::BuildErrorKind;
use crate::model::features::InvocationFeatures;
use crate::model::result::{CompleteResult, OperationResult};
use crate::model::subscription::Event;
use crate::model::tool::{ToolArguments, ToolRegistration};
use crate::registry::{Endpoint, Implementation};
use crate::version::ProtocolVersion;

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;

async fn answer(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_text("ok").into())
}

fn tool(name: &str) -> Result<ToolRegistration, BuildError> {
    ToolRegistration::with_name(name, [V26])
        .json_object_arguments()
        .handler(answer)
        .build()
}

/// `offer` adds the tool its payload names, or (`false`) removes `extra`; `add` adds the named
/// tool whether or not it is there (a second add is refused as a duplicate).
fn builder() -> crate::endpoint::EndpointBuilder {
    Endpoint::with_path("/mcp", [V26], Implementation::new("events", "1"))
        .add_tool(tool("first").unwrap())
        .live_catalogs()
        .catalog_event("add", |_, payload| {
            let name = payload.as_str().unwrap_or("unnamed").to_owned();
            Ok(CatalogChange::new().add_tool(tool(&name)?))
        })
}

fn handle(endpoint: &Endpoint) -> Catalogs {
    endpoint.catalogs().unwrap()
}

#[tokio::test(start_paused = true)]
async fn an_event_is_applied_through_its_handler_and_announced() {
    let endpoint = builder().build().unwrap();
    let mut heard = endpoint.inner.listeners.events.subscribe();
    let catalogs = handle(&endpoint);
    let version = catalogs
        .publish("add", &JsonValue::from("second"))
        .await
        .unwrap();
    assert_eq!(version, 1);
    assert_eq!(catalogs.tool_names(), ["first", "second"]);
    assert_eq!(catalogs.sync().await.unwrap(), 1);
    tokio::time::sleep(crate::registry::live::LIST_CHANGED_WINDOW * 2).await;
    assert!(matches!(heard.try_recv(), Ok(Event::ListsChanged(_))));
}

#[tokio::test]
async fn a_refused_event_changes_nothing() {
    let endpoint = builder().build().unwrap();
    let catalogs = handle(&endpoint);
    let error = catalogs
        .publish("add", &JsonValue::from("first"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), CatalogEventErrorKind::Refused);
    assert_eq!(
        error.build_error_kind(),
        Some(BuildErrorKind::DuplicateToolName)
    );
    assert_eq!(catalogs.tool_names(), ["first"]);
    assert_eq!(catalogs.version(), 0);
    assert_eq!(catalogs.sync().await.unwrap(), 0);
    // The handler's own refusal (a bad tool name) is refused the same way.
    let error = catalogs
        .publish("add", &JsonValue::from("not a name!"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), CatalogEventErrorKind::Refused);
    assert_eq!(catalogs.tool_names(), ["first"]);
}

#[tokio::test]
async fn an_unknown_event_is_refused_without_its_name() {
    let endpoint = builder().build().unwrap();
    let error = handle(&endpoint)
        .publish("secret-name", &JsonValue::from("x"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), CatalogEventErrorKind::UnknownEvent);
    assert!(!error.to_string().contains("secret-name"));
}

#[tokio::test]
async fn the_payload_bound_holds_at_and_one_past() {
    // A JSON string's text is its characters and two quotes.
    let bound = 64;
    let endpoint = builder().max_catalog_event_bytes(bound).build().unwrap();
    let catalogs = handle(&endpoint);
    let at = "a".repeat(bound - 2);
    catalogs
        .publish("add", &JsonValue::from(at.as_str()))
        .await
        .unwrap();
    let past = "b".repeat(bound - 1);
    let error = catalogs
        .publish("add", &JsonValue::from(past.as_str()))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), CatalogEventErrorKind::TooLarge);
    assert!(!error.to_string().contains(&past));
    assert_eq!(catalogs.tool_names(), ["first", at.as_str()]);
    // The default bound, at and one past.
    let endpoint = builder().build().unwrap();
    let catalogs = handle(&endpoint);
    let at = JsonValue::from("c".repeat(MAX_CATALOG_EVENT_BYTES - 2).as_str());
    // Accepted as to size (the handler then refuses the long name).
    let error = catalogs.publish("add", &at).await.unwrap_err();
    assert_eq!(error.kind(), CatalogEventErrorKind::Refused);
    let past = JsonValue::from("c".repeat(MAX_CATALOG_EVENT_BYTES - 1).as_str());
    let error = catalogs.publish("add", &past).await.unwrap_err();
    assert_eq!(error.kind(), CatalogEventErrorKind::TooLarge);
}

#[test]
fn the_build_checks_the_settings() {
    let refused = |b: crate::endpoint::EndpointBuilder| b.build().unwrap_err().kind();
    let fixed = Endpoint::with_path("/mcp", [V26], Implementation::new("events", "1"))
        .catalog_event("add", |_, _| Ok(CatalogChange::new()));
    assert_eq!(refused(fixed), BuildErrorKind::InvalidConfiguration);
    assert_eq!(
        refused(builder().max_catalog_event_bytes(0)),
        BuildErrorKind::InvalidConfiguration
    );
    assert!(
        builder()
            .max_catalog_event_bytes(MAX_CATALOG_EVENT_BYTES_CEILING)
            .build()
            .is_ok()
    );
    assert_eq!(
        refused(builder().max_catalog_event_bytes(MAX_CATALOG_EVENT_BYTES_CEILING + 1)),
        BuildErrorKind::InvalidConfiguration
    );
}
