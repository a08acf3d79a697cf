import os from 'node:os';
import { defineConfig } from 'vitest/config';

// Seeded simulations and pure unit tests keep every core busy; servers get the machine alone.
const everyCore = Math.max(2, os.availableParallelism());
const simulations = 'test/unit/**/*-simulation.test.ts';
// A file that replaces modules with vi.mock needs a module graph of its own: in the shared graph of
// the unit workers, a module another file loaded first would stay unmocked.
const mocked = 'test/unit/**/*.mocked.test.ts';
const serverLeakCheck = 'test/support/no-server-outlives-file.ts';
// .ci/run runs every integration and UI test a second time with the nvidia-smi stand-in on PATH, but those
// tagged so (docs/TESTING.md).
const tags = [
  {
    name: 'own-gpu-tools',
    description:
      'sets the PATH its GPU samplers read (a stand-in of its own, or none), so it already runs both ways and the stand-in pass leaves it out',
  },
];

export default defineConfig({
  test: {
    projects: [
      {
        // The groups run one after another: simulations and servers must not compete for the cores,
        // since a run that competes with other processes is (rightly) marked contaminated, and the
        // unit tests that drive stand-in samplers on a clock do not share the cores with simulations.
        test: { name: 'simulation', tags, include: [simulations], environment: 'node', maxWorkers: everyCore, sequence: { groupOrder: 0 } },
      },
      {
        test: {
          name: 'unit',
          tags,
          include: ['test/unit/**/*.test.ts'],
          exclude: [simulations, mocked],
          environment: 'node',
          // One module graph per worker rather than per file: importing it again for each of ~70 files cost a third of
          // the group's time. Tests that set environment variables put them back (afterEach or finally).
          isolate: false,
          maxWorkers: everyCore,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: { name: 'unit-mocked', tags, include: [mocked], environment: 'node', maxWorkers: everyCore, sequence: { groupOrder: 1 } },
      },
      {
        // Real llama-server processes: one file at a time.
        test: {
          name: 'integration',
          tags,
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          setupFiles: [serverLeakCheck],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
      {
        test: {
          name: 'e2e',
          tags,
          include: ['test/e2e/**/*.test.ts'],
          environment: 'node',
          setupFiles: [serverLeakCheck],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
          sequence: { groupOrder: 3 },
        },
      },
    ],
  },
});
