/** Search's case fold, in SQL as lower() and search_fold() on SQLite (the search index's). */
export function searchFold(text: string): string {
  return text.replace(/Σ/g, 'σ').toLowerCase();
}
