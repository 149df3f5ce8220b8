//! The fixed kinds of the OAuth client's errors, in one place. Each is a short static text;
//! none carries a submitted or received value (a token, a secret, a URL, a server's text).

/// An authorization or resource server could not be reached, or the exchange broke off.
pub(crate) const UNREACHABLE: &str = "authorization exchange failed";
/// A document or answer was longer than the client's byte limit.
pub(crate) const TOO_LARGE: &str = "authorization document too large";
/// TLS could not be set up for the HTTP client.
pub(crate) const TLS: &str = "TLS could not be set up";
/// The challenge's `resource_metadata` is not an http(s) URL.
pub(crate) const BAD_METADATA_URL: &str = "resource metadata URL invalid";
/// No protected-resource metadata was found.
pub(crate) const NO_RESOURCE_METADATA: &str = "protected resource metadata not found";
/// The protected-resource metadata names another resource than this server.
pub(crate) const RESOURCE_MISMATCH: &str = "protected resource metadata names another resource";
/// The protected-resource metadata names no authorization server.
pub(crate) const NO_AUTHORIZATION_SERVER: &str = "no authorization server named";
/// An issuer identifier is not a usable URL.
pub(crate) const BAD_ISSUER: &str = "authorization server issuer invalid";
/// No authorization-server metadata was found at any well-known URL.
pub(crate) const NO_SERVER_METADATA: &str = "authorization server metadata not found";
/// The metadata's `issuer` differs from the issuer its URL was built from.
pub(crate) const ISSUER_MISMATCH: &str = "authorization server metadata issuer mismatch";
/// The authorization server does not advertise PKCE with S256.
pub(crate) const NO_PKCE: &str = "authorization server does not support PKCE S256";
/// An endpoint is missing, not a URL, or plain HTTP off the loopback interface.
pub(crate) const BAD_ENDPOINT: &str = "authorization server endpoint missing or insecure";
/// No way to identify the client to this authorization server.
pub(crate) const NO_CLIENT: &str = "no client registration possible";
/// Dynamic client registration was refused or answered badly.
pub(crate) const REGISTRATION: &str = "client registration refused";
/// A scope given to the builder is not a scope token, too long, or one too many.
pub(crate) const BAD_SCOPE: &str = "configured scope invalid";
/// A random value could not be drawn.
pub(crate) const RANDOM: &str = "random source failed";
/// The authorization-code flow is needed and no redirect was configured.
pub(crate) const NO_REDIRECT_SET: &str = "no authorization redirect configured";
/// The redirect URI is not an absolute URL.
pub(crate) const BAD_REDIRECT: &str = "redirect URI invalid";
/// The authorization endpoint answered without a redirect.
pub(crate) const NO_REDIRECT: &str = "authorization endpoint did not redirect";
/// Too many redirects before the redirect URI.
pub(crate) const TOO_MANY_REDIRECTS: &str = "too many authorization redirects";
/// The loopback listener could not be bound or accept.
pub(crate) const LOOPBACK: &str = "loopback redirect listener failed";
/// The user did not come back in time.
pub(crate) const REDIRECT_TIMEOUT: &str = "authorization redirect timed out";
/// The authorization server redirected back with an error.
pub(crate) const DENIED: &str = "authorization denied";
/// The redirect's `state` is not the one sent.
pub(crate) const STATE_MISMATCH: &str = "authorization response state mismatch";
/// The redirect's `iss` is not the authorization server's issuer (RFC 9207).
pub(crate) const ISS_MISMATCH: &str = "authorization response issuer mismatch";
/// The server advertised `iss` in responses, and the redirect had none (RFC 9207).
pub(crate) const ISS_MISSING: &str = "authorization response issuer missing";
/// The redirect carried no code.
pub(crate) const NO_CODE: &str = "authorization response without code";
/// The token endpoint refused or answered badly.
pub(crate) const TOKEN: &str = "token request refused";
/// The token endpoint issued a token type this client does not use.
pub(crate) const TOKEN_TYPE: &str = "unsupported token type";
/// The identity provider refused the token exchange or answered another token type.
pub(crate) const EXCHANGE: &str = "identity assertion exchange refused";
/// A token is not usable as a header value.
pub(crate) const BAD_TOKEN: &str = "access token unusable";
/// A client credential could not be used (an invalid key, a header it cannot form).
pub(crate) const CREDENTIAL: &str = "client credential unusable";
/// The token file could not be read or is not a token file (it is left as it is).
pub(crate) const TOKEN_FILE_UNREADABLE: &str = "token file unreadable";
/// The token file could not be written (the previous file, if any, is unchanged).
pub(crate) const TOKEN_FILE_WRITE: &str = "token file could not be written";
