//! Live catalogs from the inside: a burst announced once, a change undone within the window not
//! at all, a skill's change announced as the resources list's (on 2026-07-28 only), a refused
//! change publishing nothing, and concurrent changes ending where their serial application ends.

#![allow(clippy::unwrap_used, reason = "tests")]

use std::convert::Infallible;
use std::sync::Arc;

use proptest::prelude::*;
use tokio::sync::broadcast::error::TryRecvError;
use tollgate_json::JsonObject;

use super::*;
use crate::facts::context::RequestContext;
use crate::model::features::InvocationFeatures;
use crate::model::result::{CompleteResult, OperationResult};
use crate::model::tool::ToolArguments;
use crate::registry::{Endpoint, Implementation};
use crate::version::ProtocolVersion;

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;

async fn answer(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_text("ok").into())
}

fn tool(name: &str, description: &str) -> ToolRegistration {
    ToolRegistration::with_name(name, [V26, V1125])
        .json_object_arguments()
        .handler(answer)
        .description(description)
        .build()
        .unwrap()
}

fn endpoint() -> (Endpoint, Catalogs) {
    let endpoint = Endpoint::with_path("/mcp", [V26, V1125], Implementation::new("live", "1"))
        .add_tool(tool("first", "the first"))
        .live_catalogs()
        .build()
        .unwrap();
    let catalogs = endpoint.catalogs().unwrap();
    (endpoint, catalogs)
}

fn announced(events: &mut tokio::sync::broadcast::Receiver<Event>) -> Vec<u16> {
    let mut lists = Vec::new();
    loop {
        match events.try_recv() {
            Ok(Event::ListsChanged(bits)) => lists.push(bits),
            Ok(_) => {}
            Err(TryRecvError::Empty | TryRecvError::Closed) => return lists,
            Err(TryRecvError::Lagged(_)) => {}
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_burst_is_announced_once_and_a_change_undone_in_the_window_not_at_all() {
    let (endpoint, catalogs) = endpoint();
    let mut events = endpoint.inner.listeners.events.subscribe();
    for n in 0..50 {
        catalogs.add_tool(tool(&format!("t{n}"), "burst")).unwrap();
        catalogs.remove_tool(&format!("t{n}")).unwrap();
    }
    catalogs.add_tool(tool("kept", "stays")).unwrap();
    assert_eq!(catalogs.version(), 101);
    assert!(announced(&mut events).is_empty(), "held for the window");
    tokio::time::sleep(LIST_CHANGED_WINDOW).await;
    tokio::task::yield_now().await;
    let tools = list_bit(V26, ListKind::Tools) | list_bit(V1125, ListKind::Tools);
    assert_eq!(announced(&mut events), [tools], "once, for the tools lists");
    // Added and removed within one window: the lists end where they started.
    catalogs.add_tool(tool("brief", "gone soon")).unwrap();
    catalogs.remove_tool("brief").unwrap();
    tokio::time::sleep(LIST_CHANGED_WINDOW * 2).await;
    tokio::task::yield_now().await;
    assert!(announced(&mut events).is_empty());
    // Replaced with a new description: the list changed, on both revisions.
    catalogs.replace_tool(tool("kept", "changed")).unwrap();
    tokio::time::sleep(LIST_CHANGED_WINDOW).await;
    tokio::task::yield_now().await;
    assert_eq!(announced(&mut events), [tools]);
}

#[test]
fn a_skill_change_is_a_resources_list_change_on_2026_only() {
    let (endpoint, catalogs) = endpoint();
    let before = endpoint.catalog().tool_pages.clone();
    let md = "---\nname: pdf\ndescription: Fill PDF forms.\n---\n# PDF\n";
    let skill = SkillRegistration::builder("pdf")
        .file("SKILL.md", md)
        .build()
        .unwrap();
    let Some(live) = &endpoint.inner.live else {
        unreachable!("built live")
    };
    let old = live.current();
    catalogs
        .apply(CatalogChange::new().add_skill(skill))
        .unwrap();
    let new = live.current();
    assert_eq!(differences(&old, &new), list_bit(V26, ListKind::Resources));
    assert_eq!(new.tool_pages, before);
    assert!(endpoint.offers_skills(V26));
    catalogs
        .apply(CatalogChange::new().remove_skill("pdf"))
        .unwrap();
    assert!(!endpoint.offers_skills(V26));
}

#[test]
fn two_skills_of_one_name_are_told_apart_by_their_root() {
    let (endpoint, catalogs) = endpoint();
    let md = "---\nname: pdf\ndescription: Fill PDF forms.\n---\n# PDF\n";
    let under = |prefix: &str, body: &str| {
        SkillRegistration::builder("pdf")
            .under(prefix)
            .file("SKILL.md", md)
            .file("notes.md", body.to_owned())
            .build()
            .unwrap()
    };
    catalogs
        .apply(
            CatalogChange::new()
                .add_skill(under("a", "one"))
                .add_skill(under("b", "one")),
        )
        .unwrap();
    let Some(live) = &endpoint.inner.live else {
        unreachable!("built live")
    };
    let roots = || -> Vec<String> {
        let current = live.current();
        current
            .skill_registrations
            .iter()
            .map(|s| s.root_uri().to_owned())
            .collect()
    };
    // Replaced at its own root, not the first of its name.
    catalogs
        .apply(CatalogChange::new().replace_skill(under("b", "two")))
        .unwrap();
    let current = live.current();
    let files = |i: usize| current.skill_registrations[i].inner.files.len();
    assert_eq!((files(0), files(1)), (2, 2));
    assert!(matches!(
        &current.skill_registrations[1].inner.files[1].body,
        crate::model::skill::Body::Text(t) if &**t == "two"
    ));
    assert!(matches!(
        &current.skill_registrations[0].inner.files[1].body,
        crate::model::skill::Body::Text(t) if &**t == "one"
    ));
    // Removed by its root: the other of the same name stays.
    catalogs
        .apply(CatalogChange::new().remove_skill("skill://b/pdf"))
        .unwrap();
    assert_eq!(roots(), ["skill://a/pdf"]);
    let unknown = catalogs.apply(CatalogChange::new().remove_skill("skill://c/pdf"));
    assert!(unknown.is_err());
    assert_eq!(roots(), ["skill://a/pdf"]);
}

#[test]
fn a_refused_change_publishes_nothing() {
    let (endpoint, catalogs) = endpoint();
    let Some(live) = &endpoint.inner.live else {
        unreachable!("built live")
    };
    let before = live.current();
    let mut events = endpoint.inner.listeners.events.subscribe();
    let refusals = [
        CatalogChange::new()
            .add_tool(tool("fine", "ok"))
            .add_tool(tool("first", "again")),
        CatalogChange::new().remove_tool("missing"),
        CatalogChange::new().replace_tool(tool("missing", "x")),
        // Outside the endpoint's revisions.
        CatalogChange::new().add_tool(
            ToolRegistration::with_name("old", [ProtocolVersion::V2025_06_18])
                .json_object_arguments()
                .handler(answer)
                .build()
                .unwrap(),
        ),
    ];
    for change in refusals {
        assert!(catalogs.apply(change).is_err());
        assert!(Arc::ptr_eq(&before, &live.current()), "nothing published");
    }
    assert_eq!(catalogs.version(), 0);
    assert_eq!(catalogs.tool_names(), ["first"]);
    assert!(announced(&mut events).is_empty());
}

/// One change of a property run: add, replace (new description) or remove a tool of a small
/// pool of names.
#[derive(Clone, Debug)]
enum Op {
    Add(u8),
    Replace(u8, u8),
    Remove(u8),
}

impl Op {
    fn change(&self) -> CatalogChange {
        match self {
            Self::Add(n) => CatalogChange::new().add_tool(tool(&format!("p{n}"), "added")),
            Self::Replace(n, d) => {
                CatalogChange::new().replace_tool(tool(&format!("p{n}"), &format!("v{d}")))
            }
            Self::Remove(n) => CatalogChange::new().remove_tool(format!("p{n}")),
        }
    }
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..6).prop_map(Op::Add),
        (0u8..6, 0u8..4).prop_map(|(n, d)| Op::Replace(n, d)),
        (0u8..6).prop_map(Op::Remove),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Changes made from four threads at once end in the catalog their accepted changes give
    /// applied one by one in the order they were accepted, and every refusal was one.
    #[test]
    fn concurrent_changes_end_where_their_serial_application_ends(
        ops in proptest::collection::vec((0usize..4, op()), 1..40),
    ) {
        let (concurrent, catalogs) = endpoint();
        let mut per_thread: Vec<Vec<Op>> = vec![Vec::new(); 4];
        for (thread, op) in ops {
            per_thread[thread].push(op);
        }
        let accepted: Vec<(u64, Op)> = std::thread::scope(|scope| {
            let handles: Vec<_> = per_thread
                .into_iter()
                .map(|ops| {
                    let catalogs = catalogs.clone();
                    scope.spawn(move || {
                        ops.into_iter()
                            .filter_map(|op| catalogs.apply(op.change()).ok().map(|v| (v, op)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        let mut accepted = accepted;
        accepted.sort_by_key(|(version, _)| *version);
        let versions: Vec<u64> = accepted.iter().map(|(v, _)| *v).collect();
        let expected: Vec<u64> = (1..=accepted.len() as u64).collect();
        prop_assert_eq!(versions, expected, "each accepted change has its own version");
        let (serial, replay) = endpoint();
        for (version, op) in &accepted {
            prop_assert_eq!(replay.apply(op.change()).ok(), Some(*version));
        }
        let (a, b) = (concurrent.catalog(), serial.catalog());
        prop_assert_eq!(&a.tool_pages, &b.tool_pages);
        prop_assert_eq!(&a.discover, &b.discover);
        prop_assert_eq!(catalogs.tool_names(), replay.tool_names());
    }
}

async fn greet(
    _: &RequestContext,
    _: crate::model::prompt::PromptArguments,
    _: &InvocationFeatures,
) -> Result<crate::model::prompt::PromptResult, Infallible> {
    Ok(crate::model::prompt::PromptResult::with_message(
        crate::model::prompt::PromptMessage::user(crate::model::content::TextContent::new("hi")),
    ))
}

async fn read(
    _: &RequestContext,
    request: crate::model::resource::ResourceRequest,
    _: &InvocationFeatures,
) -> Result<crate::model::resource::ResourceOutput, crate::facts::error::ContentError> {
    let contents = crate::model::content::ResourceContents::text(request.uri(), None, "x")?;
    Ok(crate::model::resource::ResourceOutput::with_contents(
        contents,
    ))
}

/// Each list is announced for what changed in it, on the revisions it changed on: a prompt on
/// both, a 2026-07-28-only resource there alone, a template replaced in place on both; a
/// prompt or resource removed is found no more.
#[test]
fn prompts_resources_and_templates_change_their_own_lists() {
    let (endpoint, catalogs) = endpoint();
    let Some(live) = &endpoint.inner.live else {
        unreachable!("built live")
    };
    let step = |change: CatalogChange| {
        let before = live.current();
        catalogs.apply(change).unwrap();
        differences(&before, &live.current())
    };
    let prompt = PromptRegistration::with_name("greet", [V26, V1125])
        .handler(greet)
        .build()
        .unwrap();
    let both = |list| list_bit(V26, list) | list_bit(V1125, list);
    assert_eq!(
        step(CatalogChange::new().add_prompt(prompt)),
        both(ListKind::Prompts)
    );
    assert!(endpoint.catalog().prompt("greet", V1125).is_some());
    let resource = ResourceRegistration::with_uri("test://new", "new", [V26])
        .handler(read)
        .build()
        .unwrap();
    assert_eq!(
        step(CatalogChange::new().add_resource(resource)),
        list_bit(V26, ListKind::Resources)
    );
    let template = |name: &str| {
        ResourceTemplateRegistration::with_uri_template("test://items/{id}", name, [V26, V1125])
            .handler(read)
            .build()
            .unwrap()
    };
    step(CatalogChange::new().add_resource_template(template("item")));
    assert_eq!(
        step(CatalogChange::new().replace_resource_template(template("renamed"))),
        both(ListKind::Resources)
    );
    assert_eq!(
        step(
            CatalogChange::new()
                .remove_prompt("greet")
                .remove_resource("test://new")
        ),
        both(ListKind::Prompts) | list_bit(V26, ListKind::Resources)
    );
    assert!(endpoint.catalog().prompt("greet", V26).is_none());
    assert!(
        endpoint
            .catalog()
            .route_resource("test://new", V26)
            .is_none()
    );
    assert!(
        endpoint
            .catalog()
            .route_resource("test://items/7", V1125)
            .is_some()
    );
}
