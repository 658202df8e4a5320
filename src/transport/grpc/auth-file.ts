import { ROLES, type Role } from '../../domain/principal';
import type { PrincipalLimits } from '../../domain/principal-limits';
import { CERTIFICATE_IDENTITY_KINDS } from './peer-identity';
import { PrincipalDirectory, type PrincipalEntry } from './principal-directory';

/**
 * The auth file (--auth-file), JSON:
 *
 *     { "principals": [
 *         { "name": "shop", "roles": ["producer"], "queues": ["orders"], "token_sha256": "<64 hex digits>" },
 *         { "name": "billing-workers", "roles": ["worker"], "client_cert": "URI:spiffe://example.org/billing" } ] }
 *
 * `token_sha256` is the hex SHA-256 of a bearer token, or a list of them
 * (the old and the new token while clients move over). `client_cert` names
 * a client certificate (verified against --tls-client-ca) by one of its
 * identities: "URI:<SAN URI>", "DNS:<SAN DNS name>" or "CN:<subject common
 * name>". A principal has at least one of the two; `queues`, when present,
 * limits it to those queues; `limits` ({"max_streams", "max_connections",
 * "enqueue_rate", "enqueue_burst"}, each optional, 0 for none) overrides the
 * server's per-principal limits for it.
 */
export class AuthFileError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid auth file:\n  - ${problems.join('\n  - ')}`);
    this.name = 'AuthFileError';
  }
}

const SHA256_HEX = /^[0-9a-f]{64}$/;
const KNOWN_FIELDS = new Set(['name', 'roles', 'queues', 'token_sha256', 'client_cert', 'limits']);
/** The per-principal limits the file may set, by their names in it (see PrincipalLimits). */
const LIMIT_FIELDS = {
  max_streams: 'maxStreams',
  max_connections: 'maxConnections',
  enqueue_rate: 'enqueueRatePerSecond',
  enqueue_burst: 'enqueueBurst',
} as const satisfies Record<string, keyof PrincipalLimits>;

/** Parses and validates the auth file; throws an AuthFileError listing every problem at once. */
export function parseAuthFile(text: string): PrincipalDirectory {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new AuthFileError([`not JSON: ${error instanceof Error ? error.message : String(error)}`]);
  }
  const list = isObject(document) ? document['principals'] : undefined;
  if (!Array.isArray(list)) throw new AuthFileError(['expected an object with a "principals" list']);
  const problems: string[] = [];
  const entries = list.map((item: unknown, index) => parseEntry(item, `principals[${index}]`, problems));
  findDuplicates(entries, problems);
  if (problems.length > 0) throw new AuthFileError(problems);
  return new PrincipalDirectory(entries);
}

function parseEntry(item: unknown, at: string, problems: string[]): PrincipalEntry {
  if (!isObject(item)) {
    problems.push(`${at}: expected an object`);
    return { principal: { name: '', roles: new Set() }, tokenSha256: [], certificateIdentities: [] };
  }
  for (const field of Object.keys(item)) if (!KNOWN_FIELDS.has(field)) problems.push(`${at}.${field}: unknown field`);
  const name = item['name'];
  if (typeof name !== 'string' || name === '') problems.push(`${at}.name: expected a non-empty string`);
  const roles = stringList(item['roles'], `${at}.roles`, problems);
  for (const role of roles) if (!isRole(role)) problems.push(`${at}.roles: unknown role "${role}" (roles: ${ROLES.join(', ')})`);
  if (roles.length === 0) problems.push(`${at}.roles: expected at least one role`);
  const queues = item['queues'] === undefined ? undefined : stringList(item['queues'], `${at}.queues`, problems);
  const hashes = item['token_sha256'] === undefined ? [] : stringList(item['token_sha256'], `${at}.token_sha256`, problems, true);
  for (const hash of hashes) if (!SHA256_HEX.test(hash)) problems.push(`${at}.token_sha256: expected 64 lowercase hex digits`);
  const identity = item['client_cert'];
  if (identity !== undefined && !isCertificateIdentity(identity)) {
    problems.push(`${at}.client_cert: expected "URI:...", "DNS:..." or "CN:..."`);
  }
  if (hashes.length === 0 && identity === undefined) problems.push(`${at}: expected token_sha256 or client_cert`);
  const limits = item['limits'] === undefined ? undefined : parseLimits(item['limits'], `${at}.limits`, problems);
  return {
    principal: {
      name: typeof name === 'string' ? name : '',
      roles: new Set(roles.filter(isRole)),
      ...(queues === undefined ? {} : { queues: new Set(queues) }),
      ...(limits === undefined ? {} : { limits }),
    },
    tokenSha256: hashes.filter((hash) => SHA256_HEX.test(hash)).map((hash) => Buffer.from(hash, 'hex')),
    certificateIdentities: typeof identity === 'string' ? [identity] : [],
  };
}

function parseLimits(value: unknown, at: string, problems: string[]): Partial<PrincipalLimits> {
  if (!isObject(value)) {
    problems.push(`${at}: expected an object`);
    return {};
  }
  const limits: Partial<PrincipalLimits> = {};
  for (const [field, given] of Object.entries(value)) {
    const key = isLimitField(field) ? LIMIT_FIELDS[field] : undefined;
    if (key === undefined) problems.push(`${at}.${field}: unknown limit (limits: ${Object.keys(LIMIT_FIELDS).join(', ')})`);
    // Only the rate may be fractional (one job every two seconds is 0.5).
    else if (
      typeof given !== 'number' ||
      given < 0 ||
      !(key === 'enqueueRatePerSecond' ? Number.isFinite(given) : Number.isSafeInteger(given))
    )
      problems.push(`${at}.${field}: expected ${key === 'enqueueRatePerSecond' ? 'a number' : 'a whole number'}, 0 or more`);
    else limits[key] = given;
  }
  return limits;
}

/** Two principals with one name, token or certificate would make who is calling ambiguous. */
function findDuplicates(entries: readonly PrincipalEntry[], problems: string[]): void {
  const seen = { name: new Set<string>(), token: new Set<string>(), certificate: new Set<string>() };
  const check = (kind: keyof typeof seen, value: string, shown: string): void => {
    if (seen[kind].has(value)) problems.push(`${shown} is declared more than once`);
    seen[kind].add(value);
  };
  for (const { principal, tokenSha256, certificateIdentities } of entries) {
    if (principal.name !== '') check('name', principal.name, `name "${principal.name}"`);
    for (const hash of tokenSha256) check('token', hash.toString('hex'), `token_sha256 ${hash.toString('hex').slice(0, 8)}...`);
    for (const identity of certificateIdentities) check('certificate', identity, `client_cert "${identity}"`);
  }
}

function stringList(value: unknown, at: string, problems: string[], isSingleAllowed = false): string[] {
  if (isSingleAllowed && typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((v): v is string => typeof v === 'string' && v !== '')) return value;
  problems.push(`${at}: expected a list of non-empty strings${isSingleAllowed ? ' (or one string)' : ''}`);
  return [];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isLimitField(field: string): field is keyof typeof LIMIT_FIELDS {
  return Object.hasOwn(LIMIT_FIELDS, field);
}

function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

function isCertificateIdentity(value: unknown): value is string {
  return (
    typeof value === 'string' && CERTIFICATE_IDENTITY_KINDS.some((kind) => value.startsWith(`${kind}:`) && value.length > kind.length + 1)
  );
}
