//! The catalog demo's endpoint: a small tea-shop catalog with seven tools (one per registration
//! shape, a long-running one that streams progress, one that asks the user first, one that
//! continues as a durable task, and one that reports what the request context knows), a prompt
//! whose argument completes, a price list and one resource per item (the links `catalog.get`
//! returns); an interceptor that closes restocking during maintenance and a sanitizer that masks
//! email addresses. Shared by `examples/catalog` and `tollgate serve-demo`.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tollgate::json::{JsonObject, JsonValue};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, ProtocolVersion, RequestContext, ToolArguments,
    ToolRegistration,
    content::{ContentBlock, ImageContent, ResourceContents, ResourceLink, TextContent},
    context::{
        ClientRequests, HandlerFailure, HandlerOutput, InputRequest, InputRequiredResult,
        Intercepted, ProgressReporter, SanitizeError, ToolResultSanitizer,
    },
    endpoint::ReplayStore,
    prompt::{
        Completion, CompletionRequest, PromptArgument, PromptArguments, PromptMessage,
        PromptRegistration, PromptResult,
    },
    resource::{
        ResourceOutput, ResourceRegistration, ResourceRequest, ResourceTemplateRegistration,
    },
    skill::SkillRegistration,
    task::{TaskContext, TaskCreation, TaskError, TaskStore},
    tool,
    tool::{
        CompleteResult, InputRequestDeclaration, InputRequestKind, InputRequirement,
        OperationResult, TaskSupport, ToolAnnotations, ToolOutput,
    },
    transport::ResponseStream,
};

#[path = "search.rs"]
mod search;
#[path = "seasonal.rs"]
pub(crate) mod seasonal;

const MODERN: ProtocolVersion = ProtocolVersion::V2026_07_28;
/// The catalog's skill, a directory beside the demo's source (read when the endpoint is built).
const SKILLS_DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/catalog/skills/tea-shop-assistant"
);
/// The revisions the demo serves on its one URL (2024-11-05 over stdio only). `catalog.stock` mirrors an argument into a
/// header, which only 2026-07-28 can do, so it selects that revision alone.
const ALL: [ProtocolVersion; 5] = [
    ProtocolVersion::V2026_07_28,
    ProtocolVersion::V2025_11_25,
    ProtocolVersion::V2025_06_18,
    ProtocolVersion::V2025_03_26,
    ProtocolVersion::V2024_11_05,
];

struct Item {
    sku: &'static str,
    name: &'static str,
    price_cents: u32,
    stock: [(&'static str, u32); 2],
}

const ITEMS: &[Item] = &[
    Item {
        sku: "TEA-001",
        name: "Assam breakfast tea",
        price_cents: 899,
        stock: [("acme", 42), ("globex", 3)],
    },
    Item {
        sku: "TEA-002",
        name: "Darjeeling first flush",
        price_cents: 1499,
        stock: [("acme", 7), ("globex", 0)],
    },
    Item {
        sku: "MUG-001",
        name: "Stoneware mug",
        price_cents: 1250,
        stock: [("acme", 18), ("globex", 25)],
    },
    Item {
        sku: "POT-001",
        name: "Cast iron teapot",
        price_cents: 4900,
        stock: [("acme", 2), ("globex", 9)],
    },
];

/// An 8x8 teal PNG, the demo's product thumbnail.
const THUMBNAIL_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x08, 0x08, 0x02, 0x00, 0x00, 0x00, 0x4b, 0x6d, 0x29,
    0xdc, 0x00, 0x00, 0x00, 0x11, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xd0, 0xca, 0xbf, 0x86,
    0x15, 0x31, 0x0c, 0x2d, 0x09, 0x00, 0xae, 0xd5, 0x5b, 0xc1, 0x6f, 0x77, 0x4d, 0x06, 0x00, 0x00,
    0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// Arguments of `catalog.get`.
#[derive(Deserialize, schemars::JsonSchema)]
struct GetArguments {
    /// The item's SKU, e.g. `TEA-001`.
    sku: String,
}

async fn get(
    _: &RequestContext,
    arguments: ToolArguments<GetArguments>,
    _: &InvocationFeatures,
) -> Result<OperationResult, tollgate::content::ContentError> {
    let sku = &arguments.converted().sku;
    let Some(item) = ITEMS.iter().find(|item| item.sku == sku) else {
        return Ok(CompleteResult::from_tool_error_text("No item has that SKU.").into());
    };
    // The link names the item's resource, which `resources/read` serves (template below).
    let link = ResourceLink::new(&format!("catalog://items/{}", item.sku), item.sku)?
        .title(item.name)
        .mime_type("application/json")?;
    let output = ToolOutput::builder()
        .add_content(TextContent::new(format!(
            "{}: {} ({} cents)",
            item.sku, item.name, item.price_cents
        )))
        .add_content(link)
        .add_content(ImageContent::new(THUMBNAIL_PNG, "image/png")?)
        .build();
    Ok(CompleteResult::with_tool_output(output).build().into())
}

const STOCK_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "tenant": {"type": "string", "enum": ["acme", "globex"], "x-mcp-header": "Tenant",
               "description": "The warehouse tenant; mirrored in the Mcp-Param-Tenant header"},
    "sku": {"type": "string", "description": "The item's SKU"}
  },
  "required": ["tenant", "sku"],
  "additionalProperties": false
}"#;

async fn stock(
    _: &RequestContext,
    arguments: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let field = |name| {
        arguments
            .raw()
            .get(name)
            .and_then(JsonValue::as_str)
            .unwrap_or_default()
    };
    let (tenant, sku) = (field("tenant"), field("sku"));
    let count = ITEMS
        .iter()
        .find(|item| item.sku == sku)
        .and_then(|item| item.stock.iter().find(|(t, _)| *t == tenant))
        .map(|(_, n)| *n);
    Ok(match count {
        Some(n) => CompleteResult::from_tool_structured_content(
            JsonObject::builder()
                .insert("sku", sku)
                .insert("tenant", tenant)
                .insert("inStock", n)
                .build(),
        ),
        None => CompleteResult::from_tool_error_text("No item has that SKU."),
    }
    .into())
}

#[derive(Serialize, schemars::JsonSchema)]
struct InventoryTotals {
    /// Items counted.
    items: u32,
    /// Units in stock across the counted warehouses.
    units: u32,
}

/// A slow stock count: one item at a time, reporting progress after each. On 2025-11-25 it
/// frees the HTTP connection after the first item (the client resumes the stream with
/// `Last-Event-ID` and receives the rest), as a long job on a busy server would.
#[tool(
    name = "catalog.inventory",
    title = "Inventory count",
    description = "Counts units in stock item by item, reporting progress as it goes",
    revisions = [V2026_07_28, V2025_11_25, V2025_06_18, V2025_03_26, V2024_11_05],
    read_only
)]
async fn inventory(
    #[arg(description = "Count only this tenant's warehouse (default: every tenant)")]
    tenant: Option<String>,
    features: &InvocationFeatures,
) -> Result<InventoryTotals, Infallible> {
    let tenant = tenant.as_deref();
    let progress = features.find::<ProgressReporter>();
    let total = ITEMS.len() as f64;
    let mut totals = InventoryTotals { items: 0, units: 0 };
    for (i, item) in ITEMS.iter().enumerate() {
        if features.cancellation().is_cancelled() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
        totals.items += 1;
        totals.units += item
            .stock
            .iter()
            .filter(|(t, _)| tenant.is_none_or(|wanted| wanted == *t))
            .map(|(_, n)| n)
            .sum::<u32>();
        if let Some(progress) = progress {
            let _ = progress.report((i + 1) as f64, Some(total), Some(item.sku));
        }
        if i == 0
            && let Some(stream) = features.find::<ResponseStream>()
        {
            stream.close_connection();
        }
    }
    Ok(totals)
}

/// Arguments of `catalog.reserve`.
#[derive(Deserialize, schemars::JsonSchema)]
struct ReserveArguments {
    /// The item to reserve.
    sku: String,
}

/// The quantity question `catalog.reserve` asks.
fn quantity_question(name: &str) -> InputRequest {
    let schema = JsonObject::builder()
        .insert("type", "object")
        .insert(
            "properties",
            JsonObject::builder()
                .insert(
                    "quantity",
                    JsonObject::builder()
                        .insert("type", "integer")
                        .insert("minimum", 1)
                        .insert("maximum", 10)
                        .build(),
                )
                .build(),
        )
        .insert(
            "required",
            JsonValue::from(vec![JsonValue::from("quantity")]),
        )
        .build();
    InputRequest::elicitation(format!("How many of {name} shall we reserve?"), schema)
}

/// The quantity an accepted answer carries.
fn quantity(answer: &JsonValue) -> Option<u64> {
    if answer.get("action").and_then(JsonValue::as_str) != Some("accept") {
        return None;
    }
    answer
        .get("content")?
        .get("quantity")?
        .as_number()?
        .to_u64()
        .filter(|q| (1..=10).contains(q))
}

/// Reserves an item after asking the user how many. On 2026-07-28 the question travels in an
/// `input_required` result and comes back with the retry; on the 2025 revisions it is a request
/// to the client on the call's own stream.
async fn reserve(
    ctx: &RequestContext,
    arguments: ToolArguments<ReserveArguments>,
    features: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let Some(item) = ITEMS
        .iter()
        .find(|item| item.sku == arguments.converted().sku)
    else {
        return Ok(CompleteResult::from_tool_error_text("No item has that SKU.").into());
    };
    if !ctx.client_capabilities().elicitation() {
        return Ok(CompleteResult::from_tool_error_text(
            "Reserving needs a client that can ask its user (elicitation).",
        )
        .into());
    }
    let answer = if ctx.protocol_version() == ProtocolVersion::V2026_07_28 {
        match ctx.input_response("quantity") {
            Some(answer) => Some(answer.clone()),
            None => {
                return Ok(InputRequiredResult::with_input_request(
                    "quantity",
                    quantity_question(item.name),
                )
                .into());
            }
        }
    } else {
        match features.find::<ClientRequests>() {
            Some(client) => client.send(quantity_question(item.name)).await.ok(),
            None => None,
        }
    };
    Ok(match answer.as_ref().and_then(quantity) {
        Some(n) => {
            // The demo keeps no stock ledger: its log is where a reservation lands.
            eprintln!("catalog: reserved {n} × {}", item.sku);
            CompleteResult::from_tool_text(format!("Reserved {n} × {}.", item.name))
        }
        None => CompleteResult::from_tool_text("Nothing reserved."),
    }
    .into())
}

/// Arguments of `catalog.restock`.
#[derive(Deserialize, schemars::JsonSchema)]
struct RestockArguments {
    /// The item to order more of.
    sku: String,
    /// Units to order, 1 to 100.
    quantity: u32,
}

fn approval_question(quantity: u32, name: &str, cents: u64) -> InputRequest {
    let schema = JsonObject::builder()
        .insert("type", "object")
        .insert(
            "properties",
            JsonObject::builder()
                .insert(
                    "approve",
                    JsonObject::builder().insert("type", "boolean").build(),
                )
                .build(),
        )
        .insert(
            "required",
            JsonValue::from(vec![JsonValue::from("approve")]),
        )
        .build();
    InputRequest::elicitation(
        format!(
            "Approve a purchase order of {quantity} × {name} for ${}.{:02}?",
            cents / 100,
            cents % 100
        ),
        schema,
    )
}

fn approved(answer: Option<&JsonValue>) -> bool {
    answer.is_some_and(|a| {
        a.get("action").and_then(JsonValue::as_str) == Some("accept")
            && a.get("content")
                .and_then(|c| c.get("approve"))
                .and_then(JsonValue::as_bool)
                == Some(true)
    })
}

/// The order's outcome, as text and structured content.
fn ordered(sku: &str, name: &str, quantity: u32, cents: u64) -> CompleteResult {
    CompleteResult::with_tool_output(
        ToolOutput::builder()
            .add_content(TextContent::new(format!("Ordered {quantity} × {name}.")))
            .structured_content(
                JsonObject::builder()
                    .insert("sku", sku)
                    .insert("ordered", u64::from(quantity))
                    .insert("costCents", cents)
                    .build(),
            )
            .build(),
    )
    .build()
}

/// Orders stock from the supplier. With a client that takes tasks (2026-07-28 and the tasks
/// extension), the order continues as a durable task: it asks the supplier for a quote, asks
/// the user to approve the purchase order (when the client can ask), then waits for delivery;
/// the client polls `tasks/get`. Other clients wait for a short inline order.
async fn restock(
    ctx: &RequestContext,
    arguments: ToolArguments<RestockArguments>,
    features: &InvocationFeatures,
) -> Result<OperationResult, TaskError> {
    let RestockArguments { sku, quantity } = arguments.into_converted();
    let Some(item) = ITEMS.iter().find(|item| item.sku == sku) else {
        return Ok(CompleteResult::from_tool_error_text("No item has that SKU.").into());
    };
    if !(1..=100).contains(&quantity) {
        return Ok(CompleteResult::from_tool_error_text("Order 1 to 100 units.").into());
    }
    // The wholesale price: 60% of retail.
    let cents = u64::from(quantity) * u64::from(item.price_cents) * 6 / 10;
    let (sku, name) = (item.sku, item.name);
    let Some(tasks) = features.find::<TaskCreation>() else {
        tokio::time::sleep(Duration::from_millis(300)).await;
        return Ok(ordered(sku, name, quantity, cents).into());
    };
    let can_ask = ctx.client_capabilities().elicitation();
    let created = tasks
        .spawn(move |task: TaskContext| async move {
            task.set_status_message("Asking the supplier for a quote")
                .await?;
            tokio::time::sleep(Duration::from_secs(1)).await;
            if can_ask {
                task.set_status_message("Waiting for approval").await?;
                let question = approval_question(quantity, name, cents);
                let answers = task.request_input([("approve", question)]).await?;
                if !approved(answers.get("approve")) {
                    return Ok(CompleteResult::from_tool_text(
                        "Purchase order declined; nothing ordered.",
                    ));
                }
            }
            task.set_status_message("Awaiting delivery").await?;
            tokio::time::sleep(Duration::from_secs(2)).await;
            Ok(ordered(sku, name, quantity, cents))
        })
        .await?;
    Ok(created.into())
}

const OCCASIONS: [&str; 4] = ["breakfast", "afternoon", "evening", "celebration"];

/// The `catalog.pairing` prompt: asks the model to pick a tea for an occasion from the catalog.
async fn pairing(
    _: &RequestContext,
    arguments: PromptArguments,
    _: &InvocationFeatures,
) -> Result<PromptResult, Infallible> {
    let occasion = arguments.get("occasion").unwrap_or("any occasion");
    let teas: Vec<String> = ITEMS
        .iter()
        .filter(|item| item.sku.starts_with("TEA-"))
        .map(|item| format!("{} ({})", item.name, item.sku))
        .collect();
    Ok(
        PromptResult::with_message(PromptMessage::user(TextContent::new(format!(
            "Our teas: {}. Which one would you serve for {occasion}, and why?",
            teas.join(", ")
        ))))
        .description("Tea pairing for an occasion"),
    )
}

/// Occasions starting with what was typed.
async fn occasions(
    _: &RequestContext,
    request: CompletionRequest,
) -> Result<Completion, Infallible> {
    let typed = request.value().to_ascii_lowercase();
    Ok(Completion::from_values(
        OCCASIONS.iter().filter(|o| o.starts_with(&typed)).copied(),
    ))
}

/// `catalog://items/{sku}`: one item as JSON.
async fn item_resource(
    _: &RequestContext,
    request: ResourceRequest,
    _: &InvocationFeatures,
) -> Result<ResourceOutput, Box<dyn std::error::Error + Send + Sync>> {
    let sku = request.variable("sku").unwrap_or_default();
    let Some(item) = ITEMS.iter().find(|item| item.sku == sku) else {
        return Ok(ResourceOutput::not_found());
    };
    let json = tollgate::json::to_string(
        &JsonObject::builder()
            .insert("sku", item.sku)
            .insert("name", item.name)
            .insert("priceCents", item.price_cents)
            .build()
            .into(),
        &Default::default(),
    )?;
    Ok(ResourceOutput::with_contents(ResourceContents::text(
        request.uri(),
        Some("application/json"),
        json,
    )?))
}

/// `catalog://price-list`: every item's price, as CSV.
async fn price_list(
    _: &RequestContext,
    request: ResourceRequest,
    _: &InvocationFeatures,
) -> Result<ResourceOutput, tollgate::content::ContentError> {
    let mut csv = String::from("sku,name,price_cents\n");
    for item in ITEMS {
        csv.push_str(&format!(
            "{},{},{}\n",
            item.sku, item.name, item.price_cents
        ));
    }
    Ok(ResourceOutput::with_contents(ResourceContents::text(
        request.uri(),
        Some("text/csv"),
        csv,
    )?))
}

/// Reports what the server knows about this call, read from the request context: the client's
/// `User-Agent` header, the trace it continues (`_meta.traceparent`, else the `traceparent`
/// header, validated) and the `From` header (an email address: the demo's sanitizer masks it).
async fn whoami(
    context: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let request = context.originating_request();
    let agent: String = request
        .header("user-agent")
        .unwrap_or("unknown")
        .chars()
        .take(64)
        .collect();
    let trace = context.trace_context().map_or("none", |t| t.trace_id());
    let from = request.header("from").unwrap_or("nobody");
    let mut text = format!("client: {agent}; trace: {trace}; from: {from}");
    // In protected mode, the token's subject and scopes.
    let identity = context.admission_identity();
    if let Some(user) = identity.principal_name() {
        let scopes: Vec<&str> = identity.scopes().collect();
        text.push_str(&format!("; user: {user} ({})", scopes.join(" ")));
    }
    Ok(CompleteResult::from_tool_text(text).into())
}

/// The demo's interceptor: while the shop is in maintenance (the `X-Catalog-Maintenance: on`
/// header stands in for a real switch), `catalog.restock` is refused, and the refusal logged to
/// standard error with the caller's trace id; every other call proceeds.
async fn maintenance(call: Intercepted<'_>) -> Result<HandlerOutput, HandlerFailure> {
    let context = call.context();
    let closed = context
        .originating_request()
        .header("x-catalog-maintenance")
        == Some("on");
    if closed && context.operation_name() == Some("catalog.restock") {
        let trace = context.trace_context().map_or("none", |t| t.trace_id());
        eprintln!("catalog: refused catalog.restock during maintenance (trace {trace})");
        let refusal =
            CompleteResult::from_tool_error_text("The catalog is in maintenance; try again later.");
        return Ok(HandlerOutput::Tool(OperationResult::Complete(refusal)));
    }
    call.proceed().await
}

/// The demo's sanitizer: every word of a tool's text that looks like an email address becomes
/// `[email]`, whichever tool wrote it.
struct MaskEmails;

impl ToolResultSanitizer for MaskEmails {
    fn sanitize(
        &self,
        _: &RequestContext,
        _tool: &str,
        _arguments: &JsonObject,
        result: CompleteResult,
    ) -> Result<CompleteResult, SanitizeError> {
        let output = result.tool_output();
        let masked = |text: &str| -> String {
            text.split(' ')
                .map(|word| if word.contains('@') { "[email]" } else { word })
                .collect::<Vec<_>>()
                .join(" ")
        };
        if !output
            .content()
            .iter()
            .any(|b| matches!(b, ContentBlock::Text(t) if t.text().contains('@')))
        {
            return Ok(result);
        }
        let mut rewritten = ToolOutput::builder().error(output.is_error());
        for block in output.content() {
            rewritten = match block {
                ContentBlock::Text(t) => rewritten.add_content(TextContent::new(masked(t.text()))),
                other => rewritten.add_content(other.clone()),
            };
        }
        if let Some(structured) = output.structured_content() {
            rewritten = rewritten.structured_content(structured.clone());
        }
        Ok(CompleteResult::with_tool_output(rewritten.build()).build())
    }
}

/// Where the demo keeps its tasks: `TOLLGATE_CATALOG_TASKS`, or a file in the temporary
/// directory.
#[allow(
    dead_code,
    reason = "the soak example shares this file and keeps its tasks in memory"
)]
pub(crate) fn task_database() -> std::path::PathBuf {
    std::env::var_os("TOLLGATE_CATALOG_TASKS").map_or_else(
        || std::env::temp_dir().join("tollgate-catalog-tasks.sqlite3"),
        std::path::PathBuf::from,
    )
}

/// The one kind of input the catalog asks for: the user, through elicitation, on the calls
/// that need it.
fn asks_the_user() -> InputRequestDeclaration {
    InputRequestDeclaration::new(InputRequestKind::Elicitation, InputRequirement::Conditional)
}

/// The demo's endpoint; its request state single use through `uses` when given.
pub(crate) fn endpoint(
    tasks: impl TaskStore,
    uses: Option<Arc<dyn ReplayStore>>,
) -> Result<Endpoint, Box<dyn std::error::Error>> {
    let endpoint = builder(tasks, &[], uses)?.build()?;
    seasonal::attach(&endpoint);
    Ok(endpoint)
}

/// The demo's endpoint, not yet built: `restock_scopes` are the OAuth scopes `catalog.restock`
/// requires (none unless the endpoint is made a protected resource: `protect.rs`). With `uses`,
/// every request state it seals is single use: a `catalog.reserve` retry reserves once, and the
/// same retry sent again (a client that lost the answer, or a replay) gets the fixed
/// `Invalid request state` error instead of a second reservation.
pub(crate) fn builder(
    tasks: impl TaskStore,
    restock_scopes: &[&str],
    uses: Option<Arc<dyn ReplayStore>>,
) -> Result<tollgate::endpoint::EndpointBuilder, Box<dyn std::error::Error>> {
    // Typed tools come from `#[tool]` (and `search.rs`); the advanced ones use the builder.
    let get = ToolRegistration::with_name("catalog.get", ALL)
        .argument_type::<GetArguments>()
        .handler(get)
        .title("Catalog item")
        .description("Describes one item, with a link to it and a thumbnail")
        .annotations(ToolAnnotations::new().read_only_hint(true))
        .build()?;
    let schema = tollgate::json::from_str(STOCK_SCHEMA, &tollgate::json::JsonLimits::default())?;
    let stock = ToolRegistration::with_name("catalog.stock", [MODERN])
        .input_schema(&schema)?
        .handler(stock)
        .title("Stock level")
        .description("Units in stock for one item in one tenant's warehouse")
        .annotations(ToolAnnotations::new().read_only_hint(true))
        .build()?;
    let reserve = ToolRegistration::with_name("catalog.reserve", ALL)
        .argument_type::<ReserveArguments>()
        .handler(reserve)
        .input_request_declarations([asks_the_user()])
        .title("Reserve an item")
        .description("Reserves an item after asking the user how many")
        .build()?;
    let restock = ToolRegistration::with_name("catalog.restock", ALL)
        .argument_type::<RestockArguments>()
        .handler(restock)
        .input_request_declarations([asks_the_user()])
        .title("Restock an item")
        .description(
            "Orders units from the supplier; a durable task (with the user's approval) for \
             clients that take tasks",
        )
        .task_support(TaskSupport::Optional)
        .required_scopes(restock_scopes.iter().copied())
        .build()?;
    let inventory = inventory_tool()?;
    let whoami = ToolRegistration::with_name("catalog.whoami", ALL)
        .json_object_arguments()
        .handler(whoami)
        .title("Who am I")
        .description("Reports the client, trace and sender the server sees for this call")
        .annotations(ToolAnnotations::new().read_only_hint(true))
        .build()?;
    let builder = Endpoint::with_path(
        "/mcp",
        ALL,
        Implementation::new("tollgate-catalog", env!("CARGO_PKG_VERSION"))
            .title("Tollgate catalog demo"),
    )
    .instructions(
        "A tea shop catalog: search items, describe one, check stock per tenant, or count the \
         whole inventory.",
    )
    .add_tool(search::tool()?)
    .app_view(search::view()?)
    .add_tool(get)
    .add_tool(stock)
    .add_tool(inventory)
    .add_tool(reserve)
    .add_tool(restock)
    .add_tool(whoami)
    .add_tool(seasonal::offer_tool()?)
    .catalog_event(seasonal::EVENT, seasonal::apply)
    .live_catalogs()
    .interceptor(maintenance)
    .tool_result_sanitizer(MaskEmails)
    .task_store(tasks)
    .add_resource(
        ResourceRegistration::with_uri("catalog://price-list", "Price list", ALL)
            .handler(price_list)
            .description("Every item's price, in cents")
            .mime_type("text/csv")
            .build()?,
    )
    .add_resource_template(
        ResourceTemplateRegistration::with_uri_template("catalog://items/{sku}", "Item", ALL)
            .handler(item_resource)
            .description("One catalog item, by SKU")
            .mime_type("application/json")
            .build()?,
    )
    // A skill read from disk (the skills extension, on 2026-07-28): every file is checked and
    // hashed here, before the server starts.
    .add_skill(SkillRegistration::from_directory(SKILLS_DIR)?.build()?)
    .add_prompt(
        PromptRegistration::with_name("catalog.pairing", ALL)
            .handler(pairing)
            .title("Tea pairing")
            .description("Asks which of the catalog's teas suits an occasion")
            .add_argument(
                PromptArgument::required("occasion").description("breakfast, afternoon, ..."),
            )
            .completion(occasions)
            .build()?,
    );
    let builder = match uses {
        Some(uses) => builder.request_state_single_use(uses),
        None => builder,
    };
    shared_request_state_keys(builder)
}

/// Several instances behind one URL share the key ring `catalog.reserve`'s sealed state is
/// sealed with: `TOLLGATE_REQUEST_STATE_KEYS` (the ring's text form, `ID=hex:SECRET,...`, the
/// sealing key first) or `TOLLGATE_REQUEST_STATE_KEYS_FILE` (the same in a file). Unset, the
/// key is random for this process.
fn shared_request_state_keys(
    builder: tollgate::endpoint::EndpointBuilder,
) -> Result<tollgate::endpoint::EndpointBuilder, Box<dyn std::error::Error>> {
    use tollgate::endpoint::RequestStateKeyRing;
    if std::env::var_os("TOLLGATE_REQUEST_STATE_KEYS").is_some() {
        return Ok(builder.request_state_keys(RequestStateKeyRing::from_env(
            "TOLLGATE_REQUEST_STATE_KEYS",
        )?));
    }
    match std::env::var_os("TOLLGATE_REQUEST_STATE_KEYS_FILE") {
        Some(path) => Ok(builder.request_state_keys(RequestStateKeyRing::from_file(path)?)),
        None => Ok(builder),
    }
}
