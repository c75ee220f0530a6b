/**
 * `COPY … FROM STDIN` with pg, without pg-copy-streams (not installed here): a query object of
 * pg's Submittable interface (the one pg-copy-streams and pg-cursor use) that sends its data,
 * given at once as buffers, when the server asks for it (CopyInResponse), then CopyDone.
 */
import type pg from 'pg';

interface CopyConnection {
  query(text: string): void;
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
}

class CopyFrom {
  private rows = 0;
  private finished = false;
  constructor(
    private readonly text: string,
    private readonly chunks: Buffer[],
    private readonly done: (error: Error | undefined, rows: number) => void,
  ) {}
  submit(connection: CopyConnection): void {
    connection.query(this.text);
  }
  handleCopyInResponse(connection: CopyConnection): void {
    for (const c of this.chunks) connection.sendCopyFromChunk(c);
    connection.endCopyFrom();
  }
  handleCommandComplete(msg: { text: string }): void {
    this.rows = Number(/^COPY (\d+)/.exec(msg.text)?.[1] ?? NaN);
  }
  /** pg forgets the query on an error (its ReadyForQuery is not passed on): the answer is now */
  handleError(error: Error): void {
    this.finish(error);
  }
  handleReadyForQuery(): void {
    this.finish(undefined);
  }
  private finish(error: Error | undefined): void {
    if (this.finished) return;
    this.finished = true;
    this.done(error, this.rows);
  }
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyData(): void {}
}

/** Runs `sql` (a `COPY … FROM STDIN`) with `chunks` as its data; resolves with the rows copied. */
export function copyFrom(client: pg.Client, sql: string, chunks: Buffer[]): Promise<number> {
  return new Promise((resolve, reject) => {
    client.query(
      new CopyFrom(sql, chunks, (error, rows) => (error ? reject(error) : resolve(rows))) as unknown as pg.QueryConfig,
    );
  });
}

/** One field of COPY's text format: backslash, tab, newline and carriage return escaped. */
export function copyText(value: string): string {
  return /[\\\t\n\r]/.test(value)
    ? value.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r')
    : value;
}
