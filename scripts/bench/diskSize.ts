// What the posts table and its search index take on disk: InnoDB's tablespaces (one file per
// table, FULLTEXT's auxiliary tables included) on MySQL, SQLite's dbstat per table and index.
import { isMysql, type Db } from '../../src/db/connection';

export interface DiskSizes {
  /** The posts table and its own indexes, bytes. */
  table: number;
  /** Every part of the search index, bytes. */
  index: number;
  parts: [string, number][];
}

/** Unknown table: the information_schema view of another server (MariaDB's or MySQL 8's names). */
const ER_UNKNOWN_TABLE = 1109;

/** Search index parts: the word index's tables, InnoDB FULLTEXT's, SQLite's FTS5 shadow tables. */
const INDEX_PART = /^(posts_search|fts_)/i;

export async function diskSizes(db: Db): Promise<DiskSizes> {
  const rows = isMysql(db) ? await mysqlSizes(db) : await sqliteSizes(db);
  const parts = new Map<string, number>();
  let table = 0;
  for (const { name, bytes } of rows) {
    if (name === 'posts') table += bytes;
    else if (INDEX_PART.test(name)) {
      const part = /^fts_/i.test(name) ? 'FULLTEXT tables' : name;
      parts.set(part, (parts.get(part) ?? 0) + bytes);
    }
  }
  const sorted = [...parts].sort((a, b) => b[1] - a[1]);
  return { table, index: sorted.reduce((n, [, b]) => n + b, 0), parts: sorted };
}

/**
 * One file per table (innodb_file_per_table, the default), MariaDB's views or else MySQL 8's.
 * FULLTEXT's auxiliary tables are named after the indexed table's id: only posts_search_docs' count.
 */
async function mysqlSizes(db: Db): Promise<{ name: string; bytes: number }[]> {
  for (const [spaces, tables] of [
    ['INNODB_SYS_TABLESPACES', 'INNODB_SYS_TABLES'],
    ['INNODB_TABLESPACES', 'INNODB_TABLES'],
  ]) {
    let rows: { name: string; bytes: number | string }[];
    let docs: { id: number | string }[];
    try {
      [rows] = await db.raw(
        `SELECT SUBSTRING(NAME, LENGTH(DATABASE()) + 2) AS name, ALLOCATED_SIZE AS bytes FROM information_schema.${spaces} WHERE NAME LIKE CONCAT(DATABASE(), '/%')`,
      );
      [docs] = await db.raw(
        `SELECT TABLE_ID AS id FROM information_schema.${tables} WHERE NAME = CONCAT(DATABASE(), '/posts_search_docs')`,
      );
    } catch (err) {
      if ((err as { errno?: number }).errno === ER_UNKNOWN_TABLE) continue; // not this server's views
      throw err;
    }
    if (!rows.some((r) => r.name === 'posts')) {
      throw new Error(`${spaces} has no file of the posts table (innodb_file_per_table off, or a database name InnoDB encodes)`);
    }
    const fts = docs.length ? `fts_${BigInt(docs[0].id).toString(16).padStart(16, '0')}_` : undefined;
    return rows
      .filter((r) => !/^fts_/i.test(r.name) || (fts && r.name.toLowerCase().startsWith(fts)))
      .map((r) => ({ name: r.name, bytes: Number(r.bytes) }));
  }
  throw new Error('no InnoDB tablespace view (information_schema.INNODB_SYS_TABLESPACES or INNODB_TABLESPACES) to read sizes from');
}

/** dbstat names each b-tree; a table's indexes count with the table. */
async function sqliteSizes(db: Db): Promise<{ name: string; bytes: number }[]> {
  const rows = await db.raw<{ name: string; tbl: string | null; bytes: number }[]>(
    'SELECT d.name AS name, m.tbl_name AS tbl, SUM(d.pgsize) AS bytes FROM dbstat d LEFT JOIN sqlite_master m ON m.name = d.name GROUP BY d.name',
  );
  return rows.map((r) => ({ name: r.tbl ?? r.name, bytes: Number(r.bytes) }));
}
