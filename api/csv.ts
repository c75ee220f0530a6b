/**
 * A small RFC 4180 reader for request bodies (POST /api/devices/import): fields separated by
 * commas, records by CRLF or LF, a field in double quotes may hold commas, line breaks and `""`
 * (one quote). A quote inside an unquoted field, text after a closing quote, or a quoted field
 * left open is malformed: the reader throws a CsvError naming the line, so a body is never half read.
 */
export class CsvError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(`line ${line}: ${message}`);
  }
}

/** Every record of `text` as its fields. A final line break ends the last record; blank lines are skipped. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let line = 1;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0; // a byte order mark is not part of the first field
  const n = text.length;
  // whether the record has anything yet (a blank line holds no field at all)
  let started = false;
  const endRecord = () => {
    if (started) records.push([...record, field]);
    record = [];
    field = '';
    started = false;
  };
  while (i < n) {
    const c = text[i];
    if (c === '"') {
      if (field !== '') throw new CsvError('a quote inside an unquoted field', line);
      const start = line;
      i++;
      for (;;) {
        if (i >= n) throw new CsvError('a quoted field is not closed', start);
        const q = text[i];
        if (q === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        if (q === '\n') line++;
        field += q;
        i++;
      }
      started = true;
      const next = text[i];
      if (i < n && next !== ',' && next !== '\n' && !(next === '\r' && text[i + 1] === '\n'))
        throw new CsvError('text after a closing quote', line);
      // the separator or line break after it is read by the cases below
      if (next === ',') {
        record.push(field);
        field = '';
        i++;
      }
      continue;
    }
    if (c === ',') {
      record.push(field);
      field = '';
      started = true;
      i++;
    } else if (c === '\n' || (c === '\r' && text[i + 1] === '\n')) {
      endRecord();
      i += c === '\r' ? 2 : 1;
      line++;
    } else {
      field += c;
      started = true;
      i++;
    }
  }
  endRecord();
  return records;
}
