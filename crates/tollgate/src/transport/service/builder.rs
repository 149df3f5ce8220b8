//! Building an [`McpService`]: its endpoints, the Host and Origin policy, CORS, the header
//! ceiling, trusted proxies and each peer's body budget. Knows the service's parts; nothing of
//! requests.

use std::sync::Arc;

use super::{DEFAULT_MAX_BODY_BYTES_PER_PEER, DEFAULT_MAX_HEADER_BYTES, McpService, ServiceInner};
use crate::facts::error::{BuildError, BuildErrorKind};
use crate::registry::{Endpoint, NameMap};
use crate::transport::body::BodyBudget;
use crate::transport::cors::CorsPolicy;
use crate::transport::forwarded::TrustedProxies;

/// Builds an [`McpService`].
#[must_use = "call build() to finish the service"]
pub struct McpServiceBuilder {
    endpoints: Vec<Endpoint>,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    max_header_bytes: usize,
    cors: Option<CorsPolicy>,
    trusted_proxies: TrustedProxies,
    /// Whether a trusted proxy was not an address or network.
    invalid_proxy: bool,
    max_body_bytes_per_peer: usize,
}

impl Default for McpServiceBuilder {
    fn default() -> Self {
        Self {
            endpoints: Vec::new(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
            cors: None,
            trusted_proxies: TrustedProxies::default(),
            invalid_proxy: false,
            max_body_bytes_per_peer: DEFAULT_MAX_BODY_BYTES_PER_PEER,
        }
    }
}

impl McpServiceBuilder {
    /// Adds an endpoint.
    pub fn endpoint(mut self, endpoint: Endpoint) -> Self {
        self.endpoints.push(endpoint);
        self
    }

    /// Accepts requests whose `Host` names `host` (any port). `localhost`, `127.0.0.1` and
    /// `[::1]` are always accepted; add the names a deployment is reached by. Any other Host is
    /// refused with 403, which stops DNS-rebinding attacks on a local server.
    pub fn allowed_host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into().to_ascii_lowercase());
        self
    }

    /// Accepts requests carrying this exact `Origin` (e.g. `https://app.example.com`). A request
    /// without `Origin`, or whose Origin is a loopback page (`http(s)://localhost`, `127.0.0.1`
    /// or `[::1]`, any port), is accepted; any other Origin is refused with 403.
    pub fn allowed_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins
            .push(origin.into().to_ascii_lowercase());
        self
    }

    /// Lets browser pages on the policy's origins call the service's endpoints (CORS; off by
    /// default: same-origin only). Preflights are answered before admission, parsing or any
    /// handler; responses to an allowed origin grant it and expose `Mcp-Session-Id`,
    /// `WWW-Authenticate` and `Retry-After`. See [`CorsPolicy`].
    pub fn cors(mut self, policy: CorsPolicy) -> Self {
        self.cors = Some(policy);
        self
    }

    /// The aggregate request-header ceiling: the bytes of every header name and value, plus
    /// four per field for its `: ` and line end (default 64 KiB, at least 8 KiB). A request
    /// over it is refused with 431 before anything else is read.
    pub fn max_header_bytes(mut self, bytes: usize) -> Self {
        self.max_header_bytes = bytes.max(8 * 1024);
        self
    }

    /// Believes the forwarding headers of connections from `proxy`: an address
    /// (`"127.0.0.1"`, `"::1"`) or a network (`"10.0.0.0/8"`, `"fd00::/8"`). Behind a reverse
    /// proxy every connection comes from the proxy; a request from a trusted one is taken to
    /// come from the client its `Forwarded` (`for=`) or, without one, `X-Forwarded-For` names,
    /// read from the right past every trusted proxy (a value that is not an address stops
    /// there). That address is the request's [`peer_addr`] (with port 0 unless `Forwarded` named
    /// one), and what the refused-admission throttle and policy key on. The built-in server
    /// does not count a trusted proxy's connections against its per-peer cap. Trust only
    /// proxies that overwrite or append to these headers: anyone else could claim any address.
    ///
    /// [`peer_addr`]: crate::context::OriginatingRequest::peer_addr
    ///
    /// # Examples
    ///
    /// ```
    /// # use tollgate::{Endpoint, Implementation, McpService, ProtocolVersion};
    /// # let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28],
    /// #     Implementation::new("demo", "1.0.0")).build()?;
    /// let service = McpService::builder()
    ///     .endpoint(endpoint)
    ///     .trusted_proxy("127.0.0.1")
    ///     .trusted_proxy("10.0.0.0/8")
    ///     .build()?;
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn trusted_proxy(mut self, proxy: &str) -> Self {
        let proxy = proxy.trim();
        let net = proxy.parse::<ipnet::IpNet>().ok().or_else(|| {
            proxy
                .parse::<std::net::IpAddr>()
                .ok()
                .map(ipnet::IpNet::from)
        });
        match net {
            Some(net) => self.trusted_proxies.push(net),
            None => self.invalid_proxy = true,
        }
        self
    }

    /// The bytes of request bodies one peer (its address; behind a [trusted
    /// proxy](Self::trusted_proxy), the client's) may have in requests not yet answered
    /// (default [`DEFAULT_MAX_BODY_BYTES_PER_PEER`], 64 MiB; at least the largest body an
    /// endpoint takes is sensible). A body is read before its request is admitted, so this
    /// bounds what unadmitted callers make the server hold. Bodies of 64 KiB or less are not
    /// counted (the server's per-peer connection cap bounds those); a larger one is counted as
    /// it arrives, and one that does not fit is answered 503 with `Retry-After: 1` and the
    /// fixed busy error (its rest drained, within bounds). Needs the peer's address: the
    /// built-in server always has it, another server through a
    /// [`PeerAddr`](crate::transport::PeerAddr) extension.
    ///
    /// # Examples
    ///
    /// ```
    /// # use tollgate::{Endpoint, Implementation, McpService, ProtocolVersion};
    /// # let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28],
    /// #     Implementation::new("demo", "1.0.0")).build()?;
    /// let service = McpService::builder()
    ///     .endpoint(endpoint)
    ///     .max_body_bytes_per_peer(32 * 1024 * 1024)
    ///     .build()?;
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn max_body_bytes_per_peer(mut self, bytes: usize) -> Self {
        self.max_body_bytes_per_peer = bytes;
        self
    }

    /// Finishes the service.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::DuplicateEndpointPath`] when two endpoints share a path;
    /// [`BuildErrorKind::InvalidConfiguration`] when a trusted proxy is not an address or
    /// network.
    pub fn build(self) -> Result<McpService, BuildError> {
        if self.invalid_proxy {
            return Err(BuildError::new(BuildErrorKind::InvalidConfiguration));
        }
        let mut endpoints =
            NameMap::with_capacity_and_hasher(self.endpoints.len(), Default::default());
        for endpoint in self.endpoints {
            let path = endpoint.inner.path.clone();
            if endpoints.insert(path.clone(), endpoint).is_some() {
                return Err(BuildError::new(BuildErrorKind::DuplicateEndpointPath).at_path(&path));
            }
        }
        let cors = self.cors.map(|policy| {
            let params = endpoints
                .iter()
                .map(|(path, endpoint)| {
                    (
                        path.clone(),
                        crate::transport::cors::mirrored_header_names(endpoint),
                    )
                })
                .collect();
            (policy, params)
        });
        let metadata = crate::transport::metadata::routes(endpoints.values());
        Ok(McpService {
            inner: Arc::new(ServiceInner {
                metadata,
                endpoints,
                allowed_hosts: self.allowed_hosts,
                allowed_origins: self.allowed_origins,
                max_header_bytes: self.max_header_bytes,
                trusted_proxies: self.trusted_proxies,
                body_budget: BodyBudget::new(self.max_body_bytes_per_peer),
                cors,
            }),
        })
    }
}
