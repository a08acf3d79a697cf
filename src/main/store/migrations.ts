/**
 * Schema migrations, applied in order and recorded in `schema_migrations`. Never edit a
 * migration that has shipped: add the next one.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'runs and requests',
    sql: `
      CREATE TABLE runs (
        id                TEXT PRIMARY KEY,
        kind              TEXT NOT NULL,
        status            TEXT NOT NULL CHECK (status IN ('running', 'completed', 'aborted', 'interrupted', 'failed')),
        status_reason     TEXT,
        started_at        TEXT NOT NULL,
        ended_at          TEXT,
        model_ref         TEXT,
        model_path        TEXT,
        model_size_bytes  INTEGER,
        model_sha256      TEXT,
        engine_json       TEXT,
        server_json       TEXT,
        manifest_json     TEXT NOT NULL DEFAULT '{}',
        summary_json      TEXT,
        -- The process writing the run; a run whose owner is gone was interrupted.
        owner_pid         INTEGER,
        owner_start_ticks INTEGER
      );
      CREATE INDEX runs_started_at ON runs (started_at);

      CREATE TABLE requests (
        run_id            TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        seq               INTEGER NOT NULL,
        warmup            INTEGER NOT NULL DEFAULT 0,
        t0_ms             REAL NOT NULL,
        headers_ms        REAL,
        ttft_ms           REAL,
        e2e_ms            REAL,
        tpot_ms           REAL,
        queue_ms          REAL,
        client_overhead_ms REAL,
        output_tokens     INTEGER,
        output_tokens_source TEXT,
        prompt_tokens     INTEGER,
        cached_tokens     INTEGER,
        finish_reason     TEXT,
        http_status       INTEGER,
        error_class       TEXT,
        error_message     TEXT,
        timings_json      TEXT,
        -- Float64Array of content-chunk arrival offsets from t0, in ms.
        chunk_offsets     BLOB,
        prompt_text       TEXT,
        output_text       TEXT,
        PRIMARY KEY (run_id, seq)
      ) WITHOUT ROWID;
    `,
  },
];
