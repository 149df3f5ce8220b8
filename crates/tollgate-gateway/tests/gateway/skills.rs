//! An upstream's skills through the gateway: a Tollgate upstream serving skills on 2026-07-28
//! (a skill with a nested one and a binary file, one whose file URI fits only without a prefix,
//! one whose read an interceptor tampers with), listed, loaded and read through the gateway with
//! and without a prefix, each file verified by the client against the digests the gateway
//! serves; the refused ones reported with their reason and never their content; two upstreams'
//! roots clashing refused at start-up; a change followed live; an upstream without skills
//! unaffected.

use std::net::SocketAddr;
use std::time::Duration;

use tollgate::content::ResourceContents;
use tollgate::context::{HandlerFailure, HandlerOutput, Intercepted};
use tollgate::endpoint::{CatalogChange, Catalogs};
use tollgate::json::{JsonObject, JsonValue};
use tollgate::resource::ResourceOutput;
use tollgate::skill::SkillRegistration;
use tollgate::tool::{CompleteResult, OperationResult};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, RequestContext, ToolArguments, ToolRegistration,
};
use tollgate_client::Client;
use tollgate_gateway::{Gateway, GatewayErrorKind, Kind, RefusalReason};

use crate::upstream::{ONE_TOOL, Upstream, V26, config, followed_client, gateway_client};

const LOGO: &[u8] = &[0x89, b'P', b'N', b'G', 0, 1, 2, 255];

fn skill_md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n")
}

/// `acme/pdf` (a reference, a binary asset and the nested skill `forms`).
fn pdf(under: &str, forms: &str) -> SkillRegistration {
    SkillRegistration::builder("pdf")
        .under(under)
        .file("SKILL.md", skill_md("pdf", "Fill PDF forms."))
        .file("references/FORMS.md", forms.to_owned())
        .file("assets/logo.png", LOGO)
        .file("forms/SKILL.md", skill_md("forms", "The forms themselves."))
        .build()
        .unwrap()
}

/// The skill `name` under `acme` whose one other file's URI is `bytes` long upstream (a prefix
/// `up` adds 3: `skill://up/acme/...`).
fn long_named(name: &str, bytes: usize) -> SkillRegistration {
    let root = format!("skill://acme/{name}/");
    let file = format!("{}.md", "x".repeat(bytes - root.len() - ".md".len()));
    let skill = SkillRegistration::builder(name)
        .under("acme")
        .file("SKILL.md", skill_md(name, "A long file name."))
        .file(file, "long")
        .build()
        .unwrap();
    assert_eq!(skill.root_uri().len() + 1, root.len());
    skill
}

/// `long`: 2,046 bytes upstream, one past the 2,048-byte limit under the prefix `up`.
fn long() -> SkillRegistration {
    long_named("long", 2_046)
}

/// `edge`: 2,045 bytes upstream, exactly at the limit under the prefix `up`.
fn edge() -> SkillRegistration {
    long_named("edge", 2_045)
}

/// A skill whose `notes.md` the upstream's interceptor answers with other bytes than it lists.
fn tampered() -> SkillRegistration {
    SkillRegistration::builder("tampered")
        .under("acme")
        .file("SKILL.md", skill_md("tampered", "Read back otherwise."))
        .file("notes.md", "the listed notes")
        .build()
        .unwrap()
}

async fn tamper(call: Intercepted<'_>) -> Result<HandlerOutput, HandlerFailure> {
    let uri = call.context().operation_name().unwrap_or("").to_owned();
    if uri.ends_with("/tampered/notes.md") {
        let contents = ResourceContents::text(&uri, Some("text/markdown"), "TAMPERED-BYTES");
        let output = ResourceOutput::with_contents(contents.unwrap());
        return Ok(HandlerOutput::Resource(output.into()));
    }
    call.proceed().await
}

async fn done(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, std::convert::Infallible> {
    Ok(CompleteResult::from_tool_structured_content(JsonObject::new()).into())
}

/// A Tollgate upstream on 2026-07-28 with live catalogs, the tool `tool` and `skills`.
async fn skill_upstream(tool: &str, skills: Vec<SkillRegistration>) -> (SocketAddr, Catalogs) {
    let tool = ToolRegistration::with_name(tool, [V26])
        .json_object_arguments()
        .handler(done)
        .build()
        .unwrap();
    let builder = Endpoint::with_path("/mcp", [V26], Implementation::new("skills", "1"))
        .live_catalogs()
        .interceptor(tamper)
        .add_tool(tool);
    let endpoint = skills
        .into_iter()
        .fold(builder, |b, s| b.add_skill(s))
        .build()
        .unwrap();
    let catalogs = endpoint.catalogs().unwrap();
    let addr = crate::asks::serve(endpoint).await;
    (addr, catalogs)
}

fn uris(listed: &[JsonValue]) -> Vec<String> {
    let mut uris: Vec<String> = listed
        .iter()
        .filter_map(|e| e.get("uri").and_then(JsonValue::as_str).map(str::to_owned))
        .collect();
    uris.sort();
    uris
}

/// Every file of every listed skill read and verified against its entry, as a host does (the
/// binary one read as bytes); the count of each entry's files beside its `SKILL.md`.
async fn load_all(client: &Client) -> usize {
    let mut files = 0;
    for entry in client.list_skills().await.unwrap() {
        let loaded = client.load_skill(&entry).await.unwrap();
        for other in loaded.other_files() {
            if !other.ends_with(".png") {
                client.read_skill_file(&entry, other).await.unwrap();
            }
            files += 1;
        }
    }
    files
}

async fn text(client: &Client, uri: &str) -> String {
    let read = client.read_resource(uri).await.unwrap();
    let output = ResourceOutput::from_wire(read.as_object().unwrap()).unwrap();
    match &output.contents()[0] {
        ResourceContents::Text { text, .. } => text.to_string(),
        other => panic!("not text: {other:?}"),
    }
}

async fn blob(client: &Client, uri: &str) -> Vec<u8> {
    let read = client.read_resource(uri).await.unwrap();
    let output = ResourceOutput::from_wire(read.as_object().unwrap()).unwrap();
    match &output.contents()[0] {
        ResourceContents::Blob { data, .. } => data.to_vec(),
        other => panic!("not a blob: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_are_served_under_the_prefix_and_the_refused_ones_reported() {
    let (addr, _catalogs) = skill_upstream(
        "first",
        vec![pdf("acme", "# Forms\n"), long(), edge(), tampered()],
    )
    .await;
    let gateway = Gateway::connect(&config(&[("docs", addr, Some("up"))]), &[V26])
        .await
        .unwrap();
    // `edge`'s file URI is 2,048 bytes served: at the limit, served; `long`'s one past it.
    let roots: Vec<&str> = gateway.skills().iter().map(|s| s.root_uri()).collect();
    assert_eq!(roots, ["skill://up/acme/pdf", "skill://up/acme/edge"]);
    let mut refused: Vec<(String, RefusalReason)> = gateway
        .refusals()
        .iter()
        .filter(|r| r.kind() == Kind::Skill)
        .map(|r| (r.name().to_owned(), r.reason()))
        .collect();
    refused.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        refused,
        [
            (
                "skill://acme/long/SKILL.md".to_owned(),
                RefusalReason::SkillCheck
            ),
            (
                "skill://acme/tampered/SKILL.md".to_owned(),
                RefusalReason::SkillContent
            ),
        ]
    );
    for refusal in gateway.refusals() {
        let text = refusal.to_string();
        assert!(
            !text.contains("TAMPERED") && !text.contains("listed notes"),
            "{text}"
        );
    }
    let client = gateway_client(&gateway).await;
    let listed = client.list_skills().await.unwrap();
    assert_eq!(
        uris(&listed),
        [
            "skill://up/acme/edge/SKILL.md",
            "skill://up/acme/pdf/SKILL.md",
            "skill://up/acme/pdf/forms/SKILL.md"
        ]
    );
    // Verified by the client against the digests the gateway publishes: the upstream's bytes
    // (`edge`'s file read at its 2,048-byte URI).
    assert_eq!(load_all(&client).await, 4);
    assert_eq!(
        blob(&client, "skill://up/acme/pdf/assets/logo.png").await,
        LOGO
    );
    // The upstream's SKILL.md resources are served as the skills' files, not as resources.
    let resources = uris(&client.list_resources().await.unwrap());
    assert_eq!(
        resources,
        [
            "skill://up/acme/edge/SKILL.md",
            "skill://up/acme/pdf/SKILL.md",
            "skill://up/acme/pdf/forms/SKILL.md"
        ]
    );
    client.close().await.unwrap();
    gateway.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_prefix_skills_keep_their_uris_and_a_clash_refuses_start_up() {
    let (addr, _catalogs) = skill_upstream("first", vec![pdf("acme", "# Forms\n"), long()]).await;
    let gateway = Gateway::connect(&config(&[("docs", addr, None)]), &[V26])
        .await
        .unwrap();
    // Without the prefix the long URI is within the limit.
    assert!(gateway.refusals().is_empty(), "{:?}", gateway.refusals());
    let client = gateway_client(&gateway).await;
    assert_eq!(
        uris(&client.list_skills().await.unwrap()),
        [
            "skill://acme/long/SKILL.md",
            "skill://acme/pdf/SKILL.md",
            "skill://acme/pdf/forms/SKILL.md"
        ]
    );
    assert_eq!(load_all(&client).await, 4);
    assert_eq!(
        blob(&client, "skill://acme/pdf/assets/logo.png").await,
        LOGO
    );
    client.close().await.unwrap();
    gateway.close().await;

    // Another upstream at the same root, or one around it, without a prefix: refused.
    let (same, _c1) = skill_upstream("second", vec![pdf("acme", "# Other\n")]).await;
    let around = SkillRegistration::builder("acme")
        .file("SKILL.md", skill_md("acme", "Everything of acme."))
        .build()
        .unwrap();
    let (outer, _c2) = skill_upstream("third", vec![around]).await;
    for other in [same, outer] {
        let clash = Gateway::connect(&config(&[("a", addr, None), ("b", other, None)]), &[V26])
            .await
            .unwrap_err();
        assert_eq!(clash.kind(), GatewayErrorKind::NameClash);
    }
    // Under prefixes, two skills named pdf are served side by side (tools get the prefix too).
    let both = Gateway::connect(
        &config(&[("a", addr, Some("a")), ("b", same, Some("b"))]),
        &[V26],
    )
    .await
    .unwrap();
    let roots: Vec<&str> = both.skills().iter().map(|s| s.root_uri()).collect();
    // The prefix `a` adds 2 bytes: `long`'s file URI is then exactly 2,048 bytes, served.
    assert_eq!(
        roots,
        [
            "skill://a/acme/pdf",
            "skill://a/acme/long",
            "skill://b/acme/pdf"
        ]
    );
    assert!(both.refusals().is_empty(), "{:?}", both.refusals());
    both.close().await;
}

async fn wait_for(client: &Client, want: &[&str]) -> Vec<String> {
    let mut seen = Vec::new();
    for _ in 0..100 {
        seen = uris(&client.list_skills().await.unwrap_or_default());
        if seen == want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_s_skill_changes_are_followed_live() {
    let (a, catalogs_a) = skill_upstream("first", vec![pdf("acme", "# Forms\n")]).await;
    let (b, _catalogs_b) = skill_upstream("first", vec![pdf("acme", "# Forms\n")]).await;
    let gateway = Gateway::connect(&config(&[("a", a, Some("a")), ("b", b, Some("b"))]), &[V26])
        .await
        .unwrap();
    let client = followed_client(&gateway, [V26]).await;
    // Added upstream (announced as a resources list change): served, and its files verified.
    let added = SkillRegistration::builder("new")
        .file("SKILL.md", skill_md("new", "Added later."))
        .build()
        .unwrap();
    catalogs_a
        .apply(CatalogChange::new().add_skill(added))
        .unwrap();
    let all = [
        "skill://a/acme/pdf/SKILL.md",
        "skill://a/acme/pdf/forms/SKILL.md",
        "skill://a/new/SKILL.md",
        "skill://b/acme/pdf/SKILL.md",
        "skill://b/acme/pdf/forms/SKILL.md",
    ];
    assert_eq!(wait_for(&client, &all).await, all);
    assert_eq!(load_all(&client).await, 6);
    // Replaced upstream: the gateway serves the new bytes (and digests), the other upstream's
    // skill of the same name untouched.
    catalogs_a
        .apply(CatalogChange::new().replace_skill(pdf("acme", "# Forms, second edition\n")))
        .unwrap();
    let mut replaced = false;
    for _ in 0..100 {
        let text = text(&client, "skill://a/acme/pdf/references/FORMS.md").await;
        if text.contains("second edition") {
            replaced = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(replaced, "the upstream's replaced skill was not followed");
    let other = text(&client, "skill://b/acme/pdf/references/FORMS.md").await;
    assert_eq!(other, "# Forms\n");
    assert_eq!(load_all(&client).await, 6);
    // Removed upstream: gone from the gateway, the other upstream's pdf kept.
    catalogs_a
        .apply(CatalogChange::new().remove_skill("new").remove_skill("pdf"))
        .unwrap();
    let left = [
        "skill://b/acme/pdf/SKILL.md",
        "skill://b/acme/pdf/forms/SKILL.md",
    ];
    assert_eq!(wait_for(&client, &left).await, left);
    client.close().await.unwrap();
    gateway.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_without_skills_adds_none() {
    let upstream = Upstream::default();
    *upstream.tools.lock().unwrap() = ONE_TOOL.to_owned();
    let addr = upstream.start().await;
    let gateway = Gateway::connect(&config(&[("plain", addr, Some("up"))]), &[V26])
        .await
        .unwrap();
    assert!(gateway.skills().is_empty());
    assert!(gateway.refusals().is_empty());
    let client = gateway_client(&gateway).await;
    assert!(client.list_skills().await.is_err());
    assert_eq!(client.list_tools().await.unwrap().len(), 1);
    client.close().await.unwrap();
    gateway.close().await;
}
