//! `#[tool(...)]`'s attribute arguments: parsed into [`ToolOptions`], every unknown key or
//! malformed value a compile error at its span. Knows nothing of what the options generate.

use proc_macro2::{Span, TokenStream as TokenStream2};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, LitStr, Meta, Token};

#[derive(Default)]
pub(crate) struct ToolOptions {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) rate_limiter: Option<LitStr>,
    pub(crate) revisions: Vec<syn::Ident>,
    /// Behaviour hints: the builder method, its span and the value (`read_only` is true,
    /// `open_world = false` false).
    pub(crate) hints: Vec<(&'static str, Span, bool)>,
    /// `text_mirror = false`.
    pub(crate) text_mirror: Option<syn::LitBool>,
    /// `may_ask = [...]`: each kind with whether it is required.
    pub(crate) may_ask: Vec<(syn::Ident, bool)>,
    /// `request_state = framework | application | none`.
    pub(crate) request_state: Option<syn::Ident>,
    /// `task_output = Type`: a typed task-required tool.
    pub(crate) task_output: Option<syn::Path>,
    /// `icons = ["https://...", ...]`.
    pub(crate) icons: Vec<LitStr>,
    /// `app_view = "ui://..."`: the MCP Apps view rendering the tool's results.
    pub(crate) app_view: Option<LitStr>,
    /// `app_visibility = model | app | model_and_app`.
    pub(crate) app_visibility: Option<syn::Ident>,
}

fn boolean(expr: &Expr) -> syn::Result<syn::LitBool> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Bool(b), ..
        }) => Ok(b.clone()),
        other => Err(syn::Error::new_spanned(other, "expected true or false")),
    }
}

fn ident_of(expr: &Expr) -> Option<&syn::Ident> {
    match expr {
        Expr::Path(p) => p.path.get_ident(),
        _ => None,
    }
}

/// `[elicitation, sampling(required), roots(conditional)]`.
fn may_ask(expr: &Expr) -> syn::Result<Vec<(syn::Ident, bool)>> {
    let Expr::Array(array) = expr else {
        return Err(syn::Error::new_spanned(
            expr,
            "expected a list such as [elicitation, roots(required)]",
        ));
    };
    let kind = |e: &Expr| -> syn::Result<syn::Ident> {
        match ident_of(e) {
            Some(i) if ["elicitation", "sampling", "roots"].contains(&i.to_string().as_str()) => {
                Ok(i.clone())
            }
            _ => Err(syn::Error::new_spanned(
                e,
                "unknown input kind; expected elicitation, sampling or roots",
            )),
        }
    };
    let mut out = Vec::new();
    for element in &array.elems {
        match element {
            Expr::Call(call) if call.args.len() == 1 => {
                let required = match call
                    .args
                    .first()
                    .and_then(ident_of)
                    .map(ToString::to_string)
                {
                    Some(r) if r == "required" => true,
                    Some(r) if r == "conditional" => false,
                    _ => {
                        return Err(syn::Error::new_spanned(
                            &call.args,
                            "expected required or conditional",
                        ));
                    }
                };
                out.push((kind(&call.func)?, required));
            }
            other => out.push((kind(other)?, false)),
        }
    }
    Ok(out)
}

pub(crate) fn string(expr: &Expr) -> syn::Result<LitStr> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(s.clone()),
        other => Err(syn::Error::new_spanned(other, "expected a string literal")),
    }
}

pub(crate) fn parse_options(attr: TokenStream2) -> syn::Result<ToolOptions> {
    let mut options = ToolOptions::default();
    let metas = Punctuated::<Meta, Token![,]>::parse_terminated.parse2(attr)?;
    for meta in metas {
        match &meta {
            Meta::Path(p) => {
                let hint = match p.get_ident().map(ToString::to_string).as_deref() {
                    Some("read_only") => "read_only_hint",
                    Some("destructive") => "destructive_hint",
                    Some("idempotent") => "idempotent_hint",
                    Some("open_world") => "open_world_hint",
                    _ => {
                        return Err(syn::Error::new_spanned(
                            p,
                            "unknown #[tool] flag; expected read_only, destructive, idempotent or open_world",
                        ));
                    }
                };
                options.hints.push((hint, p.span(), true));
            }
            Meta::NameValue(nv) => {
                let key = nv
                    .path
                    .get_ident()
                    .map(ToString::to_string)
                    .unwrap_or_default();
                let hint = match key.as_str() {
                    "read_only" => Some("read_only_hint"),
                    "destructive" => Some("destructive_hint"),
                    "idempotent" => Some("idempotent_hint"),
                    "open_world" => Some("open_world_hint"),
                    _ => None,
                };
                if let Some(hint) = hint {
                    let value = boolean(&nv.value)?;
                    options.hints.push((hint, nv.path.span(), value.value));
                    continue;
                }
                match key.as_str() {
                    "name" => options.name = Some(string(&nv.value)?),
                    "title" => options.title = Some(string(&nv.value)?),
                    "description" => options.description = Some(string(&nv.value)?),
                    "rate_limiter" => options.rate_limiter = Some(string(&nv.value)?),
                    "text_mirror" => options.text_mirror = Some(boolean(&nv.value)?),
                    "may_ask" => options.may_ask = may_ask(&nv.value)?,
                    "request_state" => match ident_of(&nv.value) {
                        Some(i)
                            if ["none", "framework", "application"]
                                .contains(&i.to_string().as_str()) =>
                        {
                            options.request_state = Some(i.clone());
                        }
                        _ => {
                            return Err(syn::Error::new_spanned(
                                &nv.value,
                                "expected none, framework or application",
                            ));
                        }
                    },
                    "task_output" => match &nv.value {
                        Expr::Path(p) if p.qself.is_none() => {
                            options.task_output = Some(p.path.clone());
                        }
                        other => {
                            return Err(syn::Error::new_spanned(
                                other,
                                "expected the output type's path (use a type alias for a generic type)",
                            ));
                        }
                    },
                    "icons" => options.icons.extend(icons(&nv.value)?),
                    "app_view" => options.app_view = Some(string(&nv.value)?),
                    "app_visibility" => match ident_of(&nv.value) {
                        Some(i)
                            if ["model", "app", "model_and_app"]
                                .contains(&i.to_string().as_str()) =>
                        {
                            options.app_visibility = Some(i.clone());
                        }
                        _ => {
                            return Err(syn::Error::new_spanned(
                                &nv.value,
                                "expected model, app or model_and_app",
                            ));
                        }
                    },
                    "revisions" => {
                        options.revisions.extend(revisions(&nv.value)?);
                        if options.revisions.is_empty() {
                            return Err(syn::Error::new_spanned(
                                &nv.value,
                                "a tool must select at least one revision",
                            ));
                        }
                    }
                    _ => {
                        return Err(syn::Error::new_spanned(
                            &nv.path,
                            "unknown #[tool] argument; expected name, title, description, rate_limiter, revisions, text_mirror, may_ask, request_state, task_output, icons, app_view or app_visibility",
                        ));
                    }
                }
            }
            Meta::List(list) => {
                return Err(syn::Error::new_spanned(list, "unexpected list in #[tool]"));
            }
        }
    }
    Ok(options)
}

/// The icon URIs of `icons = [...]`.
fn icons(value: &Expr) -> syn::Result<Vec<LitStr>> {
    let Expr::Array(array) = value else {
        return Err(syn::Error::new_spanned(
            value,
            "expected a list of icon URIs",
        ));
    };
    array.elems.iter().map(string).collect()
}

/// The revision names `revisions = [...]` takes, newest first.
pub(crate) const REVISION_NAMES: [&str; 5] = [
    "V2026_07_28",
    "V2025_11_25",
    "V2025_06_18",
    "V2025_03_26",
    "V2024_11_05",
];

/// The revisions of `revisions = [...]`, each one of [`REVISION_NAMES`] (an empty list is the
/// caller's to refuse).
fn revisions(value: &Expr) -> syn::Result<Vec<syn::Ident>> {
    let Expr::Array(array) = value else {
        return Err(syn::Error::new_spanned(
            value,
            "expected a list such as [V2026_07_28]",
        ));
    };
    let mut list = Vec::new();
    for element in &array.elems {
        match element {
            Expr::Path(p)
                if p.path
                    .get_ident()
                    .is_some_and(|i| REVISION_NAMES.contains(&i.to_string().as_str())) =>
            {
                list.extend(p.path.get_ident().cloned());
            }
            other => {
                return Err(syn::Error::new_spanned(
                    other,
                    "unknown revision; expected V2026_07_28, V2025_11_25, V2025_06_18, \
                     V2025_03_26 or V2024_11_05",
                ));
            }
        }
    }
    Ok(list)
}
