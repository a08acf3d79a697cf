// Times `inferlab run --requests 2` from two checkouts, alternated round by round: the wall time to
// its "run <id>:" line (the load is about to start) and to its exit, as medians. Each checkout runs
// its own build (out/cli, made by npm run build), each run on a database of its own.
//
// Usage: node scripts/compare-run-start.mjs BEFORE_CHECKOUT AFTER_CHECKOUT [ROUNDS=7] [MODEL=demo:q8_0]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [beforeDir, afterDir, rounds = '7', model = 'demo:q8_0'] = process.argv.slice(2);
if (!beforeDir || !afterDir) {
  console.error('usage: node scripts/compare-run-start.mjs BEFORE_CHECKOUT AFTER_CHECKOUT [ROUNDS=7] [MODEL=demo:q8_0]');
  process.exit(2);
}

function timeOneRun(checkout) {
  return new Promise((resolve, reject) => {
    const db = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'run-start-')), 'runs.db');
    const args = ['run', '--workload', 'chat-short', '--requests', '2', '--model', model, '--db', db];
    const started = performance.now();
    let toLoad = null;
    let stderr = '';
    const child = spawn(path.join(checkout, 'bin', 'inferlab'), args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (toLoad === null && /^run \S+: /m.test(stderr)) toLoad = performance.now() - started;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      fs.rmSync(path.dirname(db), { recursive: true, force: true });
      if (code !== 0 || toLoad === null) reject(new Error(`${checkout}: inferlab run exited ${code}:\n${stderr}`));
      else resolve({ toLoad, whole: performance.now() - started });
    });
  });
}

const timings = { before: [], after: [] };
for (let round = 0; round < Number(rounds); round++) {
  // Alternated, and the order swapped every round, so a drifting machine weighs on both alike.
  const order = round % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
  for (const side of order) timings[side].push(await timeOneRun(side === 'before' ? beforeDir : afterDir));
}
const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];
for (const [side, runs] of Object.entries(timings)) {
  const toLoad = runs.map((run) => run.toLoad);
  console.log(
    `${side}: to the first request ${median(toLoad).toFixed(0)} ms (${toLoad.map((ms) => ms.toFixed(0)).join(', ')}); ` +
      `whole run ${median(runs.map((run) => run.whole)).toFixed(0)} ms`,
  );
}
