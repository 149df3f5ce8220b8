//! `#[tool]`: an async fn becomes a Tollgate tool registration.
//!
//! This crate owns only the syntax: it reads the function and its attributes and writes the
//! code a user would otherwise write by hand against `tollgate`'s public registration API (an
//! arguments struct with serde and schemars derives, an adapter handler, and a `<name>_tool()`
//! constructor). It knows nothing of schemas, protocols or transports; every rule the runtime
//! enforces (Profile 1, mirrored-header eligibility, revisions) is still enforced by
//! `ToolBuilder::build()`. Use it through `tollgate::tool`.

mod options;

use options::{ToolOptions, parse_options, string};
use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{format_ident, quote, quote_spanned};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, FnArg, ItemFn, LitStr, Meta, Pat, ReturnType, Token, Type};

/// Turns an `async fn` into a tool: generates `<fn name>_tool()`, which returns
/// `Result<tollgate::ToolRegistration, tollgate::BuildError>`.
///
/// Attribute arguments (all optional):
///
/// - `name = "..."` (default: the fn name), `title = "..."`, `description = "..."` (default: the
///   doc comment), `icons = ["https://...", ...]` (absolute URIs, checked at build);
/// - `revisions = [V2026_07_28, V2025_11_25, V2025_06_18, V2025_03_26, V2024_11_05]` (default:
///   every revision the tool can be represented on, `ToolRegistration::named`: all five, or
///   2026-07-28 alone for a tool with `#[header]` arguments, `may_ask`, `request_state` or
///   `task_output`; its endpoint serves it on those it serves). Naming a revision that cannot
///   carry the tool is a compile error naming the revision;
/// - `rate_limiter = "..."`: an endpoint's named limiter (see `EndpointBuilder::add_rate_limiter`);
/// - the hints `read_only`, `destructive`, `idempotent`, `open_world` (each alone for true, or
///   `= true` / `= false`);
/// - `text_mirror = false`: no text copy of structured output (`structured_content_text_mirror`);
/// - `may_ask = [elicitation, sampling(required), roots(conditional)]`: the input the tool may
///   ask for (`input_request_declarations`; conditional unless marked `required`);
/// - `request_state = framework | application | none`: what the handler keeps across rounds
///   (`request_state_mode`);
/// - `task_output = Type`: a typed task-required tool (`argument_and_output_types` with
///   `operation_handler`) whose task completes with a `Type` (a path; alias generic types);
/// - `app_view = "ui://..."`: the MCP Apps view rendering its results (`app_view`; its endpoint
///   must serve the view), `app_visibility = model | app | model_and_app` (`app_visibility`).
///
/// `may_ask`, `request_state` and `task_output` need a fn returning `OperationResult`.
///
/// Parameters are the tool's arguments (each becomes a property of one object schema), except a
/// `&RequestContext` or `&InvocationFeatures` parameter, which receives the request's. On an
/// argument: `#[arg(name = "...", title = "...", description = "...")]` and `#[header("Suffix")]`
/// (publishes `x-mcp-header`; string, boolean or integer arguments on a 2026-07-28-only tool).
///
/// The fn returns `Result<T, E>`: a `T` of `OperationResult` makes an advanced tool, any other
/// `T` (serde `Serialize` + `JsonSchema`) a typed tool with structured output.
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use tollgate::{Endpoint, Implementation, ProtocolVersion, tool};
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Sum {
///     sum: i64,
/// }
///
/// /// Adds two integers.
/// #[tool(read_only, idempotent)]
/// async fn add(#[arg(description = "The first addend")] a: i64, b: i64) -> Result<Sum, Infallible> {
///     Ok(Sum { sum: a.saturating_add(b) })
/// }
///
/// let registration = add_tool()?;
/// assert_eq!(registration.name(), "add");
/// let required = registration.input_schema().get("required").and_then(|r| r.as_array());
/// assert_eq!(required.map(|r| r.len()), Some(2));
/// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28],
///     Implementation::new("calc", "1.0.0")).add_tool(registration).build()?;
/// assert_eq!(endpoint.tools().len(), 1);
/// # Ok::<(), tollgate::BuildError>(())
/// ```
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand(attr.into(), item.into()) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}

fn doc_comment(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => string(&nv.value).ok().map(|s| s.value().trim().to_owned()),
            _ => None,
        })
        .collect();
    let text = lines.join(" ").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// What a parameter is: the request context, the invocation features, or an argument.
enum Param {
    Context,
    Features,
    Argument {
        ident: syn::Ident,
        ty: Box<Type>,
        rename: Option<LitStr>,
        title: Option<LitStr>,
        description: Option<LitStr>,
        header: Option<LitStr>,
    },
}

fn is_reference_to(ty: &Type, name: &str) -> bool {
    match ty {
        Type::Reference(r) => match &*r.elem {
            Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == name),
            _ => false,
        },
        _ => false,
    }
}

fn parse_param(arg: &mut FnArg) -> syn::Result<Param> {
    let FnArg::Typed(pat_type) = arg else {
        return Err(syn::Error::new_spanned(
            arg,
            "#[tool] functions are free functions; `self` is not supported",
        ));
    };
    if is_reference_to(&pat_type.ty, "RequestContext") {
        return Ok(Param::Context);
    }
    if is_reference_to(&pat_type.ty, "InvocationFeatures") {
        return Ok(Param::Features);
    }
    let Pat::Ident(pat) = &*pat_type.pat else {
        return Err(syn::Error::new_spanned(
            &pat_type.pat,
            "a tool argument must be a plain identifier",
        ));
    };
    let (mut rename, mut title, mut description, mut header) = (None, None, None, None);
    let mut kept = Vec::new();
    for attr in pat_type.attrs.drain(..) {
        if attr.path().is_ident("arg") {
            let metas = attr.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)?;
            for meta in metas {
                let Meta::NameValue(nv) = &meta else {
                    return Err(syn::Error::new_spanned(
                        meta,
                        "expected name = \"...\", title = \"...\" or description = \"...\"",
                    ));
                };
                match nv.path.get_ident().map(ToString::to_string).as_deref() {
                    Some("name") => rename = Some(string(&nv.value)?),
                    Some("title") => title = Some(string(&nv.value)?),
                    Some("description") => description = Some(string(&nv.value)?),
                    _ => {
                        return Err(syn::Error::new_spanned(
                            &nv.path,
                            "unknown #[arg] key; expected name, title or description",
                        ));
                    }
                }
            }
        } else if attr.path().is_ident("header") {
            header = Some(attr.parse_args::<LitStr>()?);
        } else {
            kept.push(attr);
        }
    }
    pat_type.attrs = kept;
    Ok(Param::Argument {
        ident: pat.ident.clone(),
        ty: pat_type.ty.clone(),
        rename,
        title,
        description,
        header,
    })
}

/// The `T` of a `Result<T, E>` return type.
fn ok_type(output: &ReturnType) -> syn::Result<&Type> {
    let fail = || syn::Error::new(output.span(), "a #[tool] function returns Result<T, E>");
    let ReturnType::Type(_, ty) = output else {
        return Err(fail());
    };
    let Type::Path(path) = &**ty else {
        return Err(fail());
    };
    let last = path.path.segments.last().ok_or_else(fail)?;
    if last.ident != "Result" {
        return Err(fail());
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return Err(fail());
    };
    match args.args.first() {
        Some(syn::GenericArgument::Type(t)) => Ok(t),
        _ => Err(fail()),
    }
}

/// What one annotated function becomes, before it is wired to a free fn or a method.
struct Parts {
    tool_name: LitStr,
    args_struct: syn::Ident,
    args_def: TokenStream2,
    bindings: Vec<TokenStream2>,
    call: Vec<TokenStream2>,
    output: Type,
    error: syn::GenericArgument,
    registration: TokenStream2,
}

/// Reads `sig` (its parameters after `skip` leading ones) and the tool options into the
/// arguments struct and the registration expression (`handler` names the handler value).
fn parts(
    options: &ToolOptions,
    sig: &mut syn::Signature,
    attrs: &[Attribute],
    vis: &syn::Visibility,
    struct_name: syn::Ident,
    skip: usize,
) -> syn::Result<Parts> {
    if sig.asyncness.is_none() {
        return Err(syn::Error::new_spanned(
            sig.fn_token,
            "#[tool] needs an async fn",
        ));
    }
    if !sig.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &sig.generics,
            "a #[tool] function cannot be generic",
        ));
    }
    let mut params = Vec::new();
    for arg in sig.inputs.iter_mut().skip(skip) {
        params.push(parse_param(arg)?);
    }
    let output = ok_type(&sig.output)?.clone();
    let advanced = matches!(&output, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "OperationResult"));
    let fn_name = &sig.ident;
    let tool_name = options
        .name
        .clone()
        .unwrap_or_else(|| LitStr::new(&fn_name.to_string(), fn_name.span()));

    let (fields, bindings, call) = fields_and_call(&params);
    refuse_old_revisions(options, &params)?;
    let start = if options.revisions.is_empty() {
        quote!(::tollgate::ToolRegistration::named(#tool_name))
    } else {
        let r = &options.revisions;
        quote!(::tollgate::ToolRegistration::with_name(#tool_name, [#(::tollgate::ProtocolVersion::#r),*]))
    };
    if !advanced
        && (options.task_output.is_some()
            || !options.may_ask.is_empty()
            || options.request_state.is_some())
    {
        return Err(syn::Error::new(
            sig.output.span(),
            "task_output, may_ask and request_state need a fn returning Result<OperationResult, E>",
        ));
    }
    let (stage, install) = match (&options.task_output, advanced) {
        (Some(eventual), _) => (
            quote!(.argument_and_output_types::<#struct_name, #eventual>()),
            quote!(.operation_handler(__handler)),
        ),
        (None, true) => (
            quote!(.argument_type::<#struct_name>()),
            quote!(.handler(__handler)),
        ),
        (None, false) => (
            quote!(.argument_and_output_types::<#struct_name, #output>()),
            quote!(.handler(__handler)),
        ),
    };
    let metadata = metadata(options, attrs);
    let error = error_type(&sig.output)?;
    let args_def = quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #[derive(::tollgate::__private::serde::Deserialize, ::tollgate::__private::schemars::JsonSchema)]
        #[serde(crate = "::tollgate::__private::serde")]
        #[schemars(crate = "::tollgate::__private::schemars", title = #tool_name)]
        #vis struct #struct_name {
            #(#fields,)*
        }
    };
    let registration = quote! {
        #start
            #stage
            #install
            #(#metadata)*
            .build()
    };
    Ok(Parts {
        tool_name,
        args_struct: struct_name,
        args_def,
        bindings,
        call,
        output,
        error,
        registration,
    })
}

/// An explicit `revisions` list naming an `initialize` revision for a tool only 2026-07-28 can
/// carry: a compile error naming the revision and what to do.
fn refuse_old_revisions(options: &ToolOptions, params: &[Param]) -> syn::Result<()> {
    let feature = if params.iter().any(|p| {
        matches!(
            p,
            Param::Argument {
                header: Some(_),
                ..
            }
        )
    }) {
        "`#[header]` arguments"
    } else if !options.may_ask.is_empty() {
        "`may_ask`"
    } else if options.request_state.as_ref().is_some_and(|s| s != "none") {
        "`request_state`"
    } else if options.task_output.is_some() {
        "`task_output`"
    } else {
        return Ok(());
    };
    match options.revisions.iter().find(|r| *r != "V2026_07_28") {
        Some(old) => Err(syn::Error::new(
            old.span(),
            format!(
                "revision {old} cannot carry a tool with {feature}: only V2026_07_28 can; \
                 remove {old} from `revisions` (or drop `revisions` for the default)"
            ),
        )),
        None => Ok(()),
    }
}

/// The arguments struct's fields (with their rename, title, description and header
/// attributes), the names bound from it, and the handler call's arguments in parameter order
/// (the context and features by their fixed names).
fn fields_and_call(params: &[Param]) -> (Vec<TokenStream2>, Vec<TokenStream2>, Vec<TokenStream2>) {
    let mut fields = Vec::new();
    let mut bindings = Vec::new();
    let mut call = Vec::new();
    for param in params {
        match param {
            Param::Context => call.push(quote!(__context)),
            Param::Features => call.push(quote!(__features)),
            Param::Argument {
                ident,
                ty,
                rename,
                title,
                description,
                header,
            } => {
                let mut field_attrs = Vec::new();
                if let Some(r) = rename {
                    field_attrs.push(quote!(#[serde(rename = #r)]));
                }
                if let Some(t) = title {
                    field_attrs.push(quote!(#[schemars(title = #t)]));
                }
                if let Some(d) = description {
                    field_attrs.push(quote!(#[schemars(description = #d)]));
                }
                if let Some(h) = header {
                    field_attrs
                        .push(quote_spanned!(h.span()=> #[schemars(extend("x-mcp-header" = #h))]));
                }
                fields.push(quote!(#(#field_attrs)* #ident: #ty));
                bindings.push(quote!(#ident));
                call.push(quote!(#ident));
            }
        }
    }
    (fields, bindings, call)
}

/// The registration's builder calls for the tool options and the doc comment: title,
/// description, rate limiter, text mirror, input requests, request state, icons, MCP Apps view
/// and visibility, hints.
fn metadata(options: &ToolOptions, attrs: &[Attribute]) -> Vec<TokenStream2> {
    let mut metadata = Vec::new();
    if let Some(t) = &options.title {
        metadata.push(quote!(.title(#t)));
    }
    let description = options
        .description
        .as_ref()
        .map(LitStr::value)
        .or_else(|| doc_comment(attrs));
    if let Some(d) = description {
        metadata.push(quote!(.description(#d)));
    }
    if let Some(limiter) = &options.rate_limiter {
        metadata.push(quote!(.rate_limiter(#limiter)));
    }
    if let Some(mirror) = &options.text_mirror {
        metadata.push(quote!(.structured_content_text_mirror(#mirror)));
    }
    if !options.may_ask.is_empty() {
        let declarations = options.may_ask.iter().map(|(kind, required)| {
            let kind = match kind.to_string().as_str() {
                "sampling" => quote!(Sampling),
                "roots" => quote!(Roots),
                _ => quote!(Elicitation),
            };
            let requirement = if *required {
                quote!(Required)
            } else {
                quote!(Conditional)
            };
            quote!(::tollgate::tool::InputRequestDeclaration::new(
                ::tollgate::tool::InputRequestKind::#kind,
                ::tollgate::tool::InputRequirement::#requirement,
            ))
        });
        metadata.push(quote!(.input_request_declarations([#(#declarations),*])));
    }
    if let Some(mode) = &options.request_state {
        let mode = match mode.to_string().as_str() {
            "framework" => quote!(FrameworkProtected),
            "application" => quote!(ApplicationProtected),
            _ => quote!(None),
        };
        metadata.push(quote!(.request_state_mode(::tollgate::tool::RequestStateMode::#mode)));
    }
    for icon in &options.icons {
        metadata.push(quote!(.add_icon_source(#icon)));
    }
    if let Some(view) = &options.app_view {
        metadata.push(quote!(.app_view(#view)));
    }
    if let Some(visibility) = &options.app_visibility {
        let visibility = match visibility.to_string().as_str() {
            "model" => quote!(Model),
            "app" => quote!(App),
            _ => quote!(ModelAndApp),
        };
        metadata.push(quote!(.app_visibility(::tollgate::app::AppVisibility::#visibility)));
    }
    if !options.hints.is_empty() {
        let hints = options.hints.iter().map(|(h, span, value)| {
            let h = syn::Ident::new(h, *span);
            quote!(.#h(#value))
        });
        metadata.push(quote!(.annotations(::tollgate::tool::ToolAnnotations::new() #(#hints)*)));
    }
    metadata
}

/// The `E` of a `Result<T, E>` return type.
fn error_type(output: &ReturnType) -> syn::Result<syn::GenericArgument> {
    let error = match output {
        ReturnType::Type(_, ty) => match &**ty {
            Type::Path(p) => match p.path.segments.last().map(|s| &s.arguments) {
                Some(syn::PathArguments::AngleBracketed(a)) => a.args.iter().nth(1).cloned(),
                _ => None,
            },
            _ => None,
        },
        ReturnType::Default => None,
    };
    error.ok_or_else(|| syn::Error::new(output.span(), "a #[tool] function returns Result<T, E>"))
}

fn expand(attr: TokenStream2, item: TokenStream2) -> syn::Result<TokenStream2> {
    let options = parse_options(attr)?;
    let mut function: ItemFn = syn::parse2(item)?;
    let fn_name = function.sig.ident.clone();
    let vis = function.vis.clone();
    let attrs = function.attrs.clone();
    let p = parts(
        &options,
        &mut function.sig,
        &attrs,
        &vis,
        format_ident!("__TollgateArgs_{}", fn_name),
        0,
    )?;
    let Parts {
        tool_name,
        args_struct,
        args_def,
        bindings,
        call,
        output,
        error,
        registration,
    } = p;
    let handler = format_ident!("__tollgate_handler_{}", fn_name);
    let constructor = format_ident!("{}_tool", fn_name);
    let doc = format!(
        "The `{}` tool's registration, generated by `#[tool]` from [`{fn_name}`].",
        tool_name.value()
    );
    Ok(quote! {
        #function

        #args_def

        #[doc(hidden)]
        async fn #handler(
            __context: &::tollgate::RequestContext,
            __arguments: ::tollgate::ToolArguments<#args_struct>,
            __features: &::tollgate::InvocationFeatures,
        ) -> ::core::result::Result<#output, #error> {
            let #args_struct { #(#bindings,)* } = __arguments.into_converted();
            let _ = (__context, __features);
            #fn_name(#(#call),*).await
        }

        #[doc = #doc]
        #vis fn #constructor() -> ::core::result::Result<::tollgate::ToolRegistration, ::tollgate::BuildError> {
            let __handler = #handler;
            #registration
        }
    })
}

/// `#[tools]` on an `impl` block: every method marked `#[tool(...)]` (an `async fn(&self, ...)`)
/// becomes a tool whose handler holds an `Arc` of the value, and the block gains
/// `fn tools(self: &Arc<Self>) -> Result<Vec<ToolRegistration>, BuildError>`. The type must be
/// `Send + Sync + 'static`. Method attributes are those of [`tool`].
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use std::sync::Arc;
/// use tollgate::{tool, tools};
///
/// struct Shop {
///     prices: Vec<(String, u32)>,
/// }
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Price {
///     cents: Option<u32>,
/// }
///
/// #[tools]
/// impl Shop {
///     /// The price of one item, in cents.
///     #[tool(name = "shop.price")]
///     async fn price(&self, sku: String) -> Result<Price, Infallible> {
///         let cents = self.prices.iter().find(|(s, _)| *s == sku).map(|(_, p)| *p);
///         Ok(Price { cents })
///     }
/// }
///
/// let shop = Arc::new(Shop { prices: vec![("TEA-001".into(), 899)] });
/// let registrations = shop.tools()?;
/// assert_eq!(registrations[0].name(), "shop.price");
/// # Ok::<(), tollgate::BuildError>(())
/// ```
#[proc_macro_attribute]
pub fn tools(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand_impl(attr.into(), item.into()) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}

/// The options of a method marked `#[tool(...)]`, its attribute taken off (`None` for a method
/// not marked); refuses a method that does not take `&self` first.
fn tool_method(method: &mut syn::ImplItemFn) -> syn::Result<Option<ToolOptions>> {
    let Some(position) = method.attrs.iter().position(|a| a.path().is_ident("tool")) else {
        return Ok(None);
    };
    let tool_attr = method.attrs.remove(position);
    let options = match &tool_attr.meta {
        Meta::Path(_) => ToolOptions::default(),
        Meta::List(list) => parse_options(list.tokens.clone())?,
        Meta::NameValue(nv) => {
            return Err(syn::Error::new_spanned(
                nv,
                "expected #[tool] or #[tool(...)]",
            ));
        }
    };
    match method.sig.inputs.first() {
        Some(FnArg::Receiver(r)) if matches!(r.kind, syn::ReceiverKind::Reference(_, _, None)) => {
            Ok(Some(options))
        }
        _ => Err(syn::Error::new_spanned(
            &method.sig.ident,
            "a #[tool] method takes &self first",
        )),
    }
}

fn expand_impl(attr: TokenStream2, item: TokenStream2) -> syn::Result<TokenStream2> {
    if !attr.is_empty() {
        return Err(syn::Error::new_spanned(attr, "#[tools] takes no arguments"));
    }
    let mut block: syn::ItemImpl = syn::parse2(item)?;
    if block.trait_.is_some() || !block.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &block.self_ty,
            "#[tools] goes on an inherent, non-generic impl block",
        ));
    }
    let self_ty = block.self_ty.clone();
    let type_name = match &*self_ty {
        Type::Path(p) => p
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default(),
        _ => {
            return Err(syn::Error::new_spanned(
                &self_ty,
                "#[tools] needs a named type",
            ));
        }
    };
    let mut generated = Vec::new();
    let mut registrations = Vec::new();
    for item in block.items.iter_mut() {
        let syn::ImplItem::Fn(method) = item else {
            continue;
        };
        let Some(options) = tool_method(method)? else {
            continue;
        };
        let method_name = method.sig.ident.clone();
        let vis = syn::Visibility::Inherited;
        let attrs = method.attrs.clone();
        let struct_name = format_ident!("__TollgateArgs_{}_{}", type_name, method_name);
        let p = parts(&options, &mut method.sig, &attrs, &vis, struct_name, 1)?;
        let Parts {
            args_struct,
            args_def,
            bindings,
            call,
            output,
            error,
            registration,
            ..
        } = p;
        let handler = format_ident!("__TollgateHandler_{}_{}", type_name, method_name);
        generated.push(quote! {
            #args_def

            #[doc(hidden)]
            #[allow(non_camel_case_types)]
            struct #handler(::std::sync::Arc<#self_ty>);

            impl<'a> ::tollgate::context::Handler<'a, ::tollgate::ToolArguments<#args_struct>, #output, #error> for #handler {
                type Future = ::core::pin::Pin<::std::boxed::Box<
                    dyn ::core::future::Future<Output = ::core::result::Result<#output, #error>> + Send + 'a,
                >>;

                fn call(
                    &self,
                    __context: &'a ::tollgate::RequestContext,
                    __arguments: ::tollgate::ToolArguments<#args_struct>,
                    __features: &'a ::tollgate::InvocationFeatures,
                ) -> Self::Future {
                    let __this = ::std::sync::Arc::clone(&self.0);
                    ::std::boxed::Box::pin(async move {
                        let #args_struct { #(#bindings,)* } = __arguments.into_converted();
                        let _ = (__context, __features);
                        __this.#method_name(#(#call),*).await
                    })
                }
            }
        });
        registrations.push(quote! {
            {
                let __handler = #handler(::std::sync::Arc::clone(self));
                __tools.push(#registration?);
            }
        });
    }
    Ok(quote! {
        #block

        #(#generated)*

        impl #self_ty {
            /// The tools of this value's `#[tool]` methods, generated by `#[tools]`; each handler
            /// holds a clone of the `Arc`.
            pub fn tools(self: &::std::sync::Arc<Self>) -> ::core::result::Result<::std::vec::Vec<::tollgate::ToolRegistration>, ::tollgate::BuildError> {
                let mut __tools = ::std::vec::Vec::new();
                #(#registrations)*
                Ok(__tools)
            }
        }
    })
}
