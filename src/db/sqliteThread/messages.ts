/** A statement sent to a SQLite thread (worker.ts); `id` numbers it within its connection. */
export interface Statement {
  id: number;
  sql: string;
  bindings: unknown[];
}

/** The thread's answer to statement `id` (0: to its opening): rows, what a write changed, or its error. */
export interface Answer {
  id: number;
  rows?: Record<string, unknown>[];
  changes?: number;
  error?: { name: string; message: string; code?: string };
}
