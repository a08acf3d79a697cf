/**
 * A setup file of the projects that start real servers (integration, UI): each of their tests sees
 * a GPU, since every server, experiment and setup reads one (memory before spawn, the idle
 * baseline, cooldowns, telemetry, the engine plan). See test/support/test-gpu.ts and docs/TESTING.md.
 */
import { testGpuPath } from './test-gpu';

process.env.PATH = testGpuPath(process.env).path;
// Every run's idle baseline spans four GPU readings: at 100 ms that is 0.4 s rather than the default's
// second, over some hundreds of runs in the suite. A test that pins the default sets it empty.
process.env.INFERLAB_TELEMETRY_INTERVAL_MS ??= '100';
