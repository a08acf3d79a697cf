/**
 * A repository's GGUF files as the models a user chooses between: split parts joined into one
 * candidate, each labelled with the quantization its file name carries.
 */
export interface CandidateFiles {
  /** The quantization as the file name writes it (Q4_K_M, UD-Q4_K_XL, IQ4_XS, BF16…), else the name itself. */
  label: string;
  /** Every part, in order; one file when the model is not split. */
  files: string[];
}

const SPLIT = /^(.*)-(\d{5})-of-(\d{5})\.gguf$/i;
/** Quantization names as publishers put them in file names, longest alternatives first. */
const QUANT_IN_NAME =
  /(?:^|[-_.\s/])((?:UD-)?(?:IQ[1-4]_(?:XXS|XS|NL|S|M)|Q[2-8]_K(?:_(?:XXL|XL|L|M|S))?|Q[4-8]_[01]|TQ[12]_0|MXFP4(?:_MOE)?|BF16|F16|F32|FP16))(?=[-_.\s/]|$)/i;

/** Projectors for vision or audio ride beside a language model: candidates of their own, labelled by their file names. */
export function isProjector(file: string): boolean {
  return /(^|\/)mmproj[^/]*\.gguf$/i.test(file);
}

export function quantLabel(file: string): string {
  const name = file.replace(/\.gguf$/i, '').replace(/-\d{5}-of-\d{5}$/i, '');
  const match = QUANT_IN_NAME.exec(name);
  return match ? match[1]!.toUpperCase() : (name.split('/').pop() ?? name);
}

/** Groups GGUF paths (hub paths or local files) into candidates; parts of an incomplete split set are reported. */
export function groupCandidates(paths: readonly string[]): { candidates: CandidateFiles[]; problems: string[] } {
  const singles: CandidateFiles[] = [];
  const projectors: CandidateFiles[] = [];
  const sets = new Map<string, { total: number; parts: Map<number, string> }>();
  for (const file of paths) {
    if (!file.toLowerCase().endsWith('.gguf')) continue;
    // Their names carry the quantization of the model beside them (mmproj-F16): the name tells them apart.
    if (isProjector(file)) {
      projectors.push({ label: stemOf(file), files: [file] });
      continue;
    }
    const split = SPLIT.exec(file);
    if (!split) {
      singles.push({ label: quantLabel(file), files: [file] });
      continue;
    }
    const key = `${split[1]}|${split[3]}`;
    const set = sets.get(key) ?? { total: Number(split[3]), parts: new Map<number, string>() };
    set.parts.set(Number(split[2]), file);
    sets.set(key, set);
  }
  const problems: string[] = [];
  const joined: CandidateFiles[] = [];
  for (const [key, set] of sets) {
    const files = Array.from({ length: set.total }, (_, index) => set.parts.get(index + 1));
    const missing = files.flatMap((file, index) => (file ? [] : [index + 1]));
    if (missing.length > 0) {
      problems.push(
        `${key.split('|')[0]}: split into ${set.total} parts, but part${missing.length === 1 ? '' : 's'} ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing`,
      );
      continue;
    }
    joined.push({ label: quantLabel(files[0]!), files: files as string[] });
  }
  return {
    candidates: [...distinctLabels([...singles, ...joined]), ...projectors].sort((a, b) => a.files[0]!.localeCompare(b.files[0]!)),
    problems,
  };
}

/** A file's name without its folder, `.gguf` and split suffix: what tells apart two files of one quantization. */
const stemOf = (file: string) => (file.split('/').pop() ?? file).replace(/\.gguf$/i, '').replace(/-\d{5}-of-\d{5}$/i, '');

/**
 * Candidates whose file names give the same label (two adapters, or two models, both F16) are
 * labelled by their file names instead, so that a label picks one candidate to plan or pull.
 */
function distinctLabels(candidates: CandidateFiles[]): CandidateFiles[] {
  const counts = new Map<string, number>();
  for (const candidate of candidates) counts.set(candidate.label.toUpperCase(), (counts.get(candidate.label.toUpperCase()) ?? 0) + 1);
  return candidates.map((candidate) =>
    (counts.get(candidate.label.toUpperCase()) ?? 0) > 1 ? { ...candidate, label: stemOf(candidate.files[0]!) } : candidate,
  );
}

/** The candidates a --quants list names (case-insensitive, exactly); every candidate for "all" or none given. */
export function chooseCandidates(
  candidates: readonly CandidateFiles[],
  quants: readonly string[] | 'all',
): { chosen: CandidateFiles[]; unmatched: string[] } {
  if (quants === 'all' || quants.length === 0) return { chosen: [...candidates], unmatched: [] };
  const wanted = quants.map((quant) => quant.toUpperCase());
  const chosen = candidates.filter((candidate) => wanted.includes(candidate.label.toUpperCase()));
  const unmatched = quants.filter((quant) => !candidates.some((candidate) => candidate.label.toUpperCase() === quant.toUpperCase()));
  return { chosen, unmatched };
}
