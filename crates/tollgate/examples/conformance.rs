//! The fixture server the official MCP conformance suite drives (`scripts/conformance`).
//!
//! It serves 2026-07-28, 2025-11-25 and 2025-06-18 on one URL (the mirrored-header tool only on
//! 2026-07-28, the only revision that has them). It exposes exactly the fixtures the suite's server scenarios call that Tollgate's current
//! features can serve, written with the public API only, as an application would. Run it with
//! `cargo run --example conformance -- --addr 127.0.0.1:PORT`; it prints its URL once listening.
//!
//! Behind a load balancer (`scripts/cluster --conformance`, built with the `postgres` feature),
//! every instance is given the same `TOLLGATE_CONFORMANCE_POSTGRES` (its tasks and 2025 sessions
//! shared there) and the same `TOLLGATE_REQUEST_STATE_KEYS` key ring.

use std::convert::Infallible;
use std::net::SocketAddr;

use tollgate::json::{JsonLimits, JsonObject, JsonValue, from_str};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    Server, ToolArguments, ToolRegistration,
    content::{
        AudioContent, ContentError, EmbeddedResource, ImageContent, ResourceContents, TextContent,
    },
    context::{
        ClientCapability, ClientRequests, InputRequest, InputRequiredResult, LogLevel,
        ProgressReporter, RequestLogger,
    },
    endpoint::EndpointBuilder,
    prompt::{
        Completion, CompletionRequest, PromptArgument, PromptArguments, PromptMessage,
        PromptOutcome, PromptRegistration, PromptResult,
    },
    resource::{
        ResourceOutput, ResourceRegistration, ResourceRequest, ResourceTemplateRegistration,
    },
    skill::SkillRegistration,
    task::{InMemoryTaskStore, TaskContext, TaskCreation, TaskError},
    tool::{
        CompleteResult, InputRequestDeclaration, InputRequestKind, InputRequirement,
        OperationResult, RequestStateMode, TaskSupport, ToolOutput,
    },
    transport::ResponseStream,
};

const MODERN: ProtocolVersion = ProtocolVersion::V2026_07_28;
/// Every revision served over HTTP: the content tools serve all four (2025-03-26 for the
/// suite's session lifecycle at that revision, `scripts/older-clients`).
const ALL: [ProtocolVersion; 4] = [
    ProtocolVersion::V2026_07_28,
    ProtocolVersion::V2025_11_25,
    ProtocolVersion::V2025_06_18,
    ProtocolVersion::V2025_03_26,
];

/// A 1x1 red PNG.
const RED_PIXEL_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
    0x00, 0x03, 0x01, 0x01, 0x00, 0xf7, 0x03, 0x41, 0x43, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82,
];

/// One millisecond of 8 kHz, 16-bit mono silence as a WAV file.
const SILENCE_WAV: &[u8] = &[
    0x52, 0x49, 0x46, 0x46, 0x34, 0x00, 0x00, 0x00, 0x57, 0x41, 0x56, 0x45, 0x66, 0x6d, 0x74, 0x20,
    0x10, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x40, 0x1f, 0x00, 0x00, 0x80, 0x3e, 0x00, 0x00,
    0x02, 0x00, 0x10, 0x00, 0x64, 0x61, 0x74, 0x61, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
];

type Args = ToolArguments<JsonObject>;
type Outcome = Result<OperationResult, ContentError>;

fn output(output: ToolOutput) -> Outcome {
    Ok(CompleteResult::with_tool_output(output).build().into())
}

async fn simple_text(_: &RequestContext, _: Args, _: &InvocationFeatures) -> Outcome {
    Ok(CompleteResult::from_tool_text("This is a simple text response for testing.").into())
}

async fn image(_: &RequestContext, _: Args, _: &InvocationFeatures) -> Outcome {
    output(
        ToolOutput::builder()
            .add_content(ImageContent::new(RED_PIXEL_PNG, "image/png")?)
            .build(),
    )
}

async fn audio(_: &RequestContext, _: Args, _: &InvocationFeatures) -> Outcome {
    output(
        ToolOutput::builder()
            .add_content(AudioContent::new(SILENCE_WAV, "audio/wav")?)
            .build(),
    )
}

async fn embedded_resource(_: &RequestContext, _: Args, _: &InvocationFeatures) -> Outcome {
    let contents = ResourceContents::text(
        "test://embedded-resource",
        Some("text/plain"),
        "This is an embedded resource content.",
    )?;
    output(
        ToolOutput::builder()
            .add_content(EmbeddedResource::new(contents))
            .build(),
    )
}

async fn multiple_content_types(_: &RequestContext, _: Args, _: &InvocationFeatures) -> Outcome {
    let contents = ResourceContents::text(
        "test://mixed-content-resource",
        Some("application/json"),
        r#"{"test":"data","value":123}"#,
    )?;
    output(
        ToolOutput::builder()
            .add_content(TextContent::new("Multiple content types test:"))
            .add_content(ImageContent::new(RED_PIXEL_PNG, "image/png")?)
            .add_content(EmbeddedResource::new(contents))
            .build(),
    )
}

async fn error_handling(_: &RequestContext, _: Args, _: &InvocationFeatures) -> Outcome {
    Ok(
        CompleteResult::from_tool_error_text(
            "This tool intentionally returns an error for testing",
        )
        .into(),
    )
}

async fn with_progress(_: &RequestContext, _: Args, features: &InvocationFeatures) -> Outcome {
    let progress = features.find::<ProgressReporter>();
    for step in [0.0, 50.0, 100.0] {
        if let Some(progress) = progress {
            let _ = progress.report(step, Some(100.0), None);
        }
        if step < 100.0 {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
    Ok(CompleteResult::from_tool_text("Progress tool completed").into())
}

async fn with_logging(_: &RequestContext, _: Args, features: &InvocationFeatures) -> Outcome {
    let log = features.find::<RequestLogger>();
    for (i, text) in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        if let Some(log) = log {
            log.log(LogLevel::Info, text);
        }
    }
    Ok(CompleteResult::from_tool_text("Logging tool completed").into())
}

async fn acknowledge(
    _: &RequestContext,
    args: Args,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::with_tool_output(
        ToolOutput::builder()
            .add_content(TextContent::new("ok"))
            .structured_content(args.raw().clone())
            .build(),
    )
    .build()
    .into())
}

const JSON_SCHEMA_2020_12: &str = r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "$anchor": "addressDef",
      "type": "object",
      "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
    }
  },
  "properties": {
    "name": {"type": "string"},
    "address": {"$ref": "#/$defs/address"},
    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
    "phone": {"type": "string"},
    "email": {"type": "string"}
  },
  "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
  "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
  "then": {"required": ["phone"]},
  "else": {"required": ["email"]},
  "additionalProperties": false
}"##;

const MIRRORED: &str = r#"{
  "type": "object",
  "properties": {
    "region": {"type": "string", "x-mcp-header": "Region", "description": "Mirrored in Mcp-Param-Region"},
    "query": {"type": "string"}
  },
  "required": ["region"]
}"#;

/// Closes the SSE connection mid-call (where the revision allows it, 2025-11-25 in a session),
/// then answers: the client resumes with `GET` and `Last-Event-ID` and receives the result.
async fn reconnection(_: &RequestContext, _: Args, features: &InvocationFeatures) -> Outcome {
    if let Some(stream) = features.find::<ResponseStream>() {
        stream.close_connection();
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    Ok(CompleteResult::from_tool_text("Reconnection test completed").into())
}

fn endpoint(shared: Shared) -> Result<Endpoint, Box<dyn std::error::Error>> {
    let limits = JsonLimits::default();
    let content_tools = [
        ("test_simple_text", "Returns one text block"),
        ("test_image_content", "Returns a 1x1 red PNG"),
        ("test_audio_content", "Returns a short silent WAV"),
        (
            "test_embedded_resource",
            "Returns an embedded text resource",
        ),
        (
            "test_multiple_content_types",
            "Returns text, an image and an embedded resource",
        ),
        ("test_error_handling", "Always reports a tool error"),
        (
            "test_tool_with_progress",
            "Reports progress 0, 50 and 100 of 100",
        ),
        (
            "test_tool_with_logging",
            "Sends three info log messages while it runs",
        ),
        (
            "test_logging_tool",
            "Sends log messages only when the request asks for a level",
        ),
        (
            "test_reconnection",
            "Closes its SSE connection mid-call; the client resumes with Last-Event-ID",
        ),
    ];
    let mut builder = Endpoint::with_path(
        "/mcp",
        ALL,
        Implementation::new("tollgate-conformance", env!("CARGO_PKG_VERSION")),
    )
    .logging(true);
    for (name, description) in content_tools {
        let stage = ToolRegistration::with_name(name, ALL).json_object_arguments();
        let registration = match name {
            "test_simple_text" => stage.handler(simple_text),
            "test_image_content" => stage.handler(image),
            "test_audio_content" => stage.handler(audio),
            "test_embedded_resource" => stage.handler(embedded_resource),
            "test_multiple_content_types" => stage.handler(multiple_content_types),
            "test_tool_with_progress" => stage.handler(with_progress),
            "test_tool_with_logging" | "test_logging_tool" => stage.handler(with_logging),
            "test_reconnection" => stage.handler(reconnection),
            _ => stage.handler(error_handling),
        };
        builder = builder.add_tool(registration.description(description).build()?);
    }
    let schema: JsonValue = from_str(JSON_SCHEMA_2020_12, &limits)?;
    builder = builder.add_tool(
        ToolRegistration::with_name("json_schema_2020_12_tool", ALL)
            .input_schema(&schema)?
            .handler(acknowledge)
            .description("Tool with JSON Schema 2020-12 features")
            .build()?,
    );
    builder = builder.add_tool(
        ToolRegistration::with_name("test_missing_capability", ALL)
            .json_object_arguments()
            .handler(acknowledge)
            .description("Requires the client's sampling capability on every call")
            .require_client_capability(ClientCapability::Sampling)
            .build()?,
    );
    let mirrored: JsonValue = from_str(MIRRORED, &limits)?;
    builder = builder.add_tool(
        ToolRegistration::with_name("test_mirrored_header", [MODERN])
            .input_schema(&mirrored)?
            .handler(acknowledge)
            .description("Mirrors its region argument in the Mcp-Param-Region header")
            .build()?,
    );
    builder = shared.apply(builder)?.add_skill(pdf_skill()?);
    Ok(
        add_task_tools(add_client_request_tools(add_input_tools(add_resources(
            add_prompts(builder)?,
        )?)?)?)?
        .build()?,
    )
}

/// The skill the SEP-2640 scenarios discover (2026-07-28): a `SKILL.md` with frontmatter, a file
/// in a subdirectory (the directory scenario reads the skill's root and expects one), and a
/// nested skill with its own entry.
fn pdf_skill() -> Result<SkillRegistration, tollgate::BuildError> {
    SkillRegistration::builder("pdf-processing")
        .file(
            "SKILL.md",
            "---\nname: pdf-processing\ndescription: Extract text and fill forms in PDF files.\nlicense: Apache-2.0\nmetadata:\n  version: \"1.0\"\n---\n# PDF processing\n\nRead `references/FORMS.md` before filling a form.\n",
        )
        .file(
            "references/FORMS.md",
            "# Forms\n\nEvery field has a name and a type.\n",
        )
        .file(
            "forms/SKILL.md",
            "---\nname: forms\ndescription: Fill one PDF form field by field.\n---\n# Forms\n",
        )
        .build()
}

type PromptReply = Result<PromptResult, ContentError>;

async fn simple_prompt(
    _: &RequestContext,
    _: PromptArguments,
    _: &InvocationFeatures,
) -> PromptReply {
    Ok(PromptResult::with_message(PromptMessage::user(
        TextContent::new("This is a simple prompt for testing."),
    )))
}

async fn prompt_with_arguments(
    _: &RequestContext,
    args: PromptArguments,
    _: &InvocationFeatures,
) -> PromptReply {
    let (arg1, arg2) = (
        args.get("arg1").unwrap_or_default(),
        args.get("arg2").unwrap_or_default(),
    );
    Ok(PromptResult::with_message(PromptMessage::user(
        TextContent::new(format!(
            "Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"
        )),
    )))
}

async fn prompt_with_embedded_resource(
    _: &RequestContext,
    args: PromptArguments,
    _: &InvocationFeatures,
) -> PromptReply {
    let contents = ResourceContents::text(
        args.get("resourceUri").unwrap_or_default(),
        Some("text/plain"),
        "Embedded resource content for testing.",
    )?;
    Ok(
        PromptResult::with_message(PromptMessage::user(EmbeddedResource::new(contents)))
            .add_message(PromptMessage::user(TextContent::new(
                "Please process the embedded resource above.",
            ))),
    )
}

async fn prompt_with_image(
    _: &RequestContext,
    _: PromptArguments,
    _: &InvocationFeatures,
) -> PromptReply {
    Ok(
        PromptResult::with_message(PromptMessage::user(ImageContent::new(
            RED_PIXEL_PNG,
            "image/png",
        )?))
        .add_message(PromptMessage::user(TextContent::new(
            "Please analyze the image above.",
        ))),
    )
}

/// Suggestions for `test_prompt_with_arguments`: words starting with what was typed.
async fn complete_argument(
    _: &RequestContext,
    request: CompletionRequest,
) -> Result<Completion, ContentError> {
    const WORDS: [&str; 6] = ["paris", "park", "party", "test", "testing", "tested"];
    let typed = request.value();
    Ok(Completion::from_values(
        WORDS.iter().filter(|w| w.starts_with(typed)).copied(),
    ))
}

/// Asks for context first (2026-07-28), then renders the prompt with it.
async fn prompt_with_input(
    ctx: &RequestContext,
    _: PromptArguments,
    _: &InvocationFeatures,
) -> Result<PromptOutcome, ContentError> {
    Ok(match accepted(ctx, "user_context", "context") {
        Some(context) => PromptResult::with_message(PromptMessage::user(TextContent::new(format!(
            "Use this context: {context}"
        ))))
        .into(),
        None => InputRequiredResult::with_input_request(
            "user_context",
            InputRequest::elicitation(
                "What context should the prompt use?",
                schema(r#"{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}"#),
            ),
        )
        .into(),
    })
}

fn add_prompts(builder: EndpointBuilder) -> Result<EndpointBuilder, Box<dyn std::error::Error>> {
    let prompt = |name: &str| PromptRegistration::with_name(name, ALL);
    Ok(builder
        .add_prompt(
            prompt("test_simple_prompt")
                .handler(simple_prompt)
                .description("A simple prompt without arguments")
                .build()?,
        )
        .add_prompt(
            prompt("test_prompt_with_arguments")
                .handler(prompt_with_arguments)
                .description("A prompt with two required arguments")
                .add_argument(PromptArgument::required("arg1").description("First test argument"))
                .add_argument(PromptArgument::required("arg2").description("Second test argument"))
                .completion(complete_argument)
                .build()?,
        )
        .add_prompt(
            prompt("test_prompt_with_embedded_resource")
                .handler(prompt_with_embedded_resource)
                .description("A prompt embedding the resource it is given")
                .add_argument(
                    PromptArgument::required("resourceUri")
                        .description("URI of the resource to embed"),
                )
                .build()?,
        )
        .add_prompt(
            PromptRegistration::with_name("test_input_required_result_prompt", [MODERN])
                .handler(prompt_with_input)
                .description("Asks for context through an input_required result")
                .build()?,
        )
        .add_prompt(
            prompt("test_prompt_with_image")
                .handler(prompt_with_image)
                .description("A prompt with an image")
                .build()?,
        ))
}

type ResourceOutcome = Result<ResourceOutput, Box<dyn std::error::Error + Send + Sync>>;

async fn static_text(
    _: &RequestContext,
    r: ResourceRequest,
    _: &InvocationFeatures,
) -> ResourceOutcome {
    Ok(ResourceOutput::with_contents(ResourceContents::text(
        r.uri(),
        Some("text/plain"),
        "This is the content of the static text resource.",
    )?))
}

async fn static_binary(
    _: &RequestContext,
    r: ResourceRequest,
    _: &InvocationFeatures,
) -> ResourceOutcome {
    Ok(ResourceOutput::with_contents(ResourceContents::blob(
        r.uri(),
        Some("image/png"),
        RED_PIXEL_PNG,
    )?))
}

async fn template_data(
    _: &RequestContext,
    r: ResourceRequest,
    _: &InvocationFeatures,
) -> ResourceOutcome {
    let id = r.variable("id").unwrap_or_default();
    let text = tollgate::json::to_string(
        &JsonObject::builder()
            .insert("id", id)
            .insert("templateTest", true)
            .insert("data", format!("Data for ID: {id}"))
            .build()
            .into(),
        &Default::default(),
    )?;
    Ok(ResourceOutput::with_contents(ResourceContents::text(
        r.uri(),
        Some("application/json"),
        text,
    )?))
}

async fn watched(
    _: &RequestContext,
    r: ResourceRequest,
    _: &InvocationFeatures,
) -> ResourceOutcome {
    Ok(ResourceOutput::with_contents(ResourceContents::text(
        r.uri(),
        Some("text/plain"),
        "Watched resource content",
    )?))
}

fn add_resources(builder: EndpointBuilder) -> Result<EndpointBuilder, Box<dyn std::error::Error>> {
    Ok(builder
        .add_resource(
            ResourceRegistration::with_uri("test://static-text", "Static text", ALL)
                .handler(static_text)
                .description("A static text resource")
                .mime_type("text/plain")
                .build()?,
        )
        .add_resource(
            ResourceRegistration::with_uri("test://static-binary", "Static binary", ALL)
                .handler(static_binary)
                .description("A static PNG")
                .mime_type("image/png")
                .build()?,
        )
        .add_resource(
            ResourceRegistration::with_uri("test://watched-resource", "Watched resource", ALL)
                .handler(watched)
                .description("A resource clients may subscribe to")
                .mime_type("text/plain")
                .build()?,
        )
        .add_resource_template(
            ResourceTemplateRegistration::with_uri_template(
                "test://template/{id}/data",
                "Template data",
                ALL,
            )
            .handler(template_data)
            .description("Data for an id")
            .mime_type("application/json")
            .build()?,
        ))
}

/// An object schema from its JSON text (the fixtures' are constant and valid).
fn schema(text: &str) -> JsonObject {
    from_str(text, &JsonLimits::default())
        .ok()
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default()
}

fn ask_name(message: &str) -> InputRequest {
    InputRequest::elicitation(
        message,
        schema(r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}"#),
    )
}

/// The accepted content's `field`, from the response to `key`.
fn accepted(ctx: &RequestContext, key: &str, field: &str) -> Option<String> {
    let response = ctx.input_response(key)?;
    if response.get("action").and_then(JsonValue::as_str) != Some("accept") {
        return None;
    }
    let value = response.get("content")?.get(field)?;
    Some(match value.as_str() {
        Some(s) => s.to_owned(),
        None => tollgate::json::to_string(value, &Default::default()).ok()?,
    })
}

fn greeting_sample() -> Result<InputRequest, ContentError> {
    InputRequest::sampling(schema(
        r#"{"messages":[{"role":"user","content":{"type":"text","text":"Generate a greeting"}}],"maxTokens":50}"#,
    ))
}

fn capital_sample() -> Result<InputRequest, ContentError> {
    InputRequest::sampling(schema(
        r#"{"messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}],"maxTokens":100}"#,
    ))
}

async fn ir_elicitation(ctx: &RequestContext, _: Args, _: &InvocationFeatures) -> Outcome {
    Ok(match accepted(ctx, "user_name", "name") {
        Some(name) => CompleteResult::from_tool_text(format!("Hello, {name}!")).into(),
        // Missing or wrong keys: ask again rather than fail.
        None => {
            InputRequiredResult::with_input_request("user_name", ask_name("What is your name?"))
                .into()
        }
    })
}

async fn ir_sampling(ctx: &RequestContext, _: Args, _: &InvocationFeatures) -> Outcome {
    let text = ctx
        .input_response("capital_question")
        .and_then(|r| r.get("content"))
        .and_then(|c| c.get("text"))
        .and_then(JsonValue::as_str)
        .map(str::to_owned);
    Ok(match text {
        Some(text) => CompleteResult::from_tool_text(format!("The model said: {text}")).into(),
        None => {
            InputRequiredResult::with_input_request("capital_question", capital_sample()?).into()
        }
    })
}

async fn ir_list_roots(ctx: &RequestContext, _: Args, _: &InvocationFeatures) -> Outcome {
    let roots = ctx
        .input_response("client_roots")
        .and_then(|r| r.get("roots"))
        .and_then(JsonValue::as_array)
        .map(|roots| {
            roots
                .iter()
                .filter_map(|r| r.get("uri").and_then(JsonValue::as_str).map(str::to_owned))
                .collect::<Vec<_>>()
        });
    Ok(match roots {
        Some(uris) => CompleteResult::from_tool_text(format!("Roots: {}", uris.join(", "))).into(),
        None => InputRequiredResult::with_input_request("client_roots", InputRequest::list_roots())
            .into(),
    })
}

async fn ir_request_state(ctx: &RequestContext, _: Args, _: &InvocationFeatures) -> Outcome {
    let confirmed = ctx.input_response("confirm").is_some();
    let state_ok = ctx.request_state().and_then(JsonValue::as_str) == Some("awaiting-confirmation");
    Ok(if confirmed && state_ok {
        CompleteResult::from_tool_text("Confirmed: state-ok").into()
    } else {
        InputRequiredResult::with_input_request(
            "confirm",
            InputRequest::elicitation(
                "Please confirm",
                schema(
                    r#"{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}"#,
                ),
            ),
        )
        .state(JsonValue::from("awaiting-confirmation"))
        .into()
    })
}

async fn ir_multiple_inputs(ctx: &RequestContext, _: Args, _: &InvocationFeatures) -> Outcome {
    let all = ["user_name", "greeting", "client_roots"]
        .iter()
        .all(|k| ctx.input_response(k).is_some());
    Ok(if all {
        CompleteResult::from_tool_text("All inputs received").into()
    } else {
        InputRequiredResult::with_input_request("user_name", ask_name("What is your name?"))
            .add_input_request("greeting", greeting_sample()?)
            .add_input_request("client_roots", InputRequest::list_roots())
            .state(JsonValue::from("multiple"))
            .into()
    })
}

async fn ir_multi_round(ctx: &RequestContext, _: Args, _: &InvocationFeatures) -> Outcome {
    let step = ctx
        .request_state()
        .and_then(|s| s.get("step"))
        .and_then(JsonValue::as_number)
        .and_then(|n| n.to_u64());
    Ok(match step {
        Some(1) if accepted(ctx, "step1", "name").is_some() => {
            let name = accepted(ctx, "step1", "name").unwrap_or_default();
            InputRequiredResult::with_input_request(
                "step2",
                InputRequest::elicitation(
                    "Step 2: What is your favorite color?",
                    schema(r#"{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}"#),
                ),
            )
            .state(JsonObject::builder().insert("step", 2).insert("name", name).build().into())
            .into()
        }
        Some(2) if accepted(ctx, "step2", "color").is_some() => {
            let name = ctx
                .request_state()
                .and_then(|s| s.get("name"))
                .and_then(JsonValue::as_str)
                .unwrap_or_default()
                .to_owned();
            let color = accepted(ctx, "step2", "color").unwrap_or_default();
            CompleteResult::from_tool_text(format!("{name} likes {color}")).into()
        }
        _ => {
            InputRequiredResult::with_input_request("step1", ask_name("Step 1: What is your name?"))
                .state(JsonObject::builder().insert("step", 1).build().into())
                .into()
        }
    })
}

async fn ir_capabilities(ctx: &RequestContext, _: Args, _: &InvocationFeatures) -> Outcome {
    if ctx.input_round() > 0 {
        return Ok(CompleteResult::from_tool_text("Inputs received").into());
    }
    let caps = ctx.client_capabilities();
    let mut requests: Vec<(&str, InputRequest)> = Vec::new();
    if caps.elicitation() {
        requests.push(("user_name", ask_name("What is your name?")));
    }
    if caps.sampling() {
        requests.push(("greeting", greeting_sample()?));
    }
    if caps.roots() {
        requests.push(("client_roots", InputRequest::list_roots()));
    }
    let mut requests = requests.into_iter();
    let Some((key, first)) = requests.next() else {
        return Ok(CompleteResult::from_tool_text("No input capabilities declared").into());
    };
    let mut result = InputRequiredResult::with_input_request(key, first);
    for (key, request) in requests {
        result = result.add_input_request(key, request);
    }
    Ok(result.into())
}

/// Sends `request` to the client over the call's stream (2025 revisions) and describes the
/// answer.
async fn ask_client(
    features: &InvocationFeatures,
    request: InputRequest,
) -> Result<JsonValue, String> {
    let Some(client) = features.find::<ClientRequests>() else {
        return Err("This client cannot be asked for input here".to_owned());
    };
    client.send(request).await.map_err(|e| e.to_string())
}

fn describe(answer: &JsonValue) -> String {
    let action = answer
        .get("action")
        .and_then(JsonValue::as_str)
        .unwrap_or("none");
    let content = answer
        .get("content")
        .and_then(|c| tollgate::json::to_string(c, &Default::default()).ok())
        .unwrap_or_else(|| "{}".to_owned());
    format!("action={action}, content={content}")
}

async fn elicitation(_: &RequestContext, args: Args, features: &InvocationFeatures) -> Outcome {
    let message = args
        .raw()
        .get("message")
        .and_then(JsonValue::as_str)
        .unwrap_or("Please answer");
    let request = InputRequest::elicitation(
        message,
        schema(
            r#"{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}"#,
        ),
    );
    Ok(match ask_client(features, request).await {
        Ok(answer) => {
            CompleteResult::from_tool_text(format!("User response: {}", describe(&answer))).into()
        }
        Err(why) => CompleteResult::from_tool_error_text(why).into(),
    })
}

async fn sampling(_: &RequestContext, args: Args, features: &InvocationFeatures) -> Outcome {
    let prompt = args
        .raw()
        .get("prompt")
        .cloned()
        .unwrap_or(JsonValue::from(""));
    let params = JsonObject::builder()
        .insert(
            "messages",
            JsonValue::from(vec![JsonValue::from(
                JsonObject::builder()
                    .insert("role", "user")
                    .insert(
                        "content",
                        JsonObject::builder()
                            .insert("type", "text")
                            .insert("text", prompt)
                            .build(),
                    )
                    .build(),
            )]),
        )
        .insert("maxTokens", 100)
        .build();
    Ok(
        match ask_client(features, InputRequest::sampling(params)?).await {
            Ok(answer) => {
                let text = answer
                    .get("content")
                    .and_then(|c| c.get("text"))
                    .and_then(JsonValue::as_str)
                    .unwrap_or("");
                CompleteResult::from_tool_text(format!("LLM response: {text}")).into()
            }
            Err(why) => CompleteResult::from_tool_error_text(why).into(),
        },
    )
}

async fn elicitation_defaults(
    _: &RequestContext,
    _: Args,
    features: &InvocationFeatures,
) -> Outcome {
    let request = InputRequest::elicitation(
        "Please review your details",
        schema(
            r#"{"type":"object","properties":{"name":{"type":"string","default":"John Doe"},"age":{"type":"integer","default":30},"score":{"type":"number","default":95.5},"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},"verified":{"type":"boolean","default":true}}}"#,
        ),
    );
    Ok(match ask_client(features, request).await {
        Ok(answer) => {
            CompleteResult::from_tool_text(format!("Elicitation completed: {}", describe(&answer)))
                .into()
        }
        Err(why) => CompleteResult::from_tool_error_text(why).into(),
    })
}

async fn elicitation_enums(_: &RequestContext, _: Args, features: &InvocationFeatures) -> Outcome {
    let request = InputRequest::elicitation(
        "Please choose",
        schema(
            r#"{"type":"object","properties":{
                "untitledSingle":{"type":"string","enum":["option1","option2","option3"]},
                "titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
                "legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},
                "untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},
                "titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}
            }}"#,
        ),
    );
    Ok(match ask_client(features, request).await {
        Ok(answer) => {
            CompleteResult::from_tool_text(format!("Elicitation completed: {}", describe(&answer)))
                .into()
        }
        Err(why) => CompleteResult::from_tool_error_text(why).into(),
    })
}

fn add_client_request_tools(
    builder: EndpointBuilder,
) -> Result<EndpointBuilder, Box<dyn std::error::Error>> {
    let legacy = [ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_06_18];
    let tool = |name: &str| ToolRegistration::with_name(name, legacy).json_object_arguments();
    Ok(builder
        .add_tool(
            tool("test_elicitation")
                .handler(elicitation)
                .input_request_declarations(may_ask())
                .description("Asks the user through the client (elicitation/create)")
                .build()?,
        )
        .add_tool(
            tool("test_sampling")
                .handler(sampling)
                .input_request_declarations(may_ask())
                .description("Asks the client's model (sampling/createMessage)")
                .build()?,
        )
        .add_tool(
            tool("test_elicitation_sep1034_defaults")
                .handler(elicitation_defaults)
                .input_request_declarations(may_ask())
                .description("Elicitation with defaults for every primitive type")
                .build()?,
        )
        .add_tool(
            tool("test_elicitation_sep1330_enums")
                .handler(elicitation_enums)
                .input_request_declarations(may_ask())
                .description("Elicitation with every enum form")
                .build()?,
        ))
}

/// Every kind of input, each asked for only by some calls.
fn may_ask() -> Vec<InputRequestDeclaration> {
    [
        InputRequestKind::Elicitation,
        InputRequestKind::Sampling,
        InputRequestKind::Roots,
    ]
    .into_iter()
    .map(|kind| InputRequestDeclaration::new(kind, InputRequirement::Conditional))
    .collect()
}

fn add_input_tools(
    builder: EndpointBuilder,
) -> Result<EndpointBuilder, Box<dyn std::error::Error>> {
    let tool = |name: &str| ToolRegistration::with_name(name, [MODERN]).json_object_arguments();
    Ok(builder
        .add_tool(
            tool("test_input_required_result_elicitation")
                .handler(ir_elicitation)
                .input_request_declarations(may_ask())
                .request_state_mode(RequestStateMode::FrameworkProtected)
                .description("Asks for a name, then greets")
                .build()?,
        )
        .add_tool(
            tool("test_input_required_result_sampling")
                .handler(ir_sampling)
                .input_request_declarations(may_ask())
                .request_state_mode(RequestStateMode::FrameworkProtected)
                .description("Asks the client's model a question")
                .build()?,
        )
        .add_tool(
            tool("test_input_required_result_list_roots")
                .handler(ir_list_roots)
                .input_request_declarations(may_ask())
                .request_state_mode(RequestStateMode::FrameworkProtected)
                .description("Asks for the client's roots")
                .build()?,
        )
        .add_tool(
            tool("test_input_required_result_request_state")
                .handler(ir_request_state)
                .input_request_declarations(may_ask())
                .request_state_mode(RequestStateMode::FrameworkProtected)
                .description("Round-trips sealed state")
                .build()?,
        )
        .add_tool(
            tool("test_input_required_result_multiple_inputs")
                .handler(ir_multiple_inputs)
                .input_request_declarations(may_ask())
                .request_state_mode(RequestStateMode::FrameworkProtected)
                .description("Asks for three inputs at once")
                .build()?,
        )
        .add_tool(
            tool("test_input_required_result_multi_round")
                .handler(ir_multi_round)
                .input_request_declarations(may_ask())
                .request_state_mode(RequestStateMode::FrameworkProtected)
                .description("Two rounds of input")
                .build()?,
        )
        .add_tool(
            tool("test_input_required_result_tampered_state")
                .handler(ir_request_state)
                .input_request_declarations(may_ask())
                .request_state_mode(RequestStateMode::FrameworkProtected)
                .description("Refuses altered state")
                .build()?,
        )
        .add_tool(
            tool("test_streaming_elicitation")
                .handler(ir_elicitation)
                .input_request_declarations(may_ask())
                .request_state_mode(RequestStateMode::FrameworkProtected)
                .description("Asks for input through an input_required result, never a request on the stream")
                .build()?,
        )
        .add_tool(
            tool("test_input_required_result_capabilities")
                .handler(ir_capabilities)
                .input_request_declarations(may_ask())
                .request_state_mode(RequestStateMode::FrameworkProtected)
                .description("Asks only for what the client declared")
                .build()?,
        ))
}

type TaskOutcome = Result<OperationResult, TaskError>;

/// A bounded whole number of seconds from `args[name]` (0 when absent).
fn seconds(args: &Args, name: &str) -> u64 {
    args.raw()
        .get(name)
        .and_then(JsonValue::as_number)
        .and_then(|n| n.to_u64())
        .unwrap_or(0)
        .min(600)
}

fn text_arg(args: &Args, name: &str, fallback: &str) -> String {
    args.raw()
        .get(name)
        .and_then(JsonValue::as_str)
        .unwrap_or(fallback)
        .to_owned()
}

async fn greet(_: &RequestContext, args: Args, _: &InvocationFeatures) -> TaskOutcome {
    let name = text_arg(&args, "name", "World");
    Ok(CompleteResult::from_tool_text(format!("Hello, {name}!")).into())
}

/// Sleeps, then reports: as a task when the client takes one (cancellable meanwhile), inline
/// otherwise.
async fn slow_compute(
    _: &RequestContext,
    args: Args,
    features: &InvocationFeatures,
) -> TaskOutcome {
    let secs = seconds(&args, "seconds");
    let label = text_arg(&args, "label", "job");
    let work = move || async move {
        tokio::time::sleep(std::time::Duration::from_secs(secs)).await;
        Ok(CompleteResult::from_tool_text(format!(
            "Computed {label} in {secs}s"
        )))
    };
    match features.find::<TaskCreation>() {
        Some(tasks) => Ok(tasks.spawn(|_| work()).await?.into()),
        None => Ok(work().await?.into()),
    }
}

async fn failing_job(_: &RequestContext, _: Args, features: &InvocationFeatures) -> TaskOutcome {
    let tasks = features
        .require::<TaskCreation>()
        .map_err(|_| TaskError::internal())?;
    let created = tasks
        .spawn(|_| async {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            Ok(CompleteResult::from_tool_error_text("The job failed"))
        })
        .await?;
    Ok(created.into())
}

async fn protocol_error_job(
    _: &RequestContext,
    _: Args,
    features: &InvocationFeatures,
) -> TaskOutcome {
    let tasks = features
        .require::<TaskCreation>()
        .map_err(|_| TaskError::internal())?;
    let created = tasks
        .spawn(|_| async {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            Err(TaskError::internal())
        })
        .await?;
    Ok(created.into())
}

fn confirm_schema() -> JsonObject {
    schema(
        r#"{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}"#,
    )
}

fn confirmed(answer: Option<&JsonValue>) -> bool {
    answer.is_some_and(|a| {
        a.get("action").and_then(JsonValue::as_str) == Some("accept")
            && a.get("content")
                .and_then(|c| c.get("confirm"))
                .and_then(JsonValue::as_bool)
                == Some(true)
    })
}

/// Asks the user to confirm as the task runs, then reports what it did.
async fn confirm_delete(
    _: &RequestContext,
    args: Args,
    features: &InvocationFeatures,
) -> TaskOutcome {
    let filename = text_arg(&args, "filename", "file");
    let tasks = features
        .require::<TaskCreation>()
        .map_err(|_| TaskError::internal())?;
    let created = tasks
        .spawn(move |task: TaskContext| async move {
            let ask = InputRequest::elicitation(format!("Delete {filename}?"), confirm_schema());
            let answers = task.request_input([("confirm_delete", ask)]).await?;
            Ok(CompleteResult::from_tool_text(
                if confirmed(answers.get("confirm_delete")) {
                    format!("Deleted {filename}")
                } else {
                    format!("Kept {filename}")
                },
            ))
        })
        .await?;
    Ok(created.into())
}

/// Asks two questions at once; answers may arrive one at a time.
async fn multi_input(_: &RequestContext, _: Args, features: &InvocationFeatures) -> TaskOutcome {
    let tasks = features
        .require::<TaskCreation>()
        .map_err(|_| TaskError::internal())?;
    let created = tasks
        .spawn(|task: TaskContext| async move {
            let answers = task
                .request_input([
                    ("name", ask_name("What is your name?")),
                    (
                        "confirm",
                        InputRequest::elicitation("Proceed?", confirm_schema()),
                    ),
                ])
                .await?;
            Ok(CompleteResult::from_tool_text(format!(
                "Received {} answers",
                answers.len()
            )))
        })
        .await?;
    Ok(created.into())
}

/// Gathers a name through an `input_required` round, then continues as a task.
async fn tool_with_task(
    ctx: &RequestContext,
    _: Args,
    features: &InvocationFeatures,
) -> TaskOutcome {
    let Some(name) = accepted(ctx, "user_name", "name") else {
        return Ok(InputRequiredResult::with_input_request(
            "user_name",
            ask_name("What is your name?"),
        )
        .into());
    };
    let tasks = features
        .require::<TaskCreation>()
        .map_err(|_| TaskError::internal())?;
    let created = tasks
        .spawn(
            move |_| async move { Ok(CompleteResult::from_tool_text(format!("Hello, {name}!"))) },
        )
        .await?;
    Ok(created.into())
}

fn add_task_tools(builder: EndpointBuilder) -> Result<EndpointBuilder, Box<dyn std::error::Error>> {
    let tool = |name: &str| ToolRegistration::with_name(name, [MODERN]).json_object_arguments();
    let greet_schema: JsonValue = from_str(
        r#"{"type":"object","properties":{"name":{"type":"string"}}}"#,
        &JsonLimits::default(),
    )?;
    Ok(builder
        .add_tool(
            ToolRegistration::with_name("greet", [MODERN])
                .input_schema(&greet_schema)?
                .handler(greet)
                .input_request_declarations(may_ask())
                .description("Greets by name, inline")
                .build()?,
        )
        .add_tool(
            tool("slow_compute")
                .handler(slow_compute)
                .input_request_declarations(may_ask())
                .description("Sleeps `seconds`, then reports; a task when the client takes one")
                .task_support(TaskSupport::Optional)
                .build()?,
        )
        .add_tool(
            tool("failing_job")
                .handler(failing_job)
                .input_request_declarations(may_ask())
                .description("A task that ends with a tool error")
                .task_support(TaskSupport::Required)
                .build()?,
        )
        .add_tool(
            tool("protocol_error_job")
                .handler(protocol_error_job)
                .input_request_declarations(may_ask())
                .description("A task that fails with a JSON-RPC error")
                .task_support(TaskSupport::Required)
                .build()?,
        )
        .add_tool(
            tool("confirm_delete")
                .handler(confirm_delete)
                .input_request_declarations(may_ask())
                .description("A task that asks for confirmation")
                .task_support(TaskSupport::Required)
                .build()?,
        )
        .add_tool(
            tool("multi_input")
                .handler(multi_input)
                .input_request_declarations(may_ask())
                .description("A task that asks two questions at once")
                .task_support(TaskSupport::Required)
                .build()?,
        )
        .add_tool(
            tool("test_tool_with_task")
                .handler(tool_with_task)
                .input_request_declarations(may_ask())
                .description("Asks for a name inline, then continues as a task")
                .task_support(TaskSupport::Required)
                .build()?,
        ))
}

fn address() -> Result<SocketAddr, Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    match (args.next().as_deref(), args.next()) {
        (None, _) => Ok("127.0.0.1:0".parse()?),
        (Some("--addr"), Some(addr)) => Ok(addr.parse()?),
        _ => Err("usage: conformance [--addr HOST:PORT]".into()),
    }
}

/// What the instances behind one URL share: tasks and sessions in PostgreSQL
/// (`TOLLGATE_CONFORMANCE_POSTGRES`, feature `postgres`) and the request-state key ring
/// (`TOLLGATE_REQUEST_STATE_KEYS`); alone, tasks in memory.
#[derive(Default)]
struct Shared {
    #[cfg(feature = "postgres")]
    postgres: Option<(
        tollgate::task::PostgresTaskStore,
        tollgate::endpoint::PostgresSessionStore,
    )>,
}

impl Shared {
    async fn from_env() -> Result<Self, Box<dyn std::error::Error>> {
        #[cfg(feature = "postgres")]
        if let Ok(url) = std::env::var("TOLLGATE_CONFORMANCE_POSTGRES") {
            return Ok(Self {
                postgres: Some((
                    tollgate::task::PostgresTaskStore::connect(&url).await?,
                    tollgate::endpoint::PostgresSessionStore::connect(&url).await?,
                )),
            });
        }
        Ok(Self::default())
    }

    fn apply(
        self,
        builder: EndpointBuilder,
    ) -> Result<EndpointBuilder, Box<dyn std::error::Error>> {
        let builder = match std::env::var_os("TOLLGATE_REQUEST_STATE_KEYS") {
            Some(_) => builder.request_state_keys(
                tollgate::endpoint::RequestStateKeyRing::from_env("TOLLGATE_REQUEST_STATE_KEYS")?,
            ),
            None => builder,
        };
        #[cfg(feature = "postgres")]
        if let Some((tasks, sessions)) = self.postgres {
            return Ok(builder.task_store(tasks).session_store(sessions));
        }
        Ok(builder.task_store(InMemoryTaskStore::default()))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let endpoint = endpoint(Shared::from_env().await?)?;
    let server = Server::bind(address()?, McpService::new(endpoint)).await?;
    println!("conformance fixture: http://{}/mcp", server.local_addr()?);
    server
        .serve_with_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
