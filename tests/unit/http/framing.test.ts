import { type MessageRefusal, messageRefusal } from '../../../src/http/framing';

// What Node's parser took, as req.httpVersion and req.rawHeaders give it: refused or not, and as
// what kind of problem. The sockets' side (answer, then close) is in tests/integration/http/server.test.ts.
const cases: [string, { version: string; headers: string[]; want: MessageRefusal['kind'] | undefined }][] = [
  ['a plain HTTP/1.1 request', { version: '1.1', headers: ['Host', 'x', 'Authorization', 'Bearer a'], want: undefined }],
  ['HTTP/1.0 without Host', { version: '1.0', headers: [], want: undefined }],
  ['HTTP/2.0', { version: '2.0', headers: ['Host', 'x'], want: 'http-version' }],
  ['HTTP/0.9', { version: '0.9', headers: ['Host', 'x'], want: 'http-version' }],
  ['Host twice', { version: '1.1', headers: ['Host', 'x', 'Host', 'x'], want: 'duplicate-header' }],
  [
    'Authorization twice, in two spellings',
    { version: '1.1', headers: ['authorization', 'Bearer a', 'AUTHORIZATION', 'Bearer b'], want: 'duplicate-header' },
  ],
  [
    'Content-Type twice',
    { version: '1.1', headers: ['Content-Type', 'application/json', 'content-type', 'text/plain'], want: 'duplicate-header' },
  ],
  ['Idempotency-Key twice', { version: '1.1', headers: ['Idempotency-Key', 'a', 'Idempotency-Key', 'b'], want: 'duplicate-header' }],
  // Lists by nature: Node joins them, as a proxy would.
  [
    'If-Match and Accept twice',
    { version: '1.1', headers: ['If-Match', '"1"', 'If-Match', '"2"', 'Accept', 'a', 'Accept', 'b'], want: undefined },
  ],
  ['Transfer-Encoding: chunked', { version: '1.1', headers: ['Transfer-Encoding', 'chunked'], want: undefined }],
  ['Transfer-Encoding: Chunked', { version: '1.1', headers: ['Transfer-Encoding', 'Chunked'], want: undefined }],
  [
    'Transfer-Encoding: gzip, chunked',
    { version: '1.1', headers: ['Transfer-Encoding', 'gzip, chunked'], want: 'transfer-coding-not-implemented' },
  ],
  [
    'Transfer-Encoding gzip and chunked, in two lines',
    { version: '1.1', headers: ['Transfer-Encoding', 'gzip', 'Transfer-Encoding', 'chunked'], want: 'transfer-coding-not-implemented' },
  ],
  [
    'Transfer-Encoding chunked twice, in two lines',
    { version: '1.1', headers: ['Transfer-Encoding', 'chunked', 'Transfer-Encoding', 'chunked'], want: 'bad-framing' },
  ],
  ['HTTP/1.0 with Transfer-Encoding: chunked', { version: '1.0', headers: ['Transfer-Encoding', 'chunked'], want: 'bad-framing' }],
];
test.each(cases)('%s', (_n, { version, headers, want }) => {
  expect(messageRefusal(version, headers)?.kind).toBe(want);
});

test('the detail names the field given twice as the service spells it', () => {
  expect(messageRefusal('1.1', ['host', 'a', 'HOST', 'b'])?.detail).toBe('The request carries Host more than once');
});
