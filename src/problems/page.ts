import { PROBLEM_TYPES, type ProblemKind, problemType } from './types';

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Escaped, with the table's `code` spans as <code>. */
const prose = (text: string) => escape(text).replace(/`([^`]+)`/g, '<code>$1</code>');

/**
 * The page that a problem's `type` resolves to: the kind's title, status, what it means, and what
 * its problems carry. Plain HTML with nothing to load, under the API's own Content-Security-Policy.
 */
export function problemPage(kind: ProblemKind): string {
  const { status, title, description, fields, headers } = PROBLEM_TYPES[kind];
  const code = (names: readonly string[]) => names.map((n) => `<code>${n}</code>`).join(', ');
  const carries = [
    ...(fields.length ? [`<p>Its problems may carry ${code(fields)} in the body.</p>\n`] : []),
    ...(headers.length ? [`<p>Each of them carries the header ${code(headers)}.</p>\n`] : []),
  ].join('');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escape(title)} (${status}): problem type ${kind}</title>
</head>
<body>
<h1>${escape(title)}</h1>
<p>Problem type <code>${problemType(kind)}</code>, answered with status <strong>${status}</strong>.</p>
<p>${prose(description)}</p>
${carries}<p>Every problem is <code>application/problem+json</code> (RFC 9457), with <code>type</code>, <code>title</code>, <code>status</code>, <code>detail</code> and <code>request_id</code>. The API reference is at <a href="/docs">/docs</a>.</p>
</body>
</html>
`;
}
