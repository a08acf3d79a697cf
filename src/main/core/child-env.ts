/**
 * The environment a child process of ours starts with: the user's, less every credential.
 *
 * A child needs the user's PATH, locale, GPU and driver variables (CUDA_*, HIP_*, GGML_*,
 * VK_*, LD_LIBRARY_PATH) to run at all, and nobody can list those ahead of time for every
 * driver and build, so variables pass unless their name says they carry a secret. What does
 * not pass: our own variables (INFERLAB_*: the service's API key, the window credential),
 * anything named like a key, token, secret, password or credential (HF_TOKEN,
 * OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY, SSH_AUTH_SOCK), and llama-server's own LLAMA_ARG_*
 * settings, which would change a measured server behind its profile's back. A child that
 * legitimately uses one of those names gets it through `keep`; a value the child must have
 * (the managed server's own key) is added by the caller after this filter.
 */
export function childEnvironment(
  parent: NodeJS.ProcessEnv = process.env,
  keep: (name: string) => boolean = () => false,
): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value !== undefined && (keep(name) || !isWithheld(name))) result[name] = value;
  }
  return result;
}

/** npm's own credentials, which npm needs to reach a private registry or mirror. */
export const keepNpmCredentials = (name: string): boolean => /^(npm_config_|NPM_TOKEN$|NODE_AUTH_TOKEN$)/i.test(name);

/** Hugging Face's token, which a Python server needs to fetch a gated model's tokenizer or config. */
export const keepHuggingFaceToken = (name: string): boolean => /^(HF_TOKEN|HF_TOKEN_PATH|HUGGING_FACE_HUB_TOKEN)$/.test(name);

/** Words that, as a part of a variable's name, say it holds a credential. */
const CREDENTIAL_WORDS = new Set([
  'KEY',
  'APIKEY',
  'TOKEN',
  'SECRET',
  'PASSWORD',
  'PASSWD',
  'PASSPHRASE',
  'CREDENTIAL',
  'CREDENTIALS',
  'AUTH',
  'COOKIE',
  'PAT',
]);

export function isWithheld(name: string): boolean {
  const upper = name.toUpperCase();
  if (upper.startsWith('INFERLAB_') || upper.startsWith('LLAMA_ARG_')) return true;
  if (upper === 'XAUTHORITY') return true;
  // Split on separators and on camelCase so npm_config__authToken and hfToken read as words too.
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toUpperCase()
    .split(/[^A-Z0-9]+/)
    .filter(Boolean);
  // PGPASSWORD and MYSQL_PWD are credentials; PWD and OLDPWD are folders.
  if (words.length > 1 && words.at(-1) === 'PWD') return true;
  return words.some((word) => CREDENTIAL_WORDS.has(word) || /(APIKEY|TOKEN|PASSWORD|PASSWD|SECRET)$/.test(word));
}

/** Variables a child must have, added after the filter; null withholds the user's value of that name. */
export type EnvChanges = Readonly<Record<string, string | null>>;

export function withEnvChanges(base: NodeJS.ProcessEnv, changes: EnvChanges = {}): NodeJS.ProcessEnv {
  const result = { ...base };
  for (const [name, value] of Object.entries(changes)) {
    if (value === null) delete result[name];
    else result[name] = value;
  }
  return result;
}
