// A local OAuth 2.1 authorization server for scripts/oauth-e2e: oidc-provider (npm, pinned in
// scripts/oauth-e2e) with dynamic client registration, PKCE, RFC 8707 resource indicators and
// JWT access tokens (`typ: at+jwt`, ES256) whose audience is the protected resource asked for
// (one of those it serves).
// The login and consent screens are replaced by an automatic "demo-user approves what was asked"
// so a headless client can run the authorization code flow; everything else is the provider's.
// Usage: node as.mjs PORT RESOURCE[,RESOURCE...]   (prints "issuer: URL" once listening)
import Provider, { errors } from "oidc-provider";
import * as jose from "jose";

const port = Number(process.argv[2]);
const resources = process.argv[3].split(",");
const issuer = `http://127.0.0.1:${port}`;
const scopes = ["catalog:read", "catalog:write"];

const signing = async (alg, kid) => {
  const { privateKey } = await jose.generateKeyPair(alg, { extractable: true });
  return { ...(await jose.exportJWK(privateKey)), alg, kid, use: "sig" };
};

const provider = new Provider(issuer, {
  clients: [],
  jwks: { keys: [await signing("RS256", "rs-1"), await signing("ES256", "es-1")] },
  cookies: { keys: [jose.base64url.encode(crypto.getRandomValues(new Uint8Array(32)))] },
  scopes: ["openid", "offline_access", ...scopes],
  clientDefaults: {
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  },
  pkce: { required: () => true },
  findAccount: (ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resources[0],
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (!resources.includes(indicator)) throw new errors.InvalidTarget();
        return {
          scope: scopes.join(" "),
          audience: indicator,
          accessTokenTTL: 600,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "ES256" } },
        };
      },
    },
  },
});

// Every registered client may ask for any scope this server offers (the user consents per
// authorization): the official client registers with the scope of its first authorization, and
// a later step-up asks for more. The registration's `scope` is widened before the provider reads
// it (it takes an already-read body, with one warning).
provider.use(async (ctx, next) => {
  if (ctx.method === "POST" && ctx.path === "/reg") {
    const chunks = [];
    for await (const chunk of ctx.req) chunks.push(chunk);
    const metadata = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    const asked = (metadata.scope ?? "").split(" ").filter(Boolean);
    metadata.scope = [...new Set([...asked, ...scopes, "offline_access"])].join(" ");
    ctx.request.body = metadata;
  }
  return next();
});

// The automatic interaction: log in as demo-user, grant exactly what the client asked for.
provider.use(async (ctx, next) => {
  if (!ctx.path.startsWith("/interaction/")) return next();
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  const { prompt, params, session, grantId } = details;
  let result;
  if (prompt.name === "login") {
    result = { login: { accountId: "demo-user" } };
  } else {
    const grant = grantId
      ? await provider.Grant.find(grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const missing = prompt.details;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, asked] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, asked.join(" "));
    }
    result = { consent: { grantId: await grant.save() } };
  }
  ctx.respond = false;
  await provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
});

provider.listen(port, "127.0.0.1", () => console.log(`issuer: ${issuer}`));
