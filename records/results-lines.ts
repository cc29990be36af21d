/** The lines of an import's results file (one JSON value each), as values. */
export function resultsLines<T>(text: string): T[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as T);
}
