//! MCP Apps views on an endpoint: a tool's view must be registered, view URIs unique among the
//! resources, an endpoint serving no revision that carries views refused, a view's read at the
//! output limits and one past them (bytes and string units), both `tools/list` renderings made
//! only where a tool carries view metadata, and a live catalog adding and removing a view with
//! its tool.

#![allow(clippy::unwrap_used, reason = "tests")]

use std::convert::Infallible;

use tollgate_json::{JsonObject, OutputLimits, to_vec};

use crate::facts::context::RequestContext;
use crate::facts::error::BuildErrorKind;
use crate::model::app::{AppView, AppVisibility};
use crate::model::features::InvocationFeatures;
use crate::model::resource::{ResourceOutput, ResourceRegistration, ResourceRequest};
use crate::model::result::{CompleteResult, OperationResult};
use crate::model::tool::{ToolArguments, ToolRegistration};
use crate::registry::live::CatalogChange;
use crate::registry::{Endpoint, EndpointLimits, Implementation, revision_slot};
use crate::version::ProtocolVersion;

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;
const V0618: ProtocolVersion = ProtocolVersion::V2025_06_18;
const V0326: ProtocolVersion = ProtocolVersion::V2025_03_26;

async fn answer(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_text("ok").into())
}

async fn read(
    _: &RequestContext,
    request: ResourceRequest,
    _: &InvocationFeatures,
) -> Result<ResourceOutput, crate::facts::error::ContentError> {
    Ok(ResourceOutput::with_contents(
        crate::model::content::ResourceContents::text(request.uri(), None, "x")?,
    ))
}

fn tool(name: &str, view: Option<&str>) -> ToolRegistration {
    let builder = ToolRegistration::named(name)
        .json_object_arguments()
        .handler(answer);
    match view {
        Some(uri) => builder.app_view(uri).build().unwrap(),
        None => builder.build().unwrap(),
    }
}

fn view(uri: &str) -> AppView {
    AppView::html(uri, "<!doctype html><p>view</p>")
        .build()
        .unwrap()
}

fn endpoint(revisions: &[ProtocolVersion]) -> crate::registry::builder::EndpointBuilder {
    Endpoint::with_path(
        "/mcp",
        revisions.iter().copied().fold(
            crate::version::ProtocolVersions::empty(),
            crate::version::ProtocolVersions::with,
        ),
        Implementation::new("apps", "1"),
    )
}

#[test]
fn a_tool_naming_an_unregistered_view_is_refused() {
    let err = endpoint(&[V26])
        .add_tool(tool("show", Some("ui://t/missing")))
        .app_view(view("ui://t/other"))
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::UnknownAppView);
    assert_eq!(err.tool(), Some("show"));
    assert_eq!(err.resource_uri(), Some("ui://t/missing"));
    let ok = endpoint(&[V26])
        .add_tool(tool("show", Some("ui://t/v")))
        .app_view(view("ui://t/v"))
        .build();
    assert!(ok.is_ok());
}

#[test]
fn view_uris_are_unique_among_views_and_resources() {
    let err = endpoint(&[V26])
        .app_view(view("ui://t/v"))
        .app_view(view("ui://t/v"))
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::DuplicateResource);
    let resource = ResourceRegistration::with_uri("ui://t/v", "plain", [V26])
        .handler(read)
        .build()
        .unwrap();
    let err = endpoint(&[V26])
        .add_resource(resource)
        .app_view(view("ui://t/v"))
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::DuplicateResource);
    assert_eq!(err.resource_uri(), Some("ui://t/v"));
}

#[test]
fn views_need_a_revision_that_carries_them() {
    let err = endpoint(&[V0326])
        .app_view(view("ui://t/v"))
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::InvalidAppView);
    // Served on the revisions with `_meta` only; the endpoint's others list no view.
    let built = endpoint(&[V0618, V0326])
        .add_tool(tool("show", Some("ui://t/v")))
        .app_view(view("ui://t/v"))
        .build()
        .unwrap();
    let catalog = built.catalog();
    assert!(catalog.route_resource("ui://t/v", V0618).is_some());
    assert!(catalog.route_resource("ui://t/v", V0326).is_none());
    assert!(!catalog.app_tool_pages[revision_slot(V0618)].is_empty());
    assert!(catalog.app_tool_pages[revision_slot(V0326)].is_empty());
}

/// The bytes of a view's read result on 2026-07-28 with `html`, as the build checks it.
fn read_bytes(html: &str) -> usize {
    let view = AppView::html("ui://t/v", html).build().unwrap();
    let result = ResourceOutput::of_view(&view)
        .render_result(V26, crate::model::cache::CachePolicy::default())
        .unwrap();
    to_vec(&result.build().into(), &OutputLimits::default())
        .unwrap()
        .len()
}

#[test]
fn a_view_read_at_the_output_byte_limit_and_one_past() {
    let max = 64 * 1024;
    let limits = EndpointLimits::default()
        .output(OutputLimits::default().with_max_output_bytes(max).unwrap());
    let overhead = read_bytes("");
    let at = "a".repeat(max - overhead);
    assert_eq!(read_bytes(&at), max);
    let build = |html: &str| {
        endpoint(&[V26])
            .limits(limits.clone())
            .app_view(AppView::html("ui://t/v", html).build().unwrap())
            .build()
    };
    assert!(build(&at).is_ok());
    let err = build(&format!("{at}a")).unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::InvalidAppView);
    assert_eq!(
        err.detail(),
        Some("a view's read does not fit the output limits")
    );
}

#[test]
fn a_view_read_at_the_string_limit_and_one_past() {
    let units = OutputLimits::default().max_string_units();
    let build = |len: usize| {
        endpoint(&[V26, V1125])
            .app_view(AppView::html("ui://t/v", "a".repeat(len)).build().unwrap())
            .build()
    };
    assert!(build(units).is_ok());
    assert_eq!(
        build(units + 1).unwrap_err().kind(),
        BuildErrorKind::InvalidAppView
    );
}

#[test]
fn both_renderings_only_where_a_tool_carries_view_metadata() {
    let plain = endpoint(&[V26, V1125])
        .add_tool(tool("plain", None))
        .app_view(view("ui://t/v"))
        .build()
        .unwrap();
    assert!(plain.catalog().app_tool_pages.iter().all(Vec::is_empty));
    let app_only = ToolRegistration::named("reserve")
        .json_object_arguments()
        .handler(answer)
        .app_visibility(AppVisibility::App)
        .build()
        .unwrap();
    assert_eq!(app_only.app_view(), None);
    let apps = endpoint(&[V26, V1125])
        .add_tool(tool("plain", None))
        .add_tool(app_only)
        .build()
        .unwrap();
    let catalog = apps.catalog();
    for revision in [V26, V1125] {
        let slot = revision_slot(revision);
        let with = String::from_utf8(catalog.app_tool_pages[slot][0].clone()).unwrap();
        let without = String::from_utf8(catalog.tool_pages[slot][0].clone()).unwrap();
        assert!(
            with.contains(r#""_meta":{"ui":{"visibility":["app"]}}"#),
            "{with}"
        );
        assert!(!without.contains("\"ui\""), "{without}");
    }
}

#[test]
fn a_tool_with_view_metadata_cannot_set_its_own_meta_ui() {
    let meta = JsonObject::builder()
        .insert("ui", JsonObject::new())
        .build();
    let err = ToolRegistration::named("show")
        .json_object_arguments()
        .handler(answer)
        .meta(meta.clone())
        .app_view("ui://t/v")
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::InvalidConfiguration);
    // Without view metadata, an application's own `_meta.ui` is its own.
    let own = ToolRegistration::named("show")
        .json_object_arguments()
        .handler(answer)
        .meta(meta)
        .build();
    assert!(own.is_ok());
    let bad = ToolRegistration::named("show")
        .json_object_arguments()
        .handler(answer)
        .app_view("https://example.com/view")
        .build()
        .unwrap_err();
    assert_eq!(bad.kind(), BuildErrorKind::InvalidAppView);
    assert_eq!(bad.tool(), Some("show"));
}

#[test]
fn a_live_catalog_adds_and_removes_a_view_with_its_tool() {
    let built = endpoint(&[V26])
        .add_tool(tool("plain", None))
        .live_catalogs()
        .build()
        .unwrap();
    let catalogs = built.catalogs().unwrap();
    // A tool naming a view the change does not bring is refused, and nothing is published.
    let err = catalogs
        .apply(CatalogChange::new().add_tool(tool("show", Some("ui://t/v"))))
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::UnknownAppView);
    assert!(built.catalog().route_resource("ui://t/v", V26).is_none());
    catalogs
        .apply(
            CatalogChange::new()
                .add_tool(tool("show", Some("ui://t/v")))
                .add_app_view(view("ui://t/v")),
        )
        .unwrap();
    assert!(built.catalog().route_resource("ui://t/v", V26).is_some());
    assert!(!built.catalog().app_tool_pages[revision_slot(V26)].is_empty());
    // The view cannot go while its tool names it.
    let err = catalogs
        .apply(CatalogChange::new().remove_app_view("ui://t/v"))
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::UnknownAppView);
    let replaced = AppView::html("ui://t/v", "<p>new</p>").build().unwrap();
    catalogs
        .apply(CatalogChange::new().replace_app_view(replaced))
        .unwrap();
    catalogs
        .apply(
            CatalogChange::new()
                .remove_tool("show")
                .remove_app_view("ui://t/v"),
        )
        .unwrap();
    assert!(built.catalog().route_resource("ui://t/v", V26).is_none());
    assert!(built.catalog().app_tool_pages.iter().all(Vec::is_empty));
    let err = catalogs
        .apply(CatalogChange::new().remove_app_view("ui://t/v"))
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::UnknownRegistration);
}
