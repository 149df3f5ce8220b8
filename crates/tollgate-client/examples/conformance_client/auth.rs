//! The `auth/*` scenarios: the OAuth client's part, built on the `oauth` module by the OAuth
//! work. Until it lands this is the one placeholder of the conformance client: every auth
//! scenario ends with the error below, and scripts/conformance-client lists them as known
//! failures.

use tollgate_client::json::JsonValue;

/// Runs one `auth/*` scenario against `url` with the suite's context.
pub(crate) async fn run(
    url: &str,
    scenario: &str,
    context: Option<&JsonValue>,
) -> Result<(), Box<dyn std::error::Error>> {
    let _ = (url, scenario, context);
    Err("the OAuth client is not built yet".into())
}
