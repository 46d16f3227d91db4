// Entity tags for records: the ETag is the record's version, quoted ("3"). RFC 9110: If-Match
// compares strongly (a W/ tag never matches), If-None-Match weakly.

export function etag(version: number): string {
  return `"${version}"`;
}

interface TagList {
  any: boolean;
  tags: { weak: boolean; value: string }[];
}

/**
 * One element of the list (RFC 9110: `*` or an entity tag; empty elements are allowed), then `,`
 * or the end. Inside the quotes anything but a quote, as before: such a tag matches no version.
 */
const ELEMENT = /[ \t]*(?:(\*)|(W\/)?"([^"]*)")?[ \t]*(?:,|$)/y;

/**
 * The header as a list of entity tags, or undefined when it is not one (`w/"3"`, `junk"4"`): a
 * tag picked out of such a header would let a write through on a typo.
 */
function parseTags(header: string): TagList | undefined {
  const tags: TagList['tags'] = [];
  let any = false;
  for (let at = 0; at < header.length;) {
    ELEMENT.lastIndex = at;
    const m = ELEMENT.exec(header);
    if (!m) return undefined;
    if (m[1]) any = true;
    else if (m[3] !== undefined) tags.push({ weak: Boolean(m[2]), value: m[3] });
    at = ELEMENT.lastIndex;
  }
  return { any, tags };
}

const NONE: TagList = { any: false, tags: [] };

/**
 * Whether the header is a list of entity tags. A write refuses one that is not: an If-None-Match
 * that names nothing would let the write through on a typo.
 */
export function isTagList(header: string): boolean {
  return parseTags(header) !== undefined;
}

/** The version a tag names: only a tag written as the service writes it ("01" is not "1"). */
function version(value: string): number | undefined {
  return /^(0|[1-9][0-9]{0,14})$/.test(value) ? Number(value) : undefined;
}

/**
 * The versions an If-Match accepts: undefined for "any existing record" (`*`), else the
 * versions named by strong tags (possibly none, which nothing matches).
 */
export function ifMatchVersions(header: string): number[] | undefined {
  const { any, tags } = parseTags(header) ?? NONE;
  if (any) return undefined;
  return tags.flatMap((t) => (t.weak ? [] : (version(t.value) ?? [])));
}

/** The versions an If-None-Match names, weak tags included: undefined for `*` (every version). */
export function ifNoneMatchVersions(header: string): number[] | undefined {
  const { any, tags } = parseTags(header) ?? NONE;
  if (any) return undefined;
  return tags.flatMap((t) => version(t.value) ?? []);
}

export function ifNoneMatchHits(header: string, current: number): boolean {
  const named = ifNoneMatchVersions(header);
  return named === undefined || named.includes(current);
}
