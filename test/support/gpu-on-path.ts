/**
 * A setup file of the projects that start real servers (integration, UI): each of their tests sees
 * a GPU, since every server, experiment and setup reads one (memory before spawn, the idle
 * baseline, cooldowns, telemetry, the engine plan). See test/support/test-gpu.ts and docs/TESTING.md.
 */
import { testGpuPath } from './test-gpu';

process.env.PATH = testGpuPath(process.env).path;
