import test from 'ava';
import { CsvError, parseCsv } from '../../api/csv.js';

test('csv: fields, records by LF or CRLF, a final line break or none', (t) => {
  t.deepEqual(parseCsv('a,b\n1,2\n'), [
    ['a', 'b'],
    ['1', '2'],
  ]);
  t.deepEqual(parseCsv('a,b\r\n1,2'), [
    ['a', 'b'],
    ['1', '2'],
  ]);
  t.deepEqual(parseCsv('a,,\n'), [['a', '', '']], 'empty fields, one at the end too');
});

test('csv: quoted fields hold commas, quotes, LF and CRLF', (t) => {
  t.deepEqual(parseCsv('"a,b","say ""hi""","x\ny","p\r\nq"\r\nz,""\r\n'), [
    ['a,b', 'say "hi"', 'x\ny', 'p\r\nq'],
    ['z', ''],
  ]);
  t.deepEqual(parseCsv('"",x'), [['', 'x']]);
});

test('csv: blank lines are skipped and a byte order mark is dropped', (t) => {
  t.deepEqual(parseCsv('\ufeffid\n\n1\r\n\r\n2\n'), [['id'], ['1'], ['2']]);
  t.deepEqual(parseCsv(''), []);
});

test('csv: malformed quoting names the line', (t) => {
  t.is(t.throws(() => parseCsv('a\n"open,b\nc'), { instanceOf: CsvError })?.line, 2);
  t.is(t.throws(() => parseCsv('a\nb"c'), { instanceOf: CsvError })?.line, 2);
  t.is(t.throws(() => parseCsv('"a"b'), { instanceOf: CsvError })?.line, 1);
  t.throws(() => parseCsv('"a"\rb'), { instanceOf: CsvError });
});
