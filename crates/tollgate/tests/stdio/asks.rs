//! Server-to-client requests over stdio in a 2025 session: a handler's elicitation goes out as
//! a line and the client's response line resumes it; stray responses get no reply; a client
//! without the capability is never asked; input that ends fails the wait at once; 2026-07-28
//! requests have no channel; a 65th request while 64 wait for answers is refused busy.

use std::convert::Infallible;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tollgate::context::{ClientRequests, InputRequest};
use tollgate::json::{JsonObject, JsonValue, to_string};
use tollgate::tool::{
    CompleteResult, InputRequestDeclaration, InputRequestKind, InputRequirement, OperationResult,
};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, ProtocolVersion, RequestContext, ToolArguments,
    ToolRegistration,
};

use crate::{META, Pipe, serve};

/// Asks the client for a name (or, with `{"roots": true}`, its roots): the answer as structured
/// content, or what went wrong as text.
async fn ask(
    _: &RequestContext,
    arguments: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let Some(client) = features.find::<ClientRequests>() else {
        return Ok(CompleteResult::from_tool_text("no channel").into());
    };
    let request = if arguments.raw().get("roots").is_some() {
        InputRequest::list_roots()
    } else {
        InputRequest::elicitation("Your name?", JsonObject::new())
    };
    Ok(match client.send(request).await {
        Ok(answer) => match answer.as_object() {
            Some(answer) => CompleteResult::from_tool_structured_content(answer.clone()).into(),
            None => CompleteResult::from_tool_text("not an object").into(),
        },
        Err(error) => CompleteResult::from_tool_text(error.to_string()).into(),
    })
}

fn asking() -> Endpoint {
    let all = [
        ProtocolVersion::V2026_07_28,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_03_26,
    ];
    let declared = [InputRequestKind::Elicitation, InputRequestKind::Roots]
        .map(|kind| InputRequestDeclaration::new(kind, InputRequirement::Conditional));
    Endpoint::with_path("/mcp", all, Implementation::new("stdio-asks", "1"))
        .add_tool(
            ToolRegistration::with_name("ask", all)
                .json_object_arguments()
                .handler(ask)
                .input_request_declarations(declared)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap()
}

/// A 2025-11-25 session declaring `capabilities`.
async fn session(capabilities: &str) -> Pipe {
    let mut pipe = serve(asking());
    pipe.send(&format!(r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{capabilities},"clientInfo":{{"name":"t","version":"1"}}}}}}"#)).await;
    assert!(pipe.receive().await.get("result").is_some());
    pipe.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    pipe
}

const CALL: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{}}}"#;

fn text(line: &JsonValue) -> Option<&str> {
    line.get("result")?
        .get("content")?
        .as_array()?
        .first()?
        .get("text")?
        .as_str()
}

/// A line's numeric JSON-RPC id.
fn number_id(line: &JsonValue) -> Option<i64> {
    line.get("id")?.as_number()?.to_i64()
}

/// The id of a request sent to the client, checking its method.
fn asked_id(line: &JsonValue, method: &str) -> String {
    assert_eq!(line.get("method").and_then(JsonValue::as_str), Some(method));
    line.get("id")
        .and_then(JsonValue::as_str)
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_2025_handler_asks_its_client_in_lines() {
    let mut pipe = session(r#"{"elicitation":{}}"#).await;
    pipe.send(CALL).await;
    let asked = pipe.receive().await;
    let id = asked_id(&asked, "elicitation/create");
    // A response to nothing waiting (never asked) is dropped without a reply.
    pipe.send(r#"{"jsonrpc":"2.0","id":"never-asked","result":{"action":"cancel"}}"#)
        .await;
    pipe.send(&format!(
        r#"{{"jsonrpc":"2.0","id":"{id}","result":{{"action":"accept","content":{{"name":"Ada"}}}}}}"#
    ))
    .await;
    let answer = pipe.receive().await;
    assert_eq!(number_id(&answer), Some(1));
    let seen = answer
        .get("result")
        .and_then(|r| r.get("structuredContent"));
    assert_eq!(
        to_string(seen.unwrap(), &Default::default()).unwrap(),
        r#"{"action":"accept","content":{"name":"Ada"}}"#
    );
    // The same id answered twice: the second finds nothing, and nothing is written for it.
    pipe.send(&format!(
        r#"{{"jsonrpc":"2.0","id":"{id}","result":{{"action":"decline"}}}}"#
    ))
    .await;
    pipe.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        .await;
    assert_eq!(number_id(&pipe.receive().await), Some(2));
    // An error answer (or a result of the wrong shape) is the client's rejection.
    pipe.send(CALL).await;
    let asked = pipe.receive().await;
    let id = asked_id(&asked, "elicitation/create");
    pipe.send(&format!(
        r#"{{"jsonrpc":"2.0","id":"{id}","result":{{"action":"maybe"}}}}"#
    ))
    .await;
    assert_eq!(
        text(&pipe.receive().await),
        Some("the client rejected the request")
    );
}

#[tokio::test]
async fn a_client_without_the_capability_is_never_asked() {
    let mut pipe = session("{}").await;
    pipe.send(CALL).await;
    let answer = pipe.receive().await;
    assert_eq!(
        text(&answer),
        Some("the client did not declare the capability this request needs")
    );
    // On 2026-07-28 there is no channel: input_required results ask instead.
    let mut pipe = serve(asking());
    pipe.send(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"ask","arguments":{{}},{META}}}}}"#)).await;
    assert_eq!(text(&pipe.receive().await), Some("no channel"));
}

#[tokio::test]
async fn input_that_ends_ends_the_wait_at_once() {
    let mut pipe = session(r#"{"elicitation":{}}"#).await;
    pipe.send(CALL).await;
    let asked = pipe.receive().await;
    asked_id(&asked, "elicitation/create");
    // The client goes away without answering: the handler hears so, answers, and the server
    // ends well within the 60-second request timeout.
    pipe.input.shutdown().await.unwrap();
    assert_eq!(
        text(&pipe.receive().await),
        Some("the client cannot be asked now")
    );
    let ended = tokio::time::timeout(Duration::from_secs(5), pipe.server).await;
    assert!(matches!(ended, Ok(Ok(Ok(())))));
}

#[tokio::test]
async fn a_65th_request_while_64_wait_for_answers_is_refused_busy() {
    let mut pipe = session(r#"{"elicitation":{}}"#).await;
    let call = |id: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"ask","arguments":{{}}}}}}"#
        )
    };
    // 65 sent before any is answered (the 65th may be read before any of the 64 has asked):
    // the 64 (the bound) are each asked, and the 65th is refused at once, busy, as soon as one
    // of them waits for an answer only the reader can read.
    for id in 1..=65 {
        pipe.send(&call(id)).await;
    }
    let mut asked = Vec::new();
    let mut refused = Vec::new();
    for _ in 1..=65 {
        let line = pipe.receive().await;
        match line.get("method").and_then(JsonValue::as_str) {
            Some("elicitation/create") => {
                asked.push(
                    line.get("id")
                        .and_then(JsonValue::as_str)
                        .unwrap()
                        .to_owned(),
                );
            }
            _ => refused.push(line),
        }
    }
    assert_eq!(asked.len(), 64);
    let [refused] = refused.as_slice() else {
        panic!("one refusal: {refused:?}")
    };
    assert_eq!(number_id(refused), Some(65));
    assert_eq!(
        refused
            .get("error")
            .and_then(|e| e.get("message"))
            .and_then(JsonValue::as_str),
        Some("Server busy")
    );
    // The answers are read and each call completes.
    for id in &asked {
        pipe.send(&format!(
            r#"{{"jsonrpc":"2.0","id":"{id}","result":{{"action":"decline"}}}}"#
        ))
        .await;
    }
    for _ in 1..=64 {
        assert!(pipe.receive().await.get("result").is_some());
    }
}

#[tokio::test]
async fn a_second_initialize_ends_the_first_session_s_waits() {
    let mut pipe = session(r#"{"elicitation":{}}"#).await;
    pipe.send(CALL).await;
    let asked = pipe.receive().await;
    asked_id(&asked, "elicitation/create");
    // A new session on the connection: the old one's request can be answered no more.
    pipe.send(r#"{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}"#).await;
    let mut lines = [pipe.receive().await, pipe.receive().await];
    lines.sort_by_key(number_id);
    assert_eq!(text(&lines[0]), Some("the client cannot be asked now"));
    assert!(
        lines[1]
            .get("result")
            .and_then(|r| r.get("protocolVersion"))
            .is_some()
    );
}

#[tokio::test]
async fn a_2025_03_26_client_answers_in_a_batch_and_is_never_asked_to_elicit() {
    let mut pipe = serve(asking());
    pipe.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{"roots":{},"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}"#).await;
    assert!(pipe.receive().await.get("result").is_some());
    pipe.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    // Elicitation came with 2025-06-18: not sent, whatever the client declared.
    pipe.send(CALL).await;
    assert_eq!(
        text(&pipe.receive().await),
        Some("the client did not declare the capability this request needs")
    );
    // Roots are asked, and the answer may come inside a batch, which gets no reply itself.
    pipe.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{"roots":true}}}"#).await;
    let asked = pipe.receive().await;
    let id = asked_id(&asked, "roots/list");
    pipe.send(&format!(
        r#"[{{"jsonrpc":"2.0","id":"{id}","result":{{"roots":[{{"uri":"file:///tmp","name":"tmp"}}]}}}}]"#
    ))
    .await;
    let answer = pipe.receive().await;
    assert_eq!(number_id(&answer), Some(2));
    let roots = answer
        .get("result")
        .and_then(|r| r.get("content"))
        .and_then(JsonValue::as_array)
        .and_then(|c| c.first())
        .and_then(|c| c.get("text"))
        .and_then(JsonValue::as_str);
    // 2025-03-26 has no structured content: the tool's object is mirrored as text.
    assert!(
        roots.is_some_and(|t| t.contains("file:///tmp")),
        "{answer:?}"
    );
}
