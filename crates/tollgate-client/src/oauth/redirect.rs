//! The authorization redirect behind a small trait: hand the user (or a program) the
//! authorization URL and get back the query the authorization server redirected with. Two
//! implementations: [`LoopbackRedirect`] (a browser and a one-shot listener on 127.0.0.1, for
//! command-line tools) and [`FollowRedirect`] (follows the authorization endpoint's own HTTP
//! redirect, for non-interactive servers and tests). It must not know what the query means.

use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;
use url::Url;

use crate::auth::{AuthError, AuthFuture};

use super::kind;

/// The query parameters of the redirect back to the client (`code`, `state`, `iss`, `error`).
pub type RedirectQuery = Vec<(String, String)>;

/// Carries the user to the authorization endpoint and back.
///
/// # Examples
///
/// ```
/// use tollgate_client::oauth::{FollowRedirect, Redirect};
///
/// let redirect = FollowRedirect::new("http://localhost:3000/callback").unwrap();
/// assert_eq!(redirect.redirect_uri(), "http://localhost:3000/callback");
/// ```
pub trait Redirect: Send + Sync {
    /// The redirect URI registered for the client and sent in the authorization request.
    fn redirect_uri(&self) -> &str;

    /// Sends the user to `authorization_url` and returns the query the authorization server
    /// redirected back with.
    ///
    /// # Errors
    ///
    /// An [`AuthError`] when the user could not be sent or did not come back.
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
    ) -> AuthFuture<'a, Result<RedirectQuery, AuthError>>;
}

/// Follows the authorization endpoint's HTTP redirects with a plain HTTP client until one
/// points at the redirect URI, and returns that URI's query. For authorization servers that
/// grant without a user (the conformance suite's, tests, headless agents pre-approved by
/// policy).
pub struct FollowRedirect {
    redirect_uri: String,
    target: Url,
    client: reqwest::Client,
    max_hops: usize,
}

impl FollowRedirect {
    /// The default number of redirects followed before giving up: 5.
    pub const DEFAULT_MAX_HOPS: usize = 5;

    /// A follower for this redirect URI.
    ///
    /// # Errors
    ///
    /// When the URI is not an absolute URL, or the HTTP client cannot be built.
    pub fn new(redirect_uri: impl Into<String>) -> Result<Self, AuthError> {
        let redirect_uri = redirect_uri.into();
        let target = Url::parse(&redirect_uri).map_err(|_| AuthError::new(kind::BAD_REDIRECT))?;
        Ok(Self {
            redirect_uri,
            target,
            client: super::fetch::http_client()?,
            max_hops: Self::DEFAULT_MAX_HOPS,
        })
    }

    /// How many redirects to follow at most (default [`Self::DEFAULT_MAX_HOPS`], 5).
    #[must_use]
    pub fn max_hops(mut self, hops: usize) -> Self {
        self.max_hops = hops;
        self
    }

    fn is_target(&self, url: &Url) -> bool {
        url.scheme() == self.target.scheme()
            && url.host_str() == self.target.host_str()
            && url.port_or_known_default() == self.target.port_or_known_default()
            && url.path() == self.target.path()
    }

    async fn follow(&self, start: &str) -> Result<RedirectQuery, AuthError> {
        let mut at = Url::parse(start).map_err(|_| AuthError::new(kind::BAD_ENDPOINT))?;
        for _ in 0..self.max_hops {
            let response = self
                .client
                .get(at.as_str())
                .send()
                .await
                .map_err(|_| AuthError::new(kind::UNREACHABLE))?;
            if !response.status().is_redirection() {
                return Err(AuthError::new(kind::NO_REDIRECT));
            }
            let location = response
                .headers()
                .get(http::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or(AuthError::new(kind::NO_REDIRECT))?;
            let next = at
                .join(location)
                .map_err(|_| AuthError::new(kind::NO_REDIRECT))?;
            if self.is_target(&next) {
                return Ok(next.query_pairs().into_owned().collect());
            }
            at = next;
        }
        Err(AuthError::new(kind::TOO_MANY_REDIRECTS))
    }
}

impl Redirect for FollowRedirect {
    fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
    ) -> AuthFuture<'a, Result<RedirectQuery, AuthError>> {
        Box::pin(self.follow(authorization_url))
    }
}

/// Opens a URL for the user (launches a browser, or prints the URL).
pub type Opener = Box<dyn Fn(&str) -> Result<(), AuthError> + Send + Sync>;

/// A browser redirect for command-line tools: listens once on `127.0.0.1` on a port the system
/// picks, hands the authorization URL to an opener (which launches a browser or prints it), and
/// reads the redirect's query from the one request to `/callback` (RFC 8252 §7.3).
pub struct LoopbackRedirect {
    listener: tokio::sync::Mutex<TcpListener>,
    redirect_uri: String,
    opener: Opener,
    wait: Duration,
}

/// The longest request head the loopback listener reads.
const MAX_HEAD_BYTES: usize = 8 * 1024;

impl LoopbackRedirect {
    /// How long the listener waits for the browser to come back by default: 300 seconds.
    pub const DEFAULT_WAIT: Duration = Duration::from_secs(300);

    /// Binds `127.0.0.1:0`; the redirect URI is `http://127.0.0.1:{port}/callback`.
    ///
    /// # Errors
    ///
    /// When no loopback port can be bound.
    pub async fn bind(opener: Opener) -> Result<Self, AuthError> {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|_| AuthError::new(kind::LOOPBACK))?;
        let port = listener
            .local_addr()
            .map_err(|_| AuthError::new(kind::LOOPBACK))?
            .port();
        Ok(Self {
            listener: tokio::sync::Mutex::new(listener),
            redirect_uri: format!("http://127.0.0.1:{port}/callback"),
            opener,
            wait: Self::DEFAULT_WAIT,
        })
    }

    /// How long to wait for the browser to come back (default [`Self::DEFAULT_WAIT`], 300 s).
    #[must_use]
    pub fn wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    async fn receive(&self, url: &str) -> Result<RedirectQuery, AuthError> {
        let listener = self.listener.lock().await;
        (self.opener)(url)?;
        let deadline = tokio::time::Instant::now() + self.wait;
        loop {
            let (mut stream, _) = tokio::time::timeout_at(deadline, listener.accept())
                .await
                .map_err(|_| AuthError::new(kind::REDIRECT_TIMEOUT))?
                .map_err(|_| AuthError::new(kind::LOOPBACK))?;
            let head = tokio::time::timeout_at(deadline, read_head(&mut stream))
                .await
                .map_err(|_| AuthError::new(kind::REDIRECT_TIMEOUT))?;
            let Some(query) = head.as_deref().and_then(callback_query) else {
                // Not the callback (a favicon, a probe): answer 404 and keep waiting.
                let _ = stream.write_all(NOT_FOUND).await;
                continue;
            };
            let _ = stream.write_all(DONE).await;
            return Ok(query);
        }
    }
}

impl Redirect for LoopbackRedirect {
    fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
    ) -> AuthFuture<'a, Result<RedirectQuery, AuthError>> {
        Box::pin(self.receive(authorization_url))
    }
}

const DONE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: 52\r\n\r\nAuthorization complete; you may close this window.\r\n";
const NOT_FOUND: &[u8] =
    b"HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";

/// Reads a request head (up to the blank line) of at most 8 KiB; `None` when longer or cut.
async fn read_head(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0_u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 || head.len() + n > MAX_HEAD_BYTES {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    String::from_utf8(head).ok()
}

/// The query of a `GET /callback?...` request line.
fn callback_query(head: &str) -> Option<RedirectQuery> {
    let line = head.lines().next()?;
    let mut parts = line.split(' ');
    let (method, target) = (parts.next()?, parts.next()?);
    if method != "GET" {
        return None;
    }
    let url = Url::parse("http://127.0.0.1").ok()?.join(target).ok()?;
    (url.path() == "/callback").then(|| url.query_pairs().into_owned().collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;

    async fn get(uri: &str, target: &str) -> String {
        let addr = Url::parse(uri).unwrap();
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", addr.port().unwrap()))
            .await
            .unwrap();
        let request = format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut out = String::new();
        stream.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn the_loopback_redirect_returns_the_callbacks_query() {
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let redirect = LoopbackRedirect::bind(Box::new(move |url| {
            tx.send(url.to_owned()).map_err(|_| AuthError::new("test"))
        }))
        .await
        .unwrap();
        let uri = redirect.redirect_uri.clone();
        let browser = tokio::spawn(async move {
            let opened = tokio::task::spawn_blocking(move || rx.recv().unwrap())
                .await
                .unwrap();
            assert_eq!(opened, "https://as.example/authorize?x=1");
            let miss = get(&uri, "/favicon.ico").await;
            assert!(miss.starts_with("HTTP/1.1 404"));
            get(&uri, "/callback?code=abc&state=s%201").await
        });
        let query = redirect
            .authorize("https://as.example/authorize?x=1")
            .await
            .unwrap();
        assert_eq!(
            query,
            [
                ("code".into(), "abc".into()),
                ("state".into(), "s 1".into())
            ]
        );
        assert!(browser.await.unwrap().starts_with("HTTP/1.1 200"));
    }

    #[tokio::test(start_paused = true)]
    async fn the_loopback_redirect_gives_up_after_its_wait() {
        let redirect = LoopbackRedirect::bind(Box::new(|_| Ok(())))
            .await
            .unwrap()
            .wait(Duration::from_secs(5));
        let err = redirect
            .authorize("https://as.example/a")
            .await
            .err()
            .unwrap();
        assert_eq!(err.kind(), kind::REDIRECT_TIMEOUT);
    }

    #[tokio::test]
    async fn a_request_head_at_the_bound_is_read_and_one_past_it_is_not() {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        for (extra, read) in [(0, true), (1, false)] {
            let line = "GET /callback?code=a HTTP/1.1\r\nX: ";
            let pad = MAX_HEAD_BYTES - line.len() - 4 + extra;
            let head = format!("{line}{}\r\n\r\n", "y".repeat(pad));
            assert_eq!(head.len(), MAX_HEAD_BYTES + extra);
            let sender = tokio::spawn(async move {
                let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .unwrap();
                s.write_all(head.as_bytes()).await.unwrap();
                s
            });
            let (mut stream, _) = listener.accept().await.unwrap();
            assert_eq!(read_head(&mut stream).await.is_some(), read);
            drop(sender.await.unwrap());
        }
    }

    #[test]
    fn only_a_get_of_the_callback_path_counts() {
        assert!(callback_query("POST /callback?code=a HTTP/1.1\r\n").is_none());
        assert!(callback_query("GET /other?code=a HTTP/1.1\r\n").is_none());
        assert_eq!(
            callback_query("GET /callback?code=a HTTP/1.1\r\n").unwrap(),
            [("code".to_owned(), "a".to_owned())]
        );
    }
}
