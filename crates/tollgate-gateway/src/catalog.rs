//! An upstream's prompts, resources and resource templates made Tollgate registrations, or the
//! reason one cannot be: names (prefixed) and URIs (prefixed as `PREFIX+uri`, so two upstreams'
//! URIs cannot collide, and mapped back before forwarding) through the registrations' own
//! constructors; handlers that forward and read the upstream's answer back through the content
//! constructors (a prompt's messages, a resource's contents, their URIs mapped again on the way
//! up), and the read fallback of a prefixed upstream (its URIs that are neither listed nor
//! templated), with what passes between caller and upstream meanwhile relayed as for a tool (`relay.rs`:
//! progress, logs, cancellation, `input_required`, a 2025 upstream's requests). Knows nothing of configuration files or of how the upstream is reached.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tollgate::context::{ClientRequests, Handler, Outcome};
use tollgate::json::{JsonObject, JsonValue};
use tollgate::prompt::{
    Completion, CompletionRequest, PromptArgument, PromptArguments, PromptOutcome,
    PromptRegistration, PromptResult,
};
use tollgate::resource::{
    ResourceBuilder, ResourceFallback, ResourceOutcome, ResourceOutput, ResourceRegistration,
    ResourceRequest, ResourceTemplateRegistration,
};
use tollgate::tool::MissingCapabilities;
use tollgate::{InvocationFeatures, ProtocolVersion, RequestContext};
use tollgate_client::{CallOptions, Client};

use crate::error::upstream_code::{
    METHOD_NOT_FOUND, MISSING_CAPABILITY, RESOURCE_NOT_FOUND_2025, RESOURCE_NOT_FOUND_2026,
};
use crate::error::{Failed, ForwardError};
use crate::import::{Kind, Refusal, RefusalReason, text};
use crate::link::Link;
use crate::naming::Naming;
use crate::relay::{InputRelay, asks_input, input_required_of, missing_capabilities_of, relayed};
use tollgate::context::InputRequiredResult;

/// What the import of an upstream's prompts and resources needs.
pub(crate) struct Source<'a> {
    pub(crate) upstream: &'a str,
    pub(crate) link: &'a Arc<Link>,
    pub(crate) naming: &'a Naming,
    pub(crate) call_timeout: Duration,
    pub(crate) revisions: &'a [ProtocolVersion],
    /// Whether the upstream offers `completion/complete` (then its prompts and templates
    /// complete through it).
    pub(crate) completes: bool,
}

/// The prompt `entry` of `prompts/list` made a registration, or the reason it cannot be.
pub(crate) fn import_prompt(
    source: &Source<'_>,
    entry: &JsonValue,
) -> Result<PromptRegistration, Refusal> {
    let listed = entry.get("name").and_then(JsonValue::as_str);
    let refuse = |reason| Refusal::of(Kind::Prompt, source.upstream, listed.unwrap_or(""), reason);
    let name = listed.ok_or_else(|| refuse(RefusalReason::Malformed))?;
    let handler = Prompting {
        forward: source.forward(),
        name: Arc::from(name),
    };
    let mut builder = PromptRegistration::with_name(source.naming.name(name), source.revisions())
        .handler(handler);
    let malformed = || refuse(RefusalReason::Malformed);
    if let Some(title) = text(entry, "title").map_err(|()| malformed())? {
        builder = builder.title(title);
    }
    if let Some(description) = text(entry, "description").map_err(|()| malformed())? {
        builder = builder.description(description);
    }
    let mut declared_names: Vec<Arc<str>> = Vec::new();
    if let Some(arguments) = entry.get("arguments") {
        for argument in arguments.as_array().ok_or_else(malformed)? {
            let name = argument
                .get("name")
                .and_then(JsonValue::as_str)
                .ok_or_else(malformed)?;
            let required = match argument.get("required") {
                None => false,
                Some(flag) => flag.as_bool().ok_or_else(malformed)?,
            };
            let mut declared = if required {
                PromptArgument::required(name)
            } else {
                PromptArgument::optional(name)
            };
            if let Some(description) = text(argument, "description").map_err(|()| malformed())? {
                declared = declared.description(description);
            }
            builder = builder.add_argument(declared);
            declared_names.push(Arc::from(name));
        }
    }
    if source.completes {
        let forward = source.forward();
        let declared_names: Arc<[Arc<str>]> = declared_names.into();
        let reference = JsonObject::builder()
            .insert("type", "ref/prompt")
            .insert("name", name)
            .build();
        builder = builder.completion(move |_: &RequestContext, request: CompletionRequest| {
            forward
                .clone()
                .complete(reference.clone(), Arc::clone(&declared_names), request)
        });
    }
    builder
        .build()
        .map_err(|_| refuse(RefusalReason::InvalidName))
}

/// The resource `entry` of `resources/list` made a registration, or the reason it cannot be.
pub(crate) fn import_resource(
    source: &Source<'_>,
    entry: &JsonValue,
) -> Result<ResourceRegistration, Refusal> {
    let listed = entry.get("uri").and_then(JsonValue::as_str);
    let refuse = |reason| {
        Refusal::of(
            Kind::Resource,
            source.upstream,
            listed.unwrap_or(""),
            reason,
        )
    };
    let (Some(uri), Some(name)) = (listed, entry.get("name").and_then(JsonValue::as_str)) else {
        return Err(refuse(RefusalReason::Malformed));
    };
    let revisions = source.revisions();
    let builder = ResourceRegistration::with_uri(source.naming.uri(uri).as_str(), name, revisions)
        .handler(source.forward());
    described(builder, entry)
        .ok_or_else(|| refuse(RefusalReason::Malformed))?
        .build()
        .map_err(|_| refuse(RefusalReason::InvalidName))
}

/// The template `entry` of `resources/templates/list` made a registration, or the reason it
/// cannot be.
pub(crate) fn import_template(
    source: &Source<'_>,
    entry: &JsonValue,
) -> Result<ResourceTemplateRegistration, Refusal> {
    let listed = entry.get("uriTemplate").and_then(JsonValue::as_str);
    let refuse = |reason| {
        Refusal::of(
            Kind::Template,
            source.upstream,
            listed.unwrap_or(""),
            reason,
        )
    };
    let (Some(template), Some(name)) = (listed, entry.get("name").and_then(JsonValue::as_str))
    else {
        return Err(refuse(RefusalReason::Malformed));
    };
    let revisions = source.revisions();
    let builder = ResourceTemplateRegistration::with_uri_template(
        source.naming.uri(template).as_str(),
        name,
        revisions,
    )
    .handler(source.forward());
    // Its variables complete through the upstream's template, by the upstream's own URI
    // template, where the upstream offers completions.
    let builder = if source.completes {
        let forward = source.forward();
        let variables: Arc<[Arc<str>]> = variables_of(template).into();
        let reference = JsonObject::builder()
            .insert("type", "ref/resource")
            .insert("uri", template)
            .build();
        builder.completion(move |_: &RequestContext, request: CompletionRequest| {
            forward
                .clone()
                .complete(reference.clone(), Arc::clone(&variables), request)
        })
    } else {
        builder
    };
    described(builder, entry)
        .ok_or_else(|| refuse(RefusalReason::Malformed))?
        .build()
        .map_err(|_| refuse(RefusalReason::InvalidName))
}

impl Source<'_> {
    /// The forwarder of this upstream's prompts and reads.
    fn forward(&self) -> Forward {
        Forward {
            link: Arc::clone(self.link),
            timeout: self.call_timeout,
            naming: self.naming.clone(),
        }
    }

    /// The revisions a registration of this upstream serves.
    fn revisions(&self) -> tollgate::endpoint::ProtocolVersions {
        self.revisions.iter().copied().collect()
    }
}

/// The variable names of a URI template (`{name}` expressions; the endpoint parses the template
/// itself when it builds the registration, refusing anything past RFC 6570 Level 1).
fn variables_of(template: &str) -> Vec<Arc<str>> {
    template
        .split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}'))
        .map(|(name, _)| Arc::from(name))
        .collect()
}

/// A resource's or template's `title`, `description` and `mimeType` from its list entry;
/// `None` when one is not a string.
fn described<K>(mut builder: ResourceBuilder<K>, entry: &JsonValue) -> Option<ResourceBuilder<K>> {
    if let Some(title) = text(entry, "title").ok()? {
        builder = builder.title(title);
    }
    if let Some(description) = text(entry, "description").ok()? {
        builder = builder.description(description);
    }
    if let Some(mime) = text(entry, "mimeType").ok()? {
        builder = builder.mime_type(mime);
    }
    Some(builder)
}

/// Forwards a prompt or a read to the upstream and reads its answer back.
#[derive(Clone)]
struct Forward {
    link: Arc<Link>,
    timeout: Duration,
    naming: Naming,
}

/// A prompt's handler: `prompts/get` forwarded to the upstream under its own name.
struct Prompting {
    forward: Forward,
    name: Arc<str>,
}

/// The future of a forwarding handler.
type Forwarding<'a, T> = Pin<Box<dyn Future<Output = Result<T, ForwardError>> + Send + 'a>>;

impl<'a> Handler<'a, PromptArguments, PromptOutcome, ForwardError> for Prompting {
    type Future = Forwarding<'a, PromptOutcome>;

    fn call(
        &self,
        context: &'a RequestContext,
        arguments: PromptArguments,
        features: &'a InvocationFeatures,
    ) -> Self::Future {
        let (forward, name) = (self.forward.clone(), Arc::clone(&self.name));
        Box::pin(async move { forward.prompt(context, &name, &arguments, features).await })
    }
}

/// A resource's or template's handler: `resources/read` forwarded under the upstream's URI.
impl<'a> Handler<'a, ResourceRequest, ResourceOutcome, ForwardError> for Forward {
    type Future = Forwarding<'a, ResourceOutcome>;

    fn call(
        &self,
        context: &'a RequestContext,
        request: ResourceRequest,
        features: &'a InvocationFeatures,
    ) -> Self::Future {
        let forward = self.clone();
        Box::pin(async move { forward.read(context, request.uri(), features, false).await })
    }
}

impl Forward {
    /// `prompts/get` forwarded (see [`sent`](Self::sent) for what is relayed), its answer read
    /// back.
    async fn prompt(
        &self,
        context: &RequestContext,
        name: &str,
        arguments: &PromptArguments,
        features: &InvocationFeatures,
    ) -> Result<PromptOutcome, ForwardError> {
        let mut object = JsonObject::builder();
        for (key, value) in arguments.iter() {
            object.push(key, value);
        }
        let object = object.build();
        let client = self.link.client();
        let sent = self.sent(context, features, &client, |options| {
            client.get_prompt_with(name, object, options)
        });
        let result = match sent.await? {
            Sent::Result(result) => result,
            Sent::Relayed(relayed) => return Ok(relayed.outcome()),
        };
        let object = result.as_object().ok_or(ForwardError::Malformed)?;
        PromptResult::from_wire(&self.naming.served_prompt(object))
            .map(Into::into)
            .ok_or(ForwardError::Malformed)
    }

    /// A prompt or a read sent by `send` on `client` (the one its relay is read for) with the
    /// caller's progress, log level, cancellation and requests relayed ([`relayed`]), and the upstream's `input_required` as the caller's
    /// revision allows ([`InputRelay`]): returned to a 2026-07-28 caller, answered through the
    /// caller's own stream for a 2025 caller given a channel (within the client's
    /// `max_input_rounds`); an upstream's -32021 for capabilities the caller lacks answered as
    /// the endpoint's own on any revision (the caller is refused -32021 naming them, extensions
    /// too, as for a tool).
    async fn sent<F>(
        &self,
        context: &RequestContext,
        features: &InvocationFeatures,
        client: &Client,
        send: impl FnOnce(CallOptions) -> F,
    ) -> Result<Sent, Failed>
    where
        F: Future<Output = Result<JsonValue, tollgate_client::Error>>,
    {
        let asks = features.find::<ClientRequests>().is_some();
        let relay = InputRelay::of(context, client, true, asks);
        let relays_input = relay.relays;
        let options = relay.call_options();
        let result = match relayed(&self.link, self.timeout, features, options, send).await {
            Err(failed) if failed.code() == Some(MISSING_CAPABILITY) => {
                let missing = missing_capabilities_of(context.client_capabilities(), failed.data())
                    .ok_or(ForwardError::Upstream)?;
                return Ok(Sent::Relayed(Relayed::Missing(missing)));
            }
            result => result?,
        };
        if relays_input && asks_input(&result) {
            let relayed = input_required_of(&result, true).ok_or(ForwardError::Malformed)?;
            return Ok(Sent::Relayed(Relayed::Input(relayed)));
        }
        Ok(Sent::Result(result))
    }

    /// `completion/complete` for `reference` (the upstream's prompt by its own name, or its
    /// template by its own URI template), with the values already chosen for its other
    /// `declared` arguments (variables) as context; the answer read back (at most 100 values,
    /// each a string).
    async fn complete(
        self,
        reference: JsonObject,
        declared: Arc<[Arc<str>]>,
        request: CompletionRequest,
    ) -> Result<Completion, ForwardError> {
        let mut context = JsonObject::builder();
        for argument in declared.iter() {
            if let Some(value) = request.context(argument) {
                context.push(&**argument, value);
            }
        }
        let context = context.build();
        let mut params = JsonObject::builder().insert("ref", reference).insert(
            "argument",
            JsonObject::builder()
                .insert("name", request.argument())
                .insert("value", request.value())
                .build(),
        );
        if !context.is_empty() {
            params.push(
                "context",
                JsonObject::builder().insert("arguments", context).build(),
            );
        }
        let client = self.link.client();
        let call = client.request("completion/complete", Some(params.build()));
        let result = self.link.bounded(self.timeout, call).await?;
        completion_of(&result).ok_or(ForwardError::Malformed)
    }

    /// `resources/read` forwarded (see [`sent`](Self::sent) for what is relayed), its URIs
    /// mapped both ways. For an `unlisted` URI (the fallback's), the upstream's "Resource not
    /// found" (-32002 on 2025 revisions, -32602 on 2026-07-28: the read carries no other
    /// parameter) is the endpoint's own not-found.
    async fn read(
        &self,
        context: &RequestContext,
        served: &str,
        features: &InvocationFeatures,
        unlisted: bool,
    ) -> Result<ResourceOutcome, ForwardError> {
        let uri = self
            .naming
            .upstream_uri(served)
            .ok_or(ForwardError::Malformed)?;
        let client = self.link.client();
        let sent = self.sent(context, features, &client, |options| {
            client.read_resource_with(uri, options)
        });
        let result = match sent.await {
            Ok(Sent::Result(result)) => result,
            Ok(Sent::Relayed(relayed)) => return Ok(relayed.outcome()),
            // An upstream without resources (-32601) has none of the URIs it sent either.
            Err(failed)
                if unlisted
                    && matches!(
                        failed.code(),
                        Some(RESOURCE_NOT_FOUND_2025 | RESOURCE_NOT_FOUND_2026 | METHOD_NOT_FOUND)
                    ) =>
            {
                return Ok(ResourceOutput::not_found().into());
            }
            Err(failed) => return Err(failed.into()),
        };
        let contents = result
            .get("contents")
            .and_then(JsonValue::as_array)
            .ok_or(ForwardError::Malformed)?;
        // The contents' URIs as the client knows them.
        let mapped = self.naming.served_contents(contents);
        let mapped = JsonObject::builder().insert("contents", mapped).build();
        ResourceOutput::from_wire(&mapped)
            .map(Into::into)
            .ok_or(ForwardError::Malformed)
    }
}

/// The link of an upstream now, or `None` while it has not joined (a pending upstream).
pub(crate) type Resolve = Arc<dyn Fn() -> Option<Arc<Link>> + Send + Sync>;

/// The read fallback of a prefixed upstream: every `PREFIX+uri` no listed resource or template
/// routes (a URI its answers carried) is read upstream under its own URI through the link
/// `resolve` gives at the time of the read (so it follows reconnections and a late join; not
/// joined yet: not found). Its not-found is the endpoint's "Resource not found". `None` for an
/// upstream without a prefix (its URIs cannot be told from another upstream's) or a fallback the
/// runtime refuses.
pub(crate) fn unlisted_reads(
    upstream: &str,
    naming: &Naming,
    call_timeout: Duration,
    revisions: &[ProtocolVersion],
    resolve: Resolve,
) -> Option<ResourceFallback> {
    let prefix = naming.uri("");
    if prefix.is_empty() {
        return None;
    }
    let unlisted = Unlisted {
        resolve,
        naming: naming.clone(),
        timeout: call_timeout,
    };
    let revisions: tollgate::endpoint::ProtocolVersions = revisions.iter().copied().collect();
    ResourceFallback::with_prefix(prefix, upstream, revisions)
        .handler(unlisted)
        .build()
        .ok()
}

/// The handler of [`unlisted_reads`].
struct Unlisted {
    resolve: Resolve,
    naming: Naming,
    timeout: Duration,
}

impl<'a> Handler<'a, ResourceRequest, ResourceOutcome, ForwardError> for Unlisted {
    type Future = Forwarding<'a, ResourceOutcome>;

    fn call(
        &self,
        context: &'a RequestContext,
        request: ResourceRequest,
        features: &'a InvocationFeatures,
    ) -> Self::Future {
        let forward = (self.resolve)().map(|link| Forward {
            link,
            timeout: self.timeout,
            naming: self.naming.clone(),
        });
        Box::pin(async move {
            match forward {
                Some(forward) => forward.read(context, request.uri(), features, true).await,
                None => Ok(ResourceOutput::not_found().into()),
            }
        })
    }
}

/// What an upstream answered a prompt or a read.
enum Sent {
    /// Its result.
    Result(JsonValue),
    /// What the caller is answered instead of a result.
    Relayed(Relayed),
}

/// An upstream's answer to a prompt or a read that goes to the caller as it came.
enum Relayed {
    /// Its `input_required`, the caller's to answer.
    Input(InputRequiredResult),
    /// Its refusal for capabilities the caller lacks, refused as the endpoint's own.
    Missing(MissingCapabilities),
}

impl Relayed {
    fn outcome<T>(self) -> Outcome<T> {
        match self {
            Self::Input(required) => required.into(),
            Self::Missing(missing) => missing.into(),
        }
    }
}

/// A `completion/complete` result read: `completion.values` (strings), `total` and `hasMore`
/// where given; `None` for any other shape.
fn completion_of(result: &JsonValue) -> Option<Completion> {
    let completion = result.get("completion")?.as_object()?;
    let values = completion
        .get("values")?
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect::<Option<Vec<String>>>()?;
    let total = match completion.get("total") {
        None | Some(JsonValue::Null) => None,
        Some(total) => Some(total.as_number()?.to_u64()?),
    };
    let more = match completion.get("hasMore") {
        None | Some(JsonValue::Null) => false,
        Some(flag) => flag.as_bool()?,
    };
    let read = Completion::from_values(values);
    Some(if more && !read.has_more() {
        read.with_more(total)
    } else {
        read
    })
}

#[cfg(test)]
mod tests {
    use super::variables_of;

    #[test]
    fn a_template_s_variables_are_its_expressions() {
        let names =
            |t: &str| -> Vec<String> { variables_of(t).iter().map(|n| n.to_string()).collect() };
        assert_eq!(names("file:///notes/{folder}/{name}"), ["folder", "name"]);
        assert_eq!(names("file:///fixed"), Vec::<String>::new());
        assert_eq!(names("x:{a}-{b.c}"), ["a", "b.c"]);
    }
}
