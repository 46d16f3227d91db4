// orval's configuration for tests/consumers/sdks.test.ts (its CLI has no flags for these): the
// fetch client, and only what the README's table of generators says orval needs.

// orval types a parameter whose schema is a `$ref` into another schema's property (`min_price`:
// `ProductWrite/properties/price`) as a type named after the property (`Price`) that it never
// declares; give such parameters the property's schema itself.
const resolve = (doc, ref) =>
  ref
    .slice(2)
    .split('/')
    .map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((node, key) => node[key], doc);

function inlinePropertyRefs(doc) {
  for (const parameter of Object.values(doc.components?.parameters ?? {})) {
    const ref = parameter.schema?.$ref;
    if (typeof ref === 'string' && ref.includes('/properties/')) parameter.schema = resolve(doc, ref);
  }
  return doc;
}

export default {
  records: {
    input: { target: './openapi.json', override: { transformer: inlinePropertyRefs } },
    output: {
      target: './orval/api.ts',
      client: 'fetch',
      // Paths are relative (the spec's server is `/`): in Node a client needs the service's URL.
      baseUrl: { runtime: 'process.env.RECORDS_API_URL' },
      // Lists also answer NDJSON and CSV; with `application/x-ndjson` among an operation's media
      // types, orval returns the raw Response for every answer of that list, JSON pages and
      // errors included, unparsed (while typing `data`).
      override: { contentType: { exclude: ['application/x-ndjson', 'text/csv'] } },
    },
  },
};
