// Word lists for generated text. Frequent words first: Rng.pickSkewed favours the front, which
// gives the uneven word frequencies of real text (so a search term can be common or rare).
// A few accented words keep non-ASCII text and case folding in play.

export const WORDS = (
  'the of and to in is that for it with as was on be at by this had not are but from or have ' +
  'an they which one you were all we when there can more if out so said what up its about into ' +
  'than them only other new some could time these two may first then do any like my now over ' +
  'such our man me even most made after also did many before must through back years where much ' +
  'your way well down should because each just those people how too little state good very make ' +
  'world still own see men work long get here between both life being under never day same another ' +
  'know while last might us great old year off come since against go came right used take three ' +
  'river lantern garden harbour mountain window morning winter summer autumn spring coffee bridge ' +
  'market letter engine signal forest silver copper thunder meadow island castle village orchard ' +
  'library journey compass anchor feather candle mirror ladder pocket ribbon saddle shadow velvet ' +
  'whistle blanket kettle marble needle pepper quarry rocket tunnel valley wagon yellow zephyr ' +
  'database server request latency cache index query schema record cursor page search deploy ' +
  'release version branch commit review merge build test bench metric profile thread socket ' +
  'café naïve façade über crème résumé jalapeño piñata smörgåsbord Ærø Zürich São Paulo Kraków'
).split(' ');

export const FIRST_NAMES = (
  'Ada Alan Grace Linus Margaret Dennis Barbara Ken Frances Edsger Radia Donald Sophie Tim Hedy ' +
  'John Mary James Patricia Robert Jennifer Michael Linda David Elizabeth William Susan Richard ' +
  'José María Zoë Åsa Søren Łukasz Chloé Renée Jürgen Ольга Yuki Wei Priya Oluwaseun Mateo Aoife'
).split(' ');

export const LAST_NAMES = (
  'Lovelace Turing Hopper Torvalds Hamilton Ritchie Liskov Thompson Allen Dijkstra Perlman Knuth ' +
  'Wilson Berners-Lee Lamarr Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez ' +
  "Martinez O'Brien Nguyen Müller Dubois Rossi Kowalski Jensen Novák Tanaka Chen Okafor Silva Иванова"
).split(' ');

/** ASCII stand-ins for names in user names and e-mail addresses (e-mail must be ASCII). */
export function asciiName(name: string): string {
  const plain = name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z]/g, '')
    .toLowerCase();
  return plain || 'user';
}

export const GENRES = [
  'Fiction',
  'Fantasy',
  'Science Fiction',
  'Mystery',
  'Thriller',
  'Romance',
  'History',
  'Biography',
  'Poetry',
  'Travel',
  'Cooking',
  'Science',
  'Philosophy',
  'Children',
  '',
];

export const EMAIL_DOMAINS = ['example.com', 'example.org', 'example.net', 'mail.example'];
