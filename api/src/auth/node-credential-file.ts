/**
 * Where a node's bearer credential lives on disk and how it is replaced. `nodelet join` writes
 *
 *   /etc/nodelet/agent.kubeconfig              user: { tokenFile: /etc/nodelet/agent.token }
 *   /etc/nodelet/agent.token                   the token, 0600
 *   /etc/nodelet/agent.token.lifetime.json     {"tokenSHA256":"…","issuedAt":"…","expirationTimestamp":"…"}, 0600
 *
 * and the agent replaces the token the same way when it renews it. An older kubeconfig with the
 * token inline (`user: { token: … }`) is rewritten in place instead. Each file is replaced
 * atomically (fs-atomic.ts); the token is written before its lifetime record, and the record
 * names the token it describes by hash, so a crash between the two leaves a record that no longer
 * matches: the lifetime is then unknown (and the agent renews once to learn it), never wrong.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse, parseDocument, isMap, isSeq } from 'yaml';
import { AgentError } from '@nodelet/base';
import { writeFileAtomic } from '../fs-atomic.js';

/** The token is a file of its own (`tokenFile`), or inline in the kubeconfig's user entry. */
export type CredentialLocation = { kind: 'tokenFile'; path: string } | { kind: 'kubeconfig'; path: string; user: string };

/** When a credential was issued and when it expires (epoch ms). */
export interface CredentialLifetime {
  issuedAt: number;
  expiresAt: number;
}

const SECRET_MODE = 0o600;

/** The lifetime record of the credential at `loc`. */
export function lifetimePath(loc: CredentialLocation): string {
  return `${loc.path}.lifetime.json`;
}

const sha256 = (token: string): string => createHash('sha256').update(token).digest('hex');

/**
 * Where the current context's user keeps its token, or undefined when it has none (a client
 * certificate, no user). Throws ERR_INVALID_ARGUMENT when the kubeconfig cannot be read or parsed.
 */
export async function locateCredential(kubeconfigPath: string): Promise<CredentialLocation | undefined> {
  let doc: Record<string, unknown>;
  try {
    doc = (parse(await readFile(kubeconfigPath, 'utf8')) ?? {}) as Record<string, unknown>;
  } catch (err) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `cannot read kubeconfig "${kubeconfigPath}"`, { cause: err });
  }
  const named = (list: unknown, name: unknown): Record<string, unknown> | undefined =>
    Array.isArray(list) ? (list as Array<Record<string, unknown> | null>).find((e) => e?.name === name) ?? undefined : undefined;
  const context = named(doc.contexts, doc['current-context'])?.context as { user?: string } | undefined;
  if (!context?.user) return undefined;
  const user = named(doc.users, context.user)?.user as { token?: unknown; tokenFile?: unknown } | undefined;
  if (typeof user?.token === 'string' && user.token) return { kind: 'kubeconfig', path: kubeconfigPath, user: context.user };
  if (typeof user?.tokenFile === 'string' && user.tokenFile) {
    return { kind: 'tokenFile', path: isAbsolute(user.tokenFile) ? user.tokenFile : resolve(dirname(kubeconfigPath), user.tokenFile) };
  }
  return undefined;
}

/** The token at `loc` and, when the record matches that token, its lifetime. */
export async function readCredential(loc: CredentialLocation): Promise<{ token: string; lifetime?: CredentialLifetime }> {
  let token: string;
  if (loc.kind === 'tokenFile') {
    token = (await readFile(loc.path, 'utf8')).trim();
  } else {
    const doc = (parse(await readFile(loc.path, 'utf8')) ?? {}) as { users?: Array<{ name?: string; user?: { token?: unknown } } | null> };
    const value = Array.isArray(doc.users) ? doc.users.find((u) => u?.name === loc.user)?.user?.token : undefined;
    token = typeof value === 'string' ? value : '';
  }
  if (!token) throw new AgentError('ERR_NOT_FOUND', `no token in ${loc.kind === 'tokenFile' ? 'token file' : 'kubeconfig'} "${loc.path}"`);
  let record: { tokenSHA256?: unknown; issuedAt?: unknown; expirationTimestamp?: unknown };
  try {
    record = JSON.parse(await readFile(lifetimePath(loc), 'utf8')) as typeof record;
  } catch {
    return { token };
  }
  const issuedAt = Date.parse(String(record.issuedAt));
  const expiresAt = Date.parse(String(record.expirationTimestamp));
  if (record.tokenSHA256 !== sha256(token) || !Number.isFinite(issuedAt) || !Number.isFinite(expiresAt)) return { token };
  return { token, lifetime: { issuedAt, expiresAt } };
}

/**
 * Replaces the token at `loc` (0600, atomically), then its lifetime record (removed from
 * consideration when `lifetime` is unknown: the stale record no longer matches the new token).
 */
export async function writeCredential(loc: CredentialLocation, token: string, lifetime?: CredentialLifetime): Promise<void> {
  if (loc.kind === 'tokenFile') {
    await writeFileAtomic(loc.path, `${token}\n`, SECRET_MODE);
  } else {
    const doc = parseDocument(await readFile(loc.path, 'utf8'));
    const users = doc.get('users');
    const entry = isSeq(users) ? users.items.find((u) => isMap(u) && u.get('name') === loc.user) : undefined;
    const user = isMap(entry) ? entry.get('user') : undefined;
    if (!isMap(user)) throw new AgentError('ERR_NOT_FOUND', `kubeconfig "${loc.path}" has no user "${loc.user}"`);
    user.set('token', token);
    await writeFileAtomic(loc.path, doc.toString(), SECRET_MODE);
  }
  if (!lifetime) return;
  const record = { tokenSHA256: sha256(token), issuedAt: new Date(lifetime.issuedAt).toISOString(), expirationTimestamp: new Date(lifetime.expiresAt).toISOString() };
  await writeFileAtomic(lifetimePath(loc), JSON.stringify(record, null, 2) + '\n', SECRET_MODE);
}
