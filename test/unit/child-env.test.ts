import { describe, expect, it } from 'vitest';
import { childEnvironment, isWithheld, keepHuggingFaceToken, keepNpmCredentials } from '../../src/main/core/child-env';

// Constructed names, chosen from what users' shells and CI runners export.
const CREDENTIALS = [
  'INFERLAB_API_KEY',
  'INFERLAB_WINDOW_TOKEN',
  'HF_TOKEN',
  'HUGGING_FACE_HUB_TOKEN',
  'OPENAI_API_KEY',
  'VLLM_API_KEY',
  'MY_ENDPOINT_KEY',
  'AWS_SECRET_ACCESS_KEY',
  'GITHUB_TOKEN',
  'GH_PAT',
  'PGPASSWORD',
  'MYSQL_PWD',
  'SSH_AUTH_SOCK',
  'XAUTHORITY',
  'npm_config__authToken',
  'hfToken',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'LLAMA_ARG_CTX_SIZE',
  'LLAMA_ARG_HF_TOKEN',
];
const NEEDED = [
  'PATH',
  'HOME',
  'LANG',
  'TMPDIR',
  'LD_LIBRARY_PATH',
  'CUDA_VISIBLE_DEVICES',
  'CUDA_HOME',
  'HIP_VISIBLE_DEVICES',
  'ROCR_VISIBLE_DEVICES',
  'GGML_VK_VISIBLE_DEVICES',
  'GGML_CUDA_ENABLE_UNIFIED_MEMORY',
  'VK_ICD_FILENAMES',
  'HF_HOME',
  'TOKENIZERS_PARALLELISM',
  'DBUS_SESSION_BUS_ADDRESS',
  'GIT_AUTHOR_NAME',
  'KEYBOARD_LAYOUT',
  'PWD',
  'OLDPWD',
];

describe('the environment a child starts with', () => {
  it('withholds every name that says it carries a credential, and passes what engines and drivers read', () => {
    expect(CREDENTIALS.filter((name) => !isWithheld(name))).toEqual([]);
    expect(NEEDED.filter((name) => isWithheld(name))).toEqual([]);
  });

  it('copies the rest of the parent environment unchanged, and lets a child keep the credentials it uses', () => {
    const parent = Object.fromEntries([...CREDENTIALS, ...NEEDED].map((name) => [name, `value of ${name}`]));
    const child = childEnvironment(parent);
    expect(Object.keys(child).sort()).toEqual([...NEEDED].sort());
    for (const name of NEEDED) expect(child[name]).toBe(`value of ${name}`);

    expect(Object.keys(childEnvironment(parent, keepHuggingFaceToken)).filter(isWithheld).sort()).toEqual([
      'HF_TOKEN',
      'HUGGING_FACE_HUB_TOKEN',
    ]);
    const npm = childEnvironment({ ...parent, NPM_TOKEN: 'n', NODE_AUTH_TOKEN: 'a' }, keepNpmCredentials);
    expect(Object.keys(npm).filter(isWithheld).sort()).toEqual(['NODE_AUTH_TOKEN', 'NPM_TOKEN', 'npm_config__authToken']);
  });
});
