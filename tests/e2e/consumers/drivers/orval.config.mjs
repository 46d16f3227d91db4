// orval's configuration for tests/e2e/consumers/sdks.test.ts (its CLI has no flags for these): the
// fetch client, and only what the README's table of generators says orval needs.

export default {
  records: {
    input: { target: './openapi.json' },
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
