import { builtinModules } from 'node:module';
import { resolve } from 'node:path';
import { defineConfig } from 'vite';

/**
 * The CLI as plain JavaScript for Node: each command its own chunk, loaded when it runs;
 * dependencies stay in node_modules (better-sqlite3 is native and cannot be bundled).
 */
export default defineConfig({
  build: {
    ssr: true,
    outDir: 'out/cli',
    emptyOutDir: true,
    target: 'node20',
    minify: false,
    reportCompressedSize: false,
    rollupOptions: {
      input: {
        cli: resolve(import.meta.dirname, 'src/main/cli.ts'),
        // A worker thread's entry, loaded by file beside cli.mjs (src/main/runner/stream-shards.ts).
        'stream-shard-worker': resolve(import.meta.dirname, 'src/main/runner/stream-shard-worker.ts'),
        // The workload parser's thread, started by file the same way (src/main/workload/bounded-parse.ts).
        'workload-parse-worker': resolve(import.meta.dirname, 'src/main/workload/workload-parse-worker.ts'),
        // Run once by scripts/build-app.mjs to write workload-validator.mjs beside the parser thread's entry.
        'workload-validator-source': resolve(import.meta.dirname, 'src/main/workload/workload-validator-source.ts'),
      },
      external: [...builtinModules, ...builtinModules.map((name) => `node:${name}`)],
      output: { format: 'es', entryFileNames: '[name].mjs', chunkFileNames: 'chunks/[name]-[hash].mjs' },
    },
  },
});
