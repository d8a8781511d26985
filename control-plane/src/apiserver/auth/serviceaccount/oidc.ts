/**
 * Service-account issuer discovery (kube-apiserver's ServiceAccountIssuerDiscovery): the OpenID
 * provider configuration and the key set, so anything that trusts OIDC can verify our
 * service-account tokens. Readable by every service account (system:service-account-issuer-discovery).
 *
 *   GET /.well-known/openid-configuration   {issuer, jwks_uri, response_types_supported, …}
 *   GET /openid/v1/jwks                      {keys: [{kty, crv, x, y, kid, use: "sig", alg}]}
 */
import type { ServiceAccountTokens } from './tokens.js';

export const OIDC_CONFIGURATION_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/openid/v1/jwks';

export function openIdConfiguration(tokens: ServiceAccountTokens, jwksUri?: string): Record<string, unknown> {
  const issuer = new URL(tokens.issuer);
  return {
    issuer: tokens.issuer,
    jwks_uri: jwksUri ?? `${issuer.origin}${JWKS_PATH}`,
    response_types_supported: ['id_token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [tokens.key.alg],
  };
}

export function jwks(tokens: ServiceAccountTokens): Record<string, unknown> {
  const jwk = tokens.key.publicKey.export({ format: 'jwk' });
  return { keys: [{ ...jwk, kid: tokens.key.kid, use: 'sig', alg: tokens.key.alg }] };
}
