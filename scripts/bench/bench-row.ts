/** One line of `npm run bench`'s table. */
export interface BenchRow {
  figure: string;
  value: string;
  target: string;
}
