// Entity tags for records: the ETag is the record's version, quoted ("3"). RFC 9110: If-Match
// compares strongly (a W/ tag never matches), If-None-Match weakly.

export function etag(version: number): string {
  return `"${version}"`;
}

interface TagList {
  any: boolean;
  tags: { weak: boolean; value: string }[];
}

function parseTags(header: string): TagList {
  const tags: TagList['tags'] = [];
  let any = false;
  for (const m of header.matchAll(/\s*(\*|(W\/)?"([^"]*)")\s*(,|$)/g)) {
    if (m[1] === '*') any = true;
    else tags.push({ weak: Boolean(m[2]), value: m[3] });
  }
  return { any, tags };
}

/**
 * The versions an If-Match accepts: undefined for "any existing record" (`*`), else the
 * versions named by strong tags (possibly none, which nothing matches).
 */
export function ifMatchVersions(header: string): number[] | undefined {
  const { any, tags } = parseTags(header);
  if (any) return undefined;
  // Strong comparison is character by character: "01" is not "1", so only a tag written as the
  // service writes it can name a version.
  return tags.filter((t) => !t.weak && /^(0|[1-9][0-9]{0,14})$/.test(t.value)).map((t) => Number(t.value));
}

export function ifNoneMatchHits(header: string, version: number): boolean {
  const { any, tags } = parseTags(header);
  return any || tags.some((t) => t.value === String(version));
}
