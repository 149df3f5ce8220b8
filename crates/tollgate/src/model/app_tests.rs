//! The view declaration rules at their bounds and one past them, and the `_meta.ui` shapes.
#![allow(clippy::unwrap_used, reason = "tests")]

use tollgate_json::{JsonLimits, JsonObject, JsonValue, from_str, to_string};

use super::{
    AppCsp, AppPermissions, AppView, AppVisibility, MAX_APP_CSP_DOMAINS, MAX_APP_HOST_BYTES,
    MAX_APP_VIEW_URI_BYTES, ToolApp, client_renders_views,
};
use crate::facts::context::ClientCapabilities;
use crate::facts::error::BuildErrorKind;

fn refused(builder: super::AppViewBuilder) -> BuildErrorKind {
    builder.build().err().map(|e| e.kind()).unwrap()
}

fn with_csp(csp: AppCsp) -> Result<AppView, crate::BuildError> {
    AppView::html("ui://t/v", "<p>").csp(csp).build()
}

#[test]
fn uri_is_ui_scheme_and_a_name_within_the_bound() {
    let at = format!("ui://{}", "a".repeat(MAX_APP_VIEW_URI_BYTES - 5));
    assert_eq!(at.len(), MAX_APP_VIEW_URI_BYTES);
    assert_eq!(AppView::html(at.as_str(), "<p>").build().unwrap().uri(), at);
    let past = format!("{at}a");
    assert_eq!(
        refused(AppView::html(past, "<p>")),
        BuildErrorKind::InvalidAppView
    );
    for bad in [
        "ui://",
        "ui:/x",
        "UI://x",
        "https://example.com/x",
        "ui://a b",
        "ui://a\tb",
        "ui://{id}",
        "",
    ] {
        let err = AppView::html(bad, "<p>").build().unwrap_err();
        assert_eq!(err.kind(), BuildErrorKind::InvalidAppView, "{bad:?}");
        assert!(err.detail().is_some(), "{bad:?}");
    }
    assert!(
        AppView::html("ui://shop/products?v=2", "<p>")
            .build()
            .is_ok()
    );
}

#[test]
fn name_defaults_to_the_uri_and_is_bounded() {
    let view = AppView::html("ui://t/v", "<p>").build().unwrap();
    assert_eq!(view.name(), "ui://t/v");
    let at = "n".repeat(1024);
    assert!(
        AppView::html("ui://t/v", "<p>")
            .name(at.as_str())
            .build()
            .is_ok()
    );
    let past = AppView::html("ui://t/v", "<p>").name(format!("{at}n"));
    assert_eq!(refused(past), BuildErrorKind::InvalidAppView);
    let empty = AppView::html("ui://t/v", "<p>").name("");
    assert_eq!(refused(empty), BuildErrorKind::InvalidAppView);
}

#[test]
fn csp_entries_are_origins_or_the_wildcard_subdomain_form() {
    for good in [
        "https://api.example.com",
        "http://localhost:3000",
        "http://127.0.0.1:8080",
        "wss://live.example.com:8443",
        "ws://[::1]:9000",
        "https://*.example.com",
        "https://*.cdn.example.com:443",
        "https://example.com:65535",
    ] {
        assert!(
            with_csp(AppCsp::new().connect_domain(good)).is_ok(),
            "{good}"
        );
        assert!(
            with_csp(AppCsp::new().resource_domain(good)).is_ok(),
            "{good}"
        );
        assert!(with_csp(AppCsp::new().frame_domain(good)).is_ok(), "{good}");
        assert!(
            with_csp(AppCsp::new().base_uri_domain(good)).is_ok(),
            "{good}"
        );
    }
    for bad in [
        "example.com",
        "https://",
        "https://example.com/",
        "https://example.com/path",
        "https://example.com?q",
        "https://example.com#f",
        "https://user@example.com",
        "https://Example.com",
        "ftp://example.com",
        "data:",
        "*",
        "https://*",
        "https://*.com",
        "https://a.*.example.com",
        "https://*.[::1]",
        "https://-a.example.com",
        "https://a-.example.com",
        "https://a..example.com",
        "https://example.com:0",
        "https://example.com:65536",
        "https://example.com:",
        "https://example.com:123456",
        "https://[::1",
        "https://[]",
        "'self'",
        "https://exa mple.com",
    ] {
        for csp in [
            AppCsp::new().connect_domain(bad),
            AppCsp::new().resource_domain(bad),
            AppCsp::new().frame_domain(bad),
            AppCsp::new().base_uri_domain(bad),
        ] {
            let err = with_csp(csp).unwrap_err();
            assert_eq!(err.kind(), BuildErrorKind::InvalidAppView, "{bad}");
        }
    }
}

#[test]
fn csp_host_names_at_the_bound_and_one_past() {
    let label = "a".repeat(63);
    assert!(with_csp(AppCsp::new().connect_domain(format!("https://{label}.com"))).is_ok());
    let long_label = format!("https://{label}a.com");
    assert!(with_csp(AppCsp::new().connect_domain(long_label)).is_err());
    let host = format!("{label}.{label}.{label}.{}", "a".repeat(61));
    assert_eq!(host.len(), MAX_APP_HOST_BYTES);
    assert!(with_csp(AppCsp::new().connect_domain(format!("https://{host}"))).is_ok());
    assert!(with_csp(AppCsp::new().resource_domain(format!("https://*.{host}"))).is_ok());
    let past = format!("{label}.{label}.{label}.{}", "a".repeat(62));
    assert!(with_csp(AppCsp::new().connect_domain(format!("https://{past}"))).is_err());
}

#[test]
fn each_csp_list_at_the_bound_and_one_past() {
    type Add = fn(AppCsp, String) -> AppCsp;
    let adders: [Add; 4] = [
        |c, o| c.connect_domain(o),
        |c, o| c.resource_domain(o),
        |c, o| c.frame_domain(o),
        |c, o| c.base_uri_domain(o),
    ];
    for add in adders {
        let mut csp = AppCsp::new();
        for i in 0..MAX_APP_CSP_DOMAINS {
            csp = add(csp, format!("https://h{i}.example.com"));
        }
        assert!(with_csp(csp.clone()).is_ok());
        let past = add(csp, "https://past.example.com".to_owned());
        assert_eq!(
            with_csp(past).unwrap_err().kind(),
            BuildErrorKind::InvalidAppView
        );
    }
}

#[test]
fn domain_is_a_host_name_or_an_https_origin() {
    for good in [
        "a904794854a047f6.claudemcpcontent.com",
        "www-example-com.oaiusercontent.com",
        "https://widgets.example.com",
    ] {
        assert!(
            AppView::html("ui://t/v", "<p>")
                .domain(good)
                .build()
                .is_ok(),
            "{good}"
        );
    }
    let label = "a".repeat(63);
    let at = format!("{label}.{label}.{label}.{}", "b".repeat(61));
    assert_eq!(at.len(), MAX_APP_HOST_BYTES);
    assert!(
        AppView::html("ui://t/v", "<p>")
            .domain(at.as_str())
            .build()
            .is_ok()
    );
    let past = format!("{at}b");
    assert!(
        AppView::html("ui://t/v", "<p>")
            .domain(past)
            .build()
            .is_err()
    );
    for bad in [
        "",
        "http://widgets.example.com",
        "Widgets.example.com",
        "a b",
        "https://x/",
    ] {
        let built = AppView::html("ui://t/v", "<p>").domain(bad).build();
        assert_eq!(
            built.unwrap_err().kind(),
            BuildErrorKind::InvalidAppView,
            "{bad}"
        );
    }
}

fn meta_text(view: &AppView) -> Option<String> {
    view.inner
        .meta
        .as_ref()
        .map(|m| to_string(&JsonValue::from(m.clone()), &Default::default()).unwrap())
}

#[test]
fn the_resource_meta_renders_what_is_declared_and_nothing_else() {
    let bare = AppView::html("ui://t/v", "<p>").build().unwrap();
    assert_eq!(meta_text(&bare), None);
    let full = AppView::html("ui://t/v", "<p>")
        .csp(
            AppCsp::new()
                .connect_domain("https://api.example.com")
                .resource_domain("https://*.cdn.example.com")
                .frame_domain("https://player.example.com")
                .base_uri_domain("https://base.example.com"),
        )
        .permissions(
            AppPermissions::new()
                .camera()
                .microphone()
                .geolocation()
                .clipboard_write(),
        )
        .domain("views.example.com")
        .prefers_border(false)
        .build()
        .unwrap();
    assert_eq!(
        meta_text(&full).unwrap(),
        concat!(
            r#"{"ui":{"csp":{"connectDomains":["https://api.example.com"],"#,
            r#""resourceDomains":["https://*.cdn.example.com"],"#,
            r#""frameDomains":["https://player.example.com"],"#,
            r#""baseUriDomains":["https://base.example.com"]},"#,
            r#""permissions":{"camera":{},"microphone":{},"geolocation":{},"clipboardWrite":{}},"#,
            r#""domain":"views.example.com","prefersBorder":false}}"#
        )
    );
    let some = AppView::html("ui://t/v", "<p>")
        .csp(AppCsp::new().resource_domain("https://cdn.example.com"))
        .permissions(AppPermissions::new().clipboard_write())
        .build()
        .unwrap();
    assert_eq!(
        meta_text(&some).unwrap(),
        r#"{"ui":{"csp":{"resourceDomains":["https://cdn.example.com"]},"permissions":{"clipboardWrite":{}}}}"#
    );
}

#[test]
fn a_tool_renders_its_view_and_visibility() {
    let render =
        |app: ToolApp| to_string(&JsonValue::from(app.render()), &Default::default()).unwrap();
    let view = Some("ui://t/v".into());
    for (visibility, list) in [
        (AppVisibility::Model, r#"["model"]"#),
        (AppVisibility::App, r#"["app"]"#),
        (AppVisibility::ModelAndApp, r#"["model","app"]"#),
    ] {
        let app = ToolApp {
            view: view.clone(),
            visibility,
        };
        assert_eq!(
            render(app),
            format!(r#"{{"resourceUri":"ui://t/v","visibility":{list}}}"#)
        );
    }
    let app_only = ToolApp {
        view: None,
        visibility: AppVisibility::App,
    };
    assert_eq!(render(app_only), r#"{"visibility":["app"]}"#);
}

fn caps(json: &str) -> ClientCapabilities {
    let value = from_str(json, &JsonLimits::default()).unwrap();
    ClientCapabilities::from_json(value.as_object().cloned().unwrap_or_else(JsonObject::new))
}

#[test]
fn a_client_renders_views_only_when_it_names_the_html_profile() {
    assert!(client_renders_views(&caps(
        r#"{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/plain","text/html;profile=mcp-app"]}}}"#
    )));
    for without in [
        r#"{}"#,
        r#"{"extensions":{}}"#,
        r#"{"extensions":{"io.modelcontextprotocol/ui":{}}}"#,
        r#"{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":[]}}}"#,
        r#"{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":"text/html;profile=mcp-app"}}}"#,
        r#"{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html"]}}}"#,
        r#"{"extensions":{"io.modelcontextprotocol/ui":true}}"#,
        r#"{"experimental":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}"#,
    ] {
        assert!(!client_renders_views(&caps(without)), "{without}");
    }
}
