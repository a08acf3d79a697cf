import fs from 'node:fs';
import { ByteWriter, ParquetWriter, type SchemaElement } from 'hyparquet-writer';
import { PRIVATE_FILE_MODE } from '../core/private-files';

/**
 * A Parquet column's type as readers see it: text, text holding JSON (named `*_json`), a
 * double, a whole number, a flag, or an instant (UTC, to the millisecond).
 */
export type ParquetType = 'string' | 'double' | 'int32' | 'int64' | 'boolean' | 'timestamp';

export interface ParquetColumn<Row> {
  name: string;
  type: ParquetType;
  /** Null for a missing value; a timestamp is given as ISO 8601 text. */
  value(row: Row): string | number | boolean | null;
}

type Cell = string | number | bigint | boolean | Date | null;

function schemaElement(name: string, type: ParquetType): SchemaElement {
  const optional = { name, repetition_type: 'OPTIONAL' as const };
  switch (type) {
    case 'string':
      return { ...optional, type: 'BYTE_ARRAY', converted_type: 'UTF8' };
    case 'double':
      return { ...optional, type: 'DOUBLE' };
    case 'int32':
      return { ...optional, type: 'INT32' };
    case 'int64':
      return { ...optional, type: 'INT64' };
    case 'boolean':
      return { ...optional, type: 'BOOLEAN' };
    case 'timestamp':
      return { ...optional, type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' } };
  }
}

/**
 * A stored value as its column's type. Stored JSON comes from many versions and from imports,
 * so a value of another type (a count written as text, a time that does not parse) becomes a
 * missing value rather than a failed export; a NaN becomes one too, never a number nobody measured.
 */
function cell(type: ParquetType, value: string | number | boolean | null): Cell {
  const finite = typeof value === 'number' && Number.isFinite(value) ? value : null;
  switch (type) {
    case 'string':
      return value === null ? null : String(value);
    case 'double':
      return finite;
    case 'int32':
      return finite === null ? null : Math.trunc(finite);
    case 'int64':
      return finite === null ? null : BigInt(Math.trunc(finite));
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'timestamp': {
      const instant = typeof value === 'string' ? new Date(value) : null;
      return instant && !Number.isNaN(instant.getTime()) ? instant : null;
    }
  }
}

/** Bytes the encoder produced, written to the file between row groups, so a table of any size never sits whole in memory. */
class DrainingWriter extends ByteWriter {
  private pending: Promise<void> = Promise.resolve();

  constructor(private readonly handle: fs.promises.FileHandle) {
    super(1 << 20);
  }

  flush(): Promise<void> {
    const bytes = new Uint8Array(this.buffer, 0, this.index).slice();
    this.index = 0;
    this.pending = this.pending.then(async () => {
      await this.handle.write(bytes);
    });
    return this.pending;
  }

  override finish(): Promise<void> {
    return this.flush();
  }
}

/**
 * One Parquet file written a batch of rows at a time: each batch becomes row groups. It is
 * written under a temporary name and only given its own (publish) once the caller has every
 * file of the export whole, so an interrupted export leaves no file a reader would take for complete.
 */
export class ParquetTableFile<Row> {
  private rows = 0;

  private constructor(
    private readonly file: string,
    private readonly partial: string,
    private readonly handle: fs.promises.FileHandle,
    private readonly columns: readonly ParquetColumn<Row>[],
    private readonly writer: ParquetWriter,
  ) {}

  static async create<Row>(
    file: string,
    columns: readonly ParquetColumn<Row>[],
    metadata: Record<string, string>,
  ): Promise<ParquetTableFile<Row>> {
    const partial = `${file}.partial`;
    // A leftover of that name (a file, or a link planted to send the bytes elsewhere) is removed, never written through.
    await fs.promises.rm(partial, { force: true });
    // Owner-only, as every export: the requests table carries prompts and answers.
    const handle = await fs.promises.open(partial, 'wx', PRIVATE_FILE_MODE);
    const writer = new ParquetWriter({
      writer: new DrainingWriter(handle),
      schema: [{ name: 'root', num_children: columns.length }, ...columns.map((column) => schemaElement(column.name, column.type))],
      kvMetadata: Object.entries(metadata).map(([key, value]) => ({ key, value })),
      createdBy: 'inferlab',
    });
    return new ParquetTableFile(file, partial, handle, columns, writer);
  }

  async append(rows: readonly Row[]): Promise<void> {
    if (rows.length === 0) return;
    const columnData = this.columns.map((column) => ({
      name: column.name,
      data: rows.map((row) => cell(column.type, column.value(row))),
    }));
    await this.writer.write({ columnData, rowGroupSize: 100_000 });
    this.rows += rows.length;
  }

  /** Writes the footer; returns the rows written. */
  async close(): Promise<number> {
    try {
      await this.writer.finish();
    } finally {
      await this.handle.close();
    }
    return this.rows;
  }

  /** Gives the closed file its name, replacing an older file of that name. */
  async publish(): Promise<void> {
    await fs.promises.rename(this.partial, this.file);
  }

  /** Drops a file that will not be published. */
  async discard(): Promise<void> {
    await this.handle.close().catch(() => {});
    await fs.promises.rm(this.partial, { force: true }).catch(() => {});
  }
}
