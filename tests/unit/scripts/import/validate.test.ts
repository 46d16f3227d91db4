import { lineChecker } from '../../../../scripts/import/validate';
import { collectionNamed } from '../../../../src/collections';
import { toNfc } from '../../../../src/lib/text';
import { loadSpec } from '../../../../src/spec';

// An import stores text in the one form the service's writes store it in (NFC, docs/rules.md).
test('an import line written in NFD is stored in NFC', () => {
  const checker = lineChecker(
    loadSpec(),
    collectionNamed('books', (m) => new Error(m)),
  );
  const line = JSON.stringify({ title: 'Le Père Goriot', author: 'Honoré de Balzac', isbn: '9782070409341' });
  const checked = checker.check(line.normalize('NFD'));
  expect(checked.ok && checked.record.values).toMatchObject({ title: 'Le Père Goriot', author: 'Honoré de Balzac' });
  expect(checked.ok && checked.record.values.title).not.toBe('Le Père Goriot'.normalize('NFD'));
});

test('toNfc composes every string of a value, keys included, and leaves the rest', () => {
  const d = (s: string) => s.normalize('NFD');
  expect(toNfc({ [d('clé')]: [d('é'), 1, null, { a: d('ü') }], n: 2, b: true })).toEqual({
    clé: ['é', 1, null, { a: 'ü' }],
    n: 2,
    b: true,
  });
});
