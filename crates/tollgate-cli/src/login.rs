//! `tollgate login URL` and the tokens the remote commands reuse: the OAuth client's
//! authorization-code flow with a loopback redirect (the browser opened when one can be, the URL
//! printed always), its tokens kept in the user's config directory ([`token_file`]) through
//! tollgate-client's `FileTokenStore`. It owns where the file lives and the login command; the
//! flow is the client's.

use std::path::PathBuf;
use std::sync::Arc;

use tollgate_client::Client;
use tollgate_client::oauth::{FileTokenStore, LoopbackRedirect, OAuthClient, TokenStore};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Overrides where tokens are kept (a file path).
pub(crate) const TOKEN_FILE_VARIABLE: &str = "TOLLGATE_TOKEN_FILE";

/// The token file: `$TOLLGATE_TOKEN_FILE`, else `tollgate/tokens.json` in the user's config
/// directory (`$XDG_CONFIG_HOME` or `~/.config` on Linux and other Unixes,
/// `~/Library/Application Support` on macOS, `%APPDATA%` on Windows).
pub(crate) fn token_file() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(TOKEN_FILE_VARIABLE).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let config = if cfg!(windows) {
        var("APPDATA")?
    } else if cfg!(target_os = "macos") {
        var("HOME")?.join("Library").join("Application Support")
    } else {
        var("XDG_CONFIG_HOME").or_else(|| Some(var("HOME")?.join(".config")))?
    };
    Some(config.join("tollgate").join("tokens.json"))
}

/// The OAuth client the remote commands use: stored tokens (refreshed when they can be), no
/// browser; a server that wants a login gets an error naming `tollgate login`.
pub(crate) fn stored() -> Option<Arc<OAuthClient>> {
    let store = Arc::new(FileTokenStore::new(token_file()?));
    OAuthClient::builder()
        .token_store(store)
        .build()
        .ok()
        .map(Arc::new)
}

/// Opens `url` in the user's browser when a launcher is at hand; prints it in any case.
fn open_browser(url: &str) {
    eprintln!("Open this URL to log in:\n  {url}");
    launch_browser(url);
}

/// Opens `url` in the user's browser when a launcher is at hand (`open`, `start`, `xdg-open`).
pub(crate) fn launch_browser(url: &str) {
    let launcher: &[&str] = if cfg!(target_os = "macos") {
        &["open"]
    } else if cfg!(windows) {
        &["cmd", "/C", "start", ""]
    } else {
        &["xdg-open"]
    };
    if let Some((program, args)) = launcher.split_first() {
        let _ = std::process::Command::new(program)
            .args(args)
            .arg(url)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
}

/// `tollgate login URL`: connects with the authorization-code flow (PKCE, a loopback redirect),
/// keeps the tokens in the token file, and says where.
pub(crate) async fn login(url: &str, headers: &[String]) -> Result<()> {
    let path = token_file().ok_or("no config directory: set TOLLGATE_TOKEN_FILE")?;
    let store = Arc::new(FileTokenStore::new(path.clone()));
    let redirect = LoopbackRedirect::bind(Box::new(|url: &str| {
        open_browser(url);
        Ok(())
    }))
    .await?;
    let oauth = OAuthClient::builder()
        .redirect(Arc::new(redirect))
        .token_store(Arc::clone(&store) as Arc<dyn TokenStore>)
        .client_name("tollgate CLI")
        .offline_access(true)
        // A DPoP key lives and dies with this process: tokens bound to it could not be kept.
        .dpop(false)
        .build()?;
    let mut builder = Client::builder().authorizer(Arc::new(oauth));
    for header in headers {
        let (name, value) = header.split_once(':').ok_or("a header is `Name: value`")?;
        builder = builder.header(name.trim(), value.trim())?;
    }
    let client = builder.connect_http(url).await?;
    client.close().await?;
    if let Some(failure) = store.last_failure() {
        return Err(failure.into());
    }
    if store.load(url).is_some() {
        println!("logged in to {url}; tokens kept in {}", path.display());
    } else {
        println!("{url} asked for no authorization; nothing kept");
    }
    Ok(())
}
