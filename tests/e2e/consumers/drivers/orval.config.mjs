// orval's configuration for tests/e2e/consumers/sdks.test.ts (its CLI has no flag for the base
// URL): the fetch client, and a base URL, nothing else.

export default {
  records: {
    input: { target: './openapi.json' },
    output: {
      target: './orval/api.ts',
      client: 'fetch',
      // In Node a client needs the service's URL (the spec's server is a default for docs).
      baseUrl: { runtime: 'process.env.RECORDS_API_URL' },
    },
  },
};
