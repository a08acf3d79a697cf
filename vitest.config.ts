import os from 'node:os';
import { defineConfig } from 'vitest/config';

// Seeded simulations and pure unit tests keep every core busy; servers get the machine alone.
const everyCore = Math.max(2, os.availableParallelism());
const simulations = 'test/unit/**/*-simulation.test.ts';
// A file that replaces modules with vi.mock needs a module graph of its own: in the shared graph of
// the unit workers, a module another file loaded first would stay unmocked.
const mocked = 'test/unit/**/*.mocked.test.ts';
const serverLeakCheck = 'test/support/no-server-outlives-file.ts';
// Every test that starts a server sees a GPU: the machine's own, or the nvidia-smi stand-in where it has none (docs/TESTING.md).
const gpuOnPath = 'test/support/gpu-on-path.ts';
const cpuPerFile = 'test/support/cpu-per-file.ts';

export default defineConfig({
  test: {
    projects: [
      {
        // The groups run one after another: simulations and servers must not compete for the cores,
        // since a run that competes with other processes is (rightly) marked contaminated, and the
        // unit tests that drive stand-in samplers on a clock do not share the cores with simulations.
        test: { name: 'simulation', include: [simulations], environment: 'node', maxWorkers: everyCore, sequence: { groupOrder: 0 } },
      },
      {
        test: {
          name: 'unit',

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
        test: { name: 'unit-mocked', include: [mocked], environment: 'node', maxWorkers: everyCore, sequence: { groupOrder: 1 } },
      },
      {
        // Real llama-server processes: one file at a time.
        test: {
          name: 'integration',

          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          setupFiles: [serverLeakCheck, gpuOnPath, cpuPerFile],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
      {
        test: {
          name: 'e2e',

          include: ['test/e2e/**/*.test.ts'],
          environment: 'node',
          setupFiles: [serverLeakCheck, gpuOnPath, cpuPerFile],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
          sequence: { groupOrder: 3 },
        },
      },
    ],
  },
});
