import fs from 'node:fs';
import type { Reporter, TestCase, TestModule, Vitest } from 'vitest/node';

/**
 * Closes every run with two things a maintainer needs and the default reporter does not say:
 * each skipped test with the reason it gave (a skip without one is flagged, since nothing
 * tells whether it checked anything), and each project's wall time. Under `--tags-filter`, the
 * tests the filter left out are counted on one line, not listed as skips: they were not chosen.
 * With TEST_COUNTS_FILE set, the counts are also written there as JSON, for a CI script that
 * adds up several passes.
 */
export default class SkipAndTimeReporter implements Reporter {
  private readonly spans = new Map<string, { start: number; end: number }>();
  private filterTags: string[] = [];
  private wantedTags: string[] = [];
  private refusedTags: string[] = [];

  onInit(vitest: Vitest): void {
    // The tags an expression such as "slow && !own-gpu-tools" names, those wanted and those refused ("!").
    // Expressions here are read as conjunctions of such terms; "||" and parentheses are not used by this project.
    const expressions = vitest.config.tagsFilter ?? [];
    const terms = expressions.flatMap((expression) => expression.match(/!?\s*[\w\-/]+/g) ?? []);
    this.refusedTags = terms.filter((term) => term.startsWith('!')).map((term) => term.slice(1).trim());
    this.wantedTags = terms.filter((term) => !term.startsWith('!'));
    this.filterTags = terms;
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

  private leftOutByFilter(test: TestCase, note: string | undefined): boolean {
    if (this.filterTags.length === 0 || note !== undefined) return false;
    const refused = test.tags.some((tag) => this.refusedTags.includes(tag));
    const wanted = this.wantedTags.length === 0 || test.tags.some((tag) => this.wantedTags.includes(tag));
    return refused || !wanted;
  }

  onTestRunEnd(modules: readonly TestModule[]): void {
    const skipped: string[] = [];
    const counts = { passed: 0, failed: 0, skipped: 0, notSelected: 0 };
    for (const module of modules)
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state === 'passed') counts.passed += 1;
        else if (result.state === 'failed') counts.failed += 1;
        if (result.state !== 'skipped') continue;
        if (this.leftOutByFilter(test, result.note)) {
          counts.notSelected += 1;
          continue;
        }
        counts.skipped += 1;
        const where = `${module.moduleId.replace(`${process.cwd()}/`, '')} > ${test.fullName}`;
        skipped.push(`  ${where}: ${result.note ?? 'NO REASON GIVEN'}`);
      }
    const lines: string[] = [];
    if (skipped.length > 0) lines.push(`skipped tests (${skipped.length}), with the reason each gave:`, ...skipped);
    if (counts.notSelected > 0) lines.push(`${counts.notSelected} tests not chosen by --tags-filter ${this.filterTags.join(' ')}`);
    const times = [...this.spans].map(([name, span]) => `${name} ${((span.end - span.start) / 1000).toFixed(1)} s`);
    if (times.length > 0) lines.push(`wall time per project: ${times.join(', ')}`);
    if (lines.length > 0) process.stdout.write(`\n${lines.join('\n')}\n`);
    const countsFile = process.env.TEST_COUNTS_FILE;
    if (countsFile) fs.writeFileSync(countsFile, `${JSON.stringify(counts)}\n`);
  }
}
