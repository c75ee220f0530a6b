import test from 'ava';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { parse } from 'csv-parse/sync';
import { csvField, escapeXml } from '../../../core/export/export.text.js';

/** Text, and what an XML parser reads back: characters XML 1.0 cannot carry (§2.2) are left out. */
const CASES: [string, string][] = [
  ['plain', 'plain'],
  ['<a href="x">&amp;</a>', '<a href="x">&amp;</a>'],
  ["it's", "it's"],
  ['bell\u0007 nul\u0000 esc\u001b tab\t lf\n', 'bell nul esc tab\t lf\n'],
  ['lone \uD800high, lone \uDC00low, pair \uD83D\uDE9A', 'lone high, lone low, pair \uD83D\uDE9A'],
  ['\uFFFE\uFFFFend', 'end'],
  [']]> cdata end', ']]> cdata end'],
];

test('export.text: escaped text reads back through an XML parser, in elements and attributes', (t) => {
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@',
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: false,
  });
  for (const [text, expected] of CASES) {
    const doc = `<r a="${escapeXml(text)}">${escapeXml(text)}</r>`;
    t.true(XMLValidator.validate(doc) === true, JSON.stringify(text));
    const r = parser.parse(doc).r;
    t.is(r['#text'], expected, JSON.stringify(text));
    // attribute values: a parser may turn tab and line feed into spaces (XML §3.3.3)
    t.is(String(r['@a']).replace(/[\t\n]/g, ' '), expected.replace(/[\t\n]/g, ' '), JSON.stringify(text));
  }
});

test('export.text: CSV fields survive a real CSV parser (RFC 4180 quoting)', (t) => {
  const fields = ['plain', 'a,b', 'say "hi"', 'two\r\nlines', 'lf\nonly', '', ' spaced '];
  const line = `${fields.map(csvField).join(',')}\r\n`;
  t.deepEqual(parse(line), [fields]);
  t.is(csvField('plain'), 'plain', 'quoted only where needed');
  t.is(csvField('say "hi"'), '"say ""hi"""');
});
