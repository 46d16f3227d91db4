// What the posts table and its search index take on disk: InnoDB's tablespaces (one file per
// table) on MySQL, SQLite's dbstat per table and index.
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

/** Search index parts: the sets, the vocabulary, the pairable words, the pending records. */
const INDEX_PART = /^posts_search/i;

export async function diskSizes(db: Db): Promise<DiskSizes> {
  const rows = isMysql(db) ? await mysqlSizes(db) : await sqliteSizes(db);
  const parts = new Map<string, number>();
  let table = 0;
  for (const { name, bytes } of rows) {
    if (name === 'posts') table += bytes;
    else if (INDEX_PART.test(name)) parts.set(name, (parts.get(name) ?? 0) + bytes);
  }
  const sorted = [...parts].sort((a, b) => b[1] - a[1]);
  return { table, index: sorted.reduce((n, [, b]) => n + b, 0), parts: sorted };
}

/** One file per table (innodb_file_per_table, the default), MariaDB's views or else MySQL 8's. */
async function mysqlSizes(db: Db): Promise<{ name: string; bytes: number }[]> {
  for (const spaces of ['INNODB_SYS_TABLESPACES', 'INNODB_TABLESPACES']) {
    let rows: { name: string; bytes: number | string }[];
    try {
      [rows] = await db.raw(
        `SELECT SUBSTRING(NAME, LENGTH(DATABASE()) + 2) AS name, ALLOCATED_SIZE AS bytes FROM information_schema.${spaces} WHERE NAME LIKE CONCAT(DATABASE(), '/%')`,
      );
    } catch (err) {
      if ((err as { errno?: number }).errno === ER_UNKNOWN_TABLE) continue; // not this server's views
      throw err;
    }
    if (!rows.some((r) => r.name === 'posts')) {
      throw new Error(`${spaces} has no file of the posts table (innodb_file_per_table off, or a database name InnoDB encodes)`);
    }
    return rows.map((r) => ({ name: r.name, bytes: Number(r.bytes) }));
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
