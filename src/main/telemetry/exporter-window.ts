import type { GpuSample } from '../../shared/contract/telemetry';
import type { ExporterCadence } from './gpu-exporter-sampler';

/** The readings of one scrape of the exporter's page. */
export interface ExporterSweep {
  t: number;
  samples: GpuSample[];
}

export interface ExporterWindow {
  /** Collections taken inside the measured window, one sweep each: the window's samples. */
  inside: ExporterSweep[];
  /** What the window's figures come from: `inside`, or where that is empty, the collections the window's reads showed. */
  figures: ExporterSweep[];
  notes: string[];
}

const seconds = (ms: number) => (ms / 1000).toFixed(2);

/** dcgm-exporter's own default, named so a note can say how to change it. */
const DCGM_DEFAULT_NOTE = 'dcgm-exporter collects every 30 s unless started with -c <ms> (DCGM_EXPORTER_INTERVAL)';

const collectionOf = (sweep: ExporterSweep) => sweep.samples[0]?.collection;

/**
 * The exporter's readings over the measured window [start, end]. A reading is a sample of the
 * window only where the exporter's collection could not have been taken outside it: a page read
 * again is the same collection, and a page first read at the window's opening may have been
 * collected before it (any time after the read before). Where no collection is provably inside,
 * the figures still come from what the window's reads showed, labelled as the exporter's last
 * collection with a bound on how much earlier than the window it was taken.
 */
export function exporterWindow(
  sweeps: readonly ExporterSweep[],
  window: { start: number | null; end: number | null },
  cadence: ExporterCadence,
  exporter: string,
): ExporterWindow {
  const { start, end } = window;
  if (start === null) return { inside: [], figures: [], notes: [] };
  const last = end ?? Number.POSITIVE_INFINITY;
  const inside = sweeps.filter((sweep) => {
    const collection = collectionOf(sweep);
    if (!collection) return sweep.t >= start && sweep.t <= last;
    return !collection.repeat && collection.earliest !== null && collection.earliest >= start && collection.latest <= last;
  });
  const notes: string[] = [];
  let figures = inside;
  const span = end === null ? null : end - start;
  if (inside.length === 0) {
    const seen = new Set<number>();
    figures = sweeps.filter((sweep) => {
      const id = collectionOf(sweep)?.id;
      if (sweep.t < start || sweep.t > last || id === undefined || seen.has(id)) return false;
      seen.add(id);
      return true;
    });
    if (figures.length > 0) notes.push(staleNote(figures, start, span, exporter));
  }
  const unresolved = span === null ? null : unresolvedNote(cadence, span, exporter);
  if (unresolved) notes.push(unresolved);
  if (cadence.timestampsRefused > 0)
    notes.push(
      `${cadence.timestampsRefused} of ${exporter}'s pages carried timestamps ahead of this machine's clock (another clock or time zone): their collection times come from the reads instead`,
    );
  return { inside, figures, notes };
}

/** The figures are a collection that may predate the window: say so, and how much older it can be. */
function staleNote(figures: readonly ExporterSweep[], start: number, span: number | null, exporter: string): string {
  const collections = figures.map((sweep) => collectionOf(sweep)!);
  const earliest = collections.some((collection) => collection.earliest === null)
    ? null
    : Math.min(...collections.map((collection) => collection.earliest!));
  const latest = Math.max(...collections.map((collection) => collection.latest));
  let when: string;
  if (earliest !== null && earliest < start) when = `taken up to ${seconds(start - earliest)} s before it opened`;
  else if (earliest !== null) when = 'taken at its close or just after';
  else if (latest < start)
    when = `taken at least ${seconds(start - latest)} s before it opened (how much earlier is unknown: it was the first page read)`;
  else when = 'taken at an unknown time before it was read (it was the first page read)';
  const window = span === null ? 'the measured window' : `the ${seconds(span)} s measured window`;
  return `GPU figures are ${exporter}'s last collection, not samples inside ${window}: ${when}`;
}

/** A window shorter than the exporter's refresh holds at most one of its collections. */
function unresolvedNote(cadence: ExporterCadence, span: number, exporter: string): string | null {
  const advice = exporter === 'dcgm-exporter' ? `; ${DCGM_DEFAULT_NOTE}` : '';
  if (cadence.everyMs !== null && span < cadence.everyMs)
    return `${exporter} collects about every ${seconds(cadence.everyMs)} s (${cadence.collections} collections in ${cadence.reads} reads of its page): it cannot resolve the ${seconds(span)} s measured window${advice}`;
  if (span < cadence.unchangedMs)
    return `${exporter}'s page did not change for ${seconds(cadence.unchangedMs)} s while it was read, so it collects less often than that: it cannot resolve the ${seconds(span)} s measured window${advice}`;
  return null;
}

/** The window's power readings for its energy, each at its collection's time where the exporter stamped it. */
export function collectedReadings(inside: readonly ExporterSweep[]): GpuSample[] {
  return inside.flatMap((sweep) =>
    sweep.samples.map((sample) => (sample.collection?.stamped ? { ...sample, t: sample.collection.latest } : sample)),
  );
}
