/**
 * Secrets never reach a log line, an error message, a metric or Redis. Every secret the process learns
 * (store password, auth hash, admin token, database passwords) is registered here; `redactText` is the
 * last line of defence applied to log output and error messages.
 *
 * This is process-wide on purpose: a secret known to one component must be hidden in the output of all.
 */

const REDACTED = '[redacted]';
const known = new Set<string>();

/** Query parameters and JSON keys whose values are always secret, whatever their value. */
const SECRET_QUERY = /([?&](?:hash|password|pass|token|secret|api_?key)=)[^&#\s"'<>]*/gi;
const SECRET_JSON = /("(?:hash|password|pass|token|secret|authorization|apiKey|api_key|Password)"\s*:\s*")(?:[^"\\]|\\.)*(")/g;
const URL_CREDENTIALS = /(\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:)[^@\s/]+(@)/gi;

/** Rotating secrets (such as the auth hash) keep only their most recent values: older ones can no longer work. */
const ROTATION_KEEP = 4;
const rotations = new Map<string, string[]>();

/**
 * Remembers a secret value so that `redactText` removes it wherever it appears. Short values are ignored.
 * With `rotation`, the value replaces older values of the same rotation beyond the last few, so a hash
 * renewed every 25 minutes does not grow the list for the life of the process.
 */
export function registerSecret(value: string | undefined | null, rotation?: string): void {
  // Very short values would redact ordinary text ("1", "ok"); they are still caught by the patterns.
  if (!value || value.length < 4 || known.has(value)) return;
  const forms = [value, encodeURIComponent(value)].filter((form, i, all) => all.indexOf(form) === i);
  for (const form of forms) known.add(form);
  if (rotation === undefined) return;
  const recent = rotations.get(rotation) ?? [];
  recent.push(...forms);
  while (recent.length > ROTATION_KEEP * 2) known.delete(recent.shift() as string);
  rotations.set(rotation, recent);
}

/** Removes registered secrets, `hash=`/`password=` query values, JSON secret keys and URL passwords from text. */
export function redactText(text: string): string {
  let out = text
    .replace(SECRET_QUERY, `$1${REDACTED}`)
    .replace(SECRET_JSON, `$1${REDACTED}$2`)
    .replace(URL_CREDENTIALS, `$1${REDACTED}$2`);
  for (const secret of known) {
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return out;
}

/** Keys whose values are masked when a structure is shown (config check, job data, logs). */
const SECRET_KEY = /^(password|pass|hash|token|secret|adminToken|authorization|apiKey|api_key|headers)$/i;

/** Returns a deep copy with secret-looking keys masked and URL passwords removed. */
export function maskSecrets<T>(value: T): T {
  return mask(value) as T;
}

function mask(value: unknown, key?: string): unknown {
  if (key !== undefined && SECRET_KEY.test(key) && value !== undefined && value !== null && value !== '') {
    if (typeof value === 'object' && !Array.isArray(value)) {
      return Object.fromEntries(Object.keys(value).map((k) => [k, REDACTED]));
    }
    return REDACTED;
  }
  if (typeof value === 'string') return redactText(value);
  if (Array.isArray(value)) return value.map((item) => mask(item));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mask(v, k)]));
  }
  return value;
}
