//! Tokens kept in a file across runs ([`FileTokenStore`]): one JSON document of tokens (and the
//! dynamic registration they were issued to) by resource, readable by its owner only (0600 in a 0700 directory on Unix), replaced whole on
//! every change through a temporary file and a rename, so a crash leaves the old file or the new
//! one, never half of either. It owns the file's format and its writing; it must not know how
//! tokens are obtained. Neither its errors nor its `Debug` carry a token.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, UNIX_EPOCH};

use tollgate_json::{JsonLimits, JsonNumber, JsonObject, JsonValue};
use zeroize::Zeroizing;

use super::kind;
use super::store::{TokenStore, Tokens};
use super::{ClientCredentials, TokenEndpointAuth};
use crate::auth::AuthError;

/// The file format's version, written in every file.
const VERSION: u64 = 1;

/// Tokens kept in a file, keyed by resource: the store for command-line tools and other
/// programs that run again later.
///
/// The file holds bearer tokens: on Unix it is created `0600` in a directory created `0700`.
/// Each change rewrites the whole file through a temporary file beside it and a rename. A file
/// that cannot be read as a token file is never overwritten: saving fails with
/// `token file unreadable` until it is moved away. DPoP-bound tokens are kept in memory only
/// (their key lives and dies with the process). Two processes saving at once: the last rename
/// wins for the whole file.
///
/// [`TokenStore::save`] and [`TokenStore::clear`] cannot return errors; a failure is kept for
/// [`FileTokenStore::last_failure`], and [`FileTokenStore::try_save`] returns it.
///
/// # Examples
///
/// ```
/// use tollgate_client::oauth::{FileTokenStore, TokenStore, Tokens};
///
/// let dir = std::env::temp_dir().join(format!("tollgate-doc-{}", std::process::id()));
/// let store = FileTokenStore::new(dir.join("tokens.json"));
/// store.try_save("https://mcp.example/mcp", Tokens::new("https://as.example", "t".to_owned()))?;
/// // Another store on the same file (a later run) finds them.
/// let later = FileTokenStore::new(dir.join("tokens.json"));
/// assert_eq!(&*later.load("https://mcp.example/mcp").unwrap().access_token, "t");
/// assert!(!format!("{later:?}").contains("\"t\""));
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), tollgate_client::auth::AuthError>(())
/// ```
pub struct FileTokenStore {
    path: PathBuf,
    /// Serialises this process's read-modify-write of the file.
    lock: Mutex<()>,
    /// DPoP-bound tokens, never written.
    bound: super::store::MemoryTokenStore,
    failure: Mutex<Option<&'static str>>,
}

impl std::fmt::Debug for FileTokenStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileTokenStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// A distinct temporary name per write in this process.
static NEXT_TEMPORARY: AtomicU64 = AtomicU64::new(0);

impl FileTokenStore {
    /// A store in the file at `path` (created, with its directory, on the first save).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            lock: Mutex::new(()),
            bound: super::store::MemoryTokenStore::default(),
            failure: Mutex::new(None),
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The last failure of [`TokenStore::save`] or [`TokenStore::clear`] through this store,
    /// if the last one failed.
    pub fn last_failure(&self) -> Option<AuthError> {
        let failure = *self.failure.lock().unwrap_or_else(PoisonError::into_inner);
        failure.map(AuthError::new)
    }

    /// Saves `tokens` for `resource`, returning a failure instead of keeping it.
    ///
    /// # Errors
    ///
    /// `token file unreadable` when the file exists but is not a token file (it is left as it
    /// is); `token file could not be written` when the directory or the file cannot be written.
    pub fn try_save(&self, resource: &str, tokens: Tokens) -> Result<(), AuthError> {
        if tokens.dpop {
            self.bound.save(resource, tokens);
            return Ok(());
        }
        self.change(|all| {
            all.insert(resource.to_owned(), tokens);
        })
    }

    /// Forgets the tokens of `resource`, returning a failure instead of keeping it.
    ///
    /// # Errors
    ///
    /// As [`FileTokenStore::try_save`].
    pub fn try_clear(&self, resource: &str) -> Result<(), AuthError> {
        self.bound.clear(resource);
        self.change(|all| {
            all.remove(resource);
        })
    }

    fn change(&self, f: impl FnOnce(&mut BTreeMap<String, Tokens>)) -> Result<(), AuthError> {
        let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        let mut all = read(&self.path)?;
        f(&mut all);
        write(&self.path, &all)
    }

    fn record(&self, outcome: Result<(), AuthError>) {
        *self.failure.lock().unwrap_or_else(PoisonError::into_inner) =
            outcome.err().map(|e| e.kind());
    }
}

impl TokenStore for FileTokenStore {
    fn load(&self, resource: &str) -> Option<Tokens> {
        if let Some(tokens) = self.bound.load(resource) {
            return Some(tokens);
        }
        let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        read(&self.path).ok()?.remove(resource)
    }

    fn save(&self, resource: &str, tokens: Tokens) {
        let outcome = self.try_save(resource, tokens);
        self.record(outcome);
    }

    fn clear(&self, resource: &str) {
        let outcome = self.try_clear(resource);
        self.record(outcome);
    }
}

/// Every entry of the file; empty when there is no file yet.
fn read(path: &Path) -> Result<BTreeMap<String, Tokens>, AuthError> {
    let unreadable = || AuthError::new(kind::TOKEN_FILE_UNREADABLE);
    let bytes = match fs::read(path) {
        Ok(bytes) => Zeroizing::new(bytes),
        // No file yet (or no directory: the write will say why it cannot make one).
        Err(_) if fs::symlink_metadata(path).is_err() => return Ok(BTreeMap::new()),
        Err(_) => return Err(unreadable()),
    };
    let document =
        tollgate_json::from_slice(&bytes, &JsonLimits::default()).map_err(|_| unreadable())?;
    if document
        .get("version")
        .and_then(JsonValue::as_number)
        .and_then(JsonNumber::to_u64)
        != Some(VERSION)
    {
        return Err(unreadable());
    }
    let entries = document
        .get("tokens")
        .and_then(JsonValue::as_object)
        .ok_or_else(unreadable)?;
    let mut all = BTreeMap::new();
    for (resource, entry) in entries.iter() {
        all.insert(
            resource.as_str().to_owned(),
            from_json(entry).ok_or_else(unreadable)?,
        );
    }
    Ok(all)
}

fn from_json(entry: &JsonValue) -> Option<Tokens> {
    let text = |key: &str| {
        entry
            .get(key)
            .and_then(JsonValue::as_str)
            .map(str::to_owned)
    };
    let mut tokens = Tokens::new(text("issuer")?, text("access_token")?);
    tokens.refresh_token = text("refresh_token").map(Zeroizing::new);
    tokens.scope = text("scope");
    tokens.expires_at = match entry.get("expires_at") {
        None => None,
        Some(at) => Some(UNIX_EPOCH + Duration::from_secs(at.as_number()?.to_u64()?)),
    };
    tokens.client = match entry.get("client") {
        None => None,
        Some(client) => Some(client_from_json(client, &tokens.issuer)?),
    };
    Some(tokens)
}

/// A saved dynamic registration: its client ID, secret and method, at the tokens' issuer.
fn client_from_json(client: &JsonValue, issuer: &str) -> Option<ClientCredentials> {
    let text = |key: &str| client.get(key).and_then(JsonValue::as_str);
    let mut credentials = ClientCredentials::new(issuer, text("client_id")?);
    if let Some(secret) = text("client_secret") {
        credentials = credentials.secret(secret.to_owned());
    }
    if let Some(method) = text("token_endpoint_auth_method") {
        credentials = credentials.method(TokenEndpointAuth::from_name(method)?);
    }
    Some(credentials)
}

fn client_to_json(client: &ClientCredentials) -> JsonObject {
    let mut out = JsonObject::builder().insert("client_id", client.client_id());
    if let Some(secret) = client.client_secret() {
        out.push("client_secret", secret);
    }
    if let Some(method) = client.token_endpoint_auth() {
        out.push("token_endpoint_auth_method", method.as_str());
    }
    out.build()
}

fn to_json(tokens: &Tokens) -> JsonObject {
    let mut entry = JsonObject::builder()
        .insert("issuer", tokens.issuer.as_str())
        .insert("access_token", tokens.access_token.as_str());
    if let Some(refresh) = &tokens.refresh_token {
        entry.push("refresh_token", refresh.as_str());
    }
    if let Some(scope) = &tokens.scope {
        entry.push("scope", scope.as_str());
    }
    if let Some(at) = tokens.expires_at {
        let seconds = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        entry.push("expires_at", JsonNumber::from(seconds));
    }
    // Only a registration made at the tokens' issuer (never one of another server's).
    if let Some(client) = tokens
        .client
        .as_ref()
        .filter(|c| c.issuer() == Some(tokens.issuer.as_str()))
    {
        entry.push("client", client_to_json(client));
    }
    entry.build()
}

/// Replaces the file with `all`: a temporary file beside it (0600), flushed to disk, renamed
/// over it.
fn write(path: &Path, all: &BTreeMap<String, Tokens>) -> Result<(), AuthError> {
    let failed = || AuthError::new(kind::TOKEN_FILE_WRITE);
    let mut entries = JsonObject::builder();
    for (resource, tokens) in all {
        entries.push(resource.as_str(), to_json(tokens));
    }
    let document: JsonValue = JsonObject::builder()
        .insert("version", JsonNumber::from(VERSION))
        .insert("tokens", entries.build())
        .build()
        .into();
    let text = Zeroizing::new(
        tollgate_json::to_string(&document, &Default::default()).map_err(|_| failed())?,
    );
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    create_private_dir(dir).map_err(|_| failed())?;
    let name = path.file_name().ok_or_else(failed)?.to_string_lossy();
    let n = NEXT_TEMPORARY.fetch_add(1, Ordering::Relaxed);
    let temporary = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
    let written = create_private_file(&temporary).and_then(|mut file| {
        file.write_all(text.as_bytes())?;
        file.sync_all()
    });
    let renamed = written.and_then(|()| fs::rename(&temporary, path));
    if renamed.is_err() {
        let _ = fs::remove_file(&temporary);
        return Err(failed());
    }
    Ok(())
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    fs::create_dir_all(dir)
}

#[cfg(unix)]
fn create_private_file(path: &Path) -> std::io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

#[cfg(not(unix))]
fn create_private_file(path: &Path) -> std::io::Result<fs::File> {
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("tollgate-tokens-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    fn full() -> Tokens {
        let mut tokens = Tokens::new("https://as.example", "secret-access".to_owned());
        tokens.refresh_token = Some(Zeroizing::new("secret-refresh".to_owned()));
        tokens.scope = Some("read write".to_owned());
        tokens.expires_at = Some(UNIX_EPOCH + Duration::from_secs(2_000_000_000));
        tokens
    }

    #[test]
    fn the_registration_survives_with_the_tokens_at_their_issuer_only() {
        let dir = dir("registration");
        let path = dir.join("tokens.json");
        let mut tokens = full();
        tokens.client = Some(
            ClientCredentials::new("https://as.example", "dyn-1")
                .secret("secret-client".to_owned())
                .method(TokenEndpointAuth::ClientSecretPost),
        );
        let mut elsewhere = full();
        elsewhere.client = Some(ClientCredentials::new("https://other.example", "dyn-2"));
        let store = FileTokenStore::new(&path);
        store.try_save("https://a/mcp", tokens).unwrap();
        store.try_save("https://b/mcp", elsewhere).unwrap();
        let later = FileTokenStore::new(&path);
        let client = later.load("https://a/mcp").unwrap().client.unwrap();
        assert_eq!(client.client_id(), "dyn-1");
        assert_eq!(client.issuer(), Some("https://as.example"));
        assert_eq!(client.client_secret(), Some("secret-client"));
        assert_eq!(
            client.token_endpoint_auth(),
            Some(TokenEndpointAuth::ClientSecretPost)
        );
        assert!(!format!("{:?}", later.load("https://a/mcp")).contains("secret-client"));
        // A registration of another issuer than the tokens' is not kept.
        assert!(later.load("https://b/mcp").unwrap().client.is_none());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn tokens_survive_a_new_store_and_clear_forgets_them() {
        let dir = dir("roundtrip");
        let path = dir.join("nested").join("tokens.json");
        FileTokenStore::new(&path)
            .try_save("https://a/mcp", full())
            .unwrap();
        FileTokenStore::new(&path)
            .try_save(
                "https://b/mcp",
                Tokens::new("https://as.example", "b".to_owned()),
            )
            .unwrap();
        let later = FileTokenStore::new(&path);
        let a = later.load("https://a/mcp").unwrap();
        assert_eq!(&*a.access_token, "secret-access");
        assert_eq!(
            a.refresh_token.as_deref().map(String::as_str),
            Some("secret-refresh")
        );
        assert_eq!(a.scope.as_deref(), Some("read write"));
        assert_eq!(a.expires_at, full().expires_at);
        assert_eq!(a.issuer, "https://as.example");
        assert!(later.load("https://b/mcp").is_some());
        later.clear("https://a/mcp");
        assert!(later.last_failure().is_none());
        assert!(FileTokenStore::new(&path).load("https://a/mcp").is_none());
        assert!(FileTokenStore::new(&path).load("https://b/mcp").is_some());
        // Only the file itself is left beside it: every temporary was renamed away.
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["tokens.json".to_owned()]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn the_file_is_its_owner_s_alone() {
        use std::os::unix::fs::PermissionsExt;
        let dir = dir("modes");
        let path = dir.join("tokens.json");
        let store = FileTokenStore::new(&path);
        store.try_save("https://a/mcp", full()).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&dir), 0o700);
        // Rewritten, it stays 0600 (the new file replaces it).
        store.try_save("https://b/mcp", full()).unwrap();
        assert_eq!(mode(&path), 0o600);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unreadable_file_is_never_overwritten_and_no_error_shows_a_token() {
        let dir = dir("corrupt");
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tokens.json");
        for planted in [
            "not json",
            r#"{"version":2,"tokens":{}}"#,
            r#"{"version":1,"tokens":{"r":{}}}"#,
        ] {
            fs::write(&path, planted).unwrap();
            let store = FileTokenStore::new(&path);
            assert!(store.load("r").is_none());
            let error = store.try_save("r", full()).unwrap_err();
            assert_eq!(error.kind(), "token file unreadable");
            store.save("r", full());
            assert_eq!(
                store.last_failure().unwrap().kind(),
                "token file unreadable"
            );
            assert_eq!(fs::read_to_string(&path).unwrap(), planted);
            let shown = format!("{error:?} {error} {store:?}");
            assert!(!shown.contains("secret"), "{shown}");
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_says_so() {
        let dir = dir("blocked");
        fs::create_dir_all(&dir).unwrap();
        // The file's "directory" is a plain file: nothing can be written under it.
        let blocker = dir.join("not-a-dir");
        fs::write(&blocker, "x").unwrap();
        let store = FileTokenStore::new(blocker.join("tokens.json"));
        let error = store.try_save("r", full()).unwrap_err();
        assert_eq!(error.kind(), "token file could not be written");
        assert_eq!(fs::read_to_string(&blocker).unwrap(), "x");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn dpop_bound_tokens_stay_in_memory() {
        let dir = dir("dpop");
        let path = dir.join("tokens.json");
        let store = FileTokenStore::new(&path);
        let mut bound = full();
        bound.dpop = true;
        store.try_save("r", bound).unwrap();
        assert!(store.load("r").unwrap().dpop);
        assert!(!path.exists());
        assert!(FileTokenStore::new(&path).load("r").is_none());
    }
}
