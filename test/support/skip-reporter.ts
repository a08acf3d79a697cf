import type { Reporter, TestModule } from 'vitest/node';

/**
 * Closes every run with two things a maintainer needs and the default reporter does not say:
 * each skipped test with the reason it gave (a skip without one is flagged, since nothing
 * tells whether it checked anything), and each project's wall time.
 */
export default class SkipAndTimeReporter implements Reporter {
  private readonly spans = new Map<string, { start: number; end: number }>();

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
    if (lines.length > 0) process.stdout.write(`\n${lines.join('\n')}\n`);
  }
}
