/**
 * Secrets a user hands to a server or an endpoint (an API key flag, a token in a URL) are
 * needed to run, never to describe the run: records, manifests and exports keep the flag
 * or parameter name with its value replaced, so they still say what ran.
 */
export const REDACTED = 'REDACTED';

/** llama-server's (and most servers') flags whose value is a credential. */
const SECRET_FLAG = /^--?(?:[\w-]*[-_])?(?:api[-_]?key|token|hf[-_]?token|hft|secret|password|passwd)$/i;
const SECRET_NAME =
  /^(?:[\w.-]*[-_.])?(?:key|apikey|api[-_]key|token|secret|password|passwd|pwd|auth|authorization|signature|sig|credentials?|access[-_]token)$/i;

export function isSecretFlag(flag: string): boolean {
  return SECRET_FLAG.test(flag);
}

/** `--api-key X`, `--api-key=X`, `-hft X` and the like, with the value replaced. */
export function redactArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const separator = arg.indexOf('=');
    if (arg.startsWith('-') && separator > 0 && isSecretFlag(arg.slice(0, separator))) {
      out.push(`${arg.slice(0, separator)}=${REDACTED}`);
    } else if (isSecretFlag(arg) && i + 1 < argv.length) {
      out.push(arg, REDACTED);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

// user:password@ (or a bare token@) right after a scheme, anywhere in a text.
const URL_USERINFO = /\b([a-z][a-z\d+.-]*:\/\/)[^\s/?#@]+@/gi;
// name=value in a query string; the name decides.
const QUERY_PARAM = /([?&])([^=&#\s]+)=([^&#\s]*)/g;

/** URL credentials and secret query parameters, in a URL or in text that quotes one (an error message). */
export function redactUrls(text: string): string {
  if (!text.includes('://') && !/[?&][^=&#\s]+=/.test(text)) return text;
  return text
    .replace(URL_USERINFO, `$1${REDACTED}@`)
    .replace(QUERY_PARAM, (match, lead: string, name: string) => (SECRET_NAME.test(name) ? `${lead}${name}=${REDACTED}` : match));
}

/**
 * A copy of a JSON-like value with every string URL-redacted and every string array
 * argv-redacted, for records built from many sources (manifests, engine and server info).
 */
export function redactSecrets<T>(value: T): T {
  return walk(value) as T;
}

function walk(value: unknown): unknown {
  if (typeof value === 'string') return redactUrls(value);
  if (Array.isArray(value)) {
    const items = value.map(walk);
    return items.every((item) => typeof item === 'string') ? redactArgv(items as string[]) : items;
  }
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item)]));
  }
  return value;
}
