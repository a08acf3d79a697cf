// Keeps the SQLite binding this install compiled where better-sqlite3's installer (prebuild-install)
// keeps the prebuilt bindings it downloads, so the next `npm ci` on this machine unpacks it instead
// of compiling SQLite again: on a machine that cannot reach GitHub, where the prebuilt ones are, that
// compile is about a minute on two cores. The installer loads an unpacked binding before it accepts
// it and compiles when that fails, so a stale or damaged file here costs only the compile.
//
// Usage: node scripts/keep-sqlite-binding.mjs   (after npm ci; does nothing when one is kept already)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const packageDir = path.dirname(require.resolve('better-sqlite3/package.json'));
const binding = path.join(packageDir, 'build', 'Release', 'better_sqlite3.node');
// The installer's own naming, read from the installer, so the file is found where it will look.
const fromInstaller = createRequire(path.join(packageDir, 'package.json'));
const installerRc = fromInstaller('prebuild-install/rc');
const installerPaths = fromInstaller('prebuild-install/util');

// The installer reads the cache folder from npm's configuration, which npm passes to install scripts.
process.env.npm_config_cache ??= execFileSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).trim();
const pkg = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
const kept = installerPaths.cachedPrebuild(installerPaths.getDownloadUrl({ ...installerRc(pkg), pkg }));

if (fs.existsSync(kept)) {
  console.log(`keep-sqlite-binding: already kept at ${kept}`);
} else if (!fs.existsSync(binding)) {
  console.log(`keep-sqlite-binding: no binding at ${binding}; nothing kept`);
} else {
  fs.mkdirSync(path.dirname(kept), { recursive: true });
  const partial = `${kept}.${process.pid}.partial`;
  // The layout of a published prebuild: the binding at build/Release/, unpacked into the package folder.
  execFileSync('tar', ['-czf', partial, '-C', packageDir, 'build/Release/better_sqlite3.node']);
  fs.renameSync(partial, kept);
  console.log(`keep-sqlite-binding: kept ${path.relative(process.cwd(), binding)} at ${kept}`);
}
