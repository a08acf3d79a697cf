import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { CPU_LOG_VARIABLE } from './cpu-log';

/**
 * Closes every run with three things a maintainer needs and the default reporter does not say:
 * each skipped test with the reason it gave (a skip without one is flagged, since nothing
 * tells whether it checked anything), each project's wall time, and the CPU the server-starting
 * files used, the costliest first (test/support/cpu-per-file.ts).
 */
export default class SkipAndTimeReporter implements Reporter {
  private readonly spans = new Map<string, { start: number; end: number }>();
  private readonly cpuLog = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-test-cpu-')), 'cpu.jsonl');

  onInit(): void {
    // Workers start after this and inherit it.
    process.env[CPU_LOG_VARIABLE] = this.cpuLog;
  }

  /** Each file's CPU as its setup file wrote it; the log is removed once read. */
  private readCpuLog(): Map<string, number> {
    const byFile = new Map<string, number>();
    try {
      for (const line of fs.readFileSync(this.cpuLog, 'utf8').split('\n').filter(Boolean)) {
        const { file, cpuSeconds } = JSON.parse(line) as { file: string; cpuSeconds: number };
        byFile.set(file, (byFile.get(file) ?? 0) + cpuSeconds);
      }
    } catch {
      // No server-starting file ran.
    } finally {
      fs.rmSync(path.dirname(this.cpuLog), { recursive: true, force: true });
    }
    return byFile;
  }

  onTestModuleStart(module: TestModule): void {
    const span = this.spans.get(module.project.name);
    const now = Date.now();
    if (!span) this.spans.set(module.project.name, { start: now, end: now });
  }

  onTestModuleEnd(module: TestModule): void {
    const span = this.spans.get(module.project.name);
    if (span) span.end = Date.now();
  }

  onTestRunEnd(modules: readonly TestModule[]): void {
    const skipped: string[] = [];
    for (const module of modules)
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state !== 'skipped') continue;
        const where = `${module.moduleId.replace(`${process.cwd()}/`, '')} > ${test.fullName}`;
        skipped.push(`  ${where}: ${result.note ?? 'NO REASON GIVEN'}`);
      }
    const lines: string[] = [];
    if (skipped.length > 0) lines.push(`skipped tests (${skipped.length}), with the reason each gave:`, ...skipped);
    const times = [...this.spans].map(([name, span]) => `${name} ${((span.end - span.start) / 1000).toFixed(1)} s`);
    if (times.length > 0) lines.push(`wall time per project: ${times.join(', ')}`);
    lines.push(...cpuLines(modules, this.readCpuLog()));
    if (lines.length > 0) process.stdout.write(`\n${lines.join('\n')}\n`);
  }
}

/** The most files the CPU lines name. */
const CPU_FILES_NAMED = 12;

/** Per project, the CPU its files used against their wall time; then the costliest files. */
function cpuLines(modules: readonly TestModule[], cpuByFile: Map<string, number>): string[] {
  const measured = modules.flatMap((module) => {
    const cpu = cpuByFile.get(module.moduleId);
    return cpu === undefined ? [] : [{ module, cpu, wall: module.diagnostic().duration / 1000 }];
  });
  if (measured.length === 0) return [];
  const projects = new Map<string, { cpu: number; wall: number }>();
  for (const { module, cpu, wall } of measured) {
    const total = projects.get(module.project.name) ?? { cpu: 0, wall: 0 };
    projects.set(module.project.name, { cpu: total.cpu + cpu, wall: total.wall + wall });
  }
  const seconds = (value: number) => `${value.toFixed(1)} s`;
  const costliest = [...measured].sort((a, b) => b.cpu - a.cpu).slice(0, CPU_FILES_NAMED);
  return [
    `CPU of the server-starting files (theirs and every process they waited for): ${[...projects]
      .map(([name, total]) => `${name} ${seconds(total.cpu)} in ${seconds(total.wall)}`)
      .join(', ')}; the costliest:`,
    ...costliest.map(
      ({ module, cpu, wall }) => `  ${seconds(cpu)} CPU in ${seconds(wall)}  ${module.moduleId.replace(`${process.cwd()}/`, '')}`,
    ),
  ];
}
