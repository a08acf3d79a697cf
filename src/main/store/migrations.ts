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
  {
    version: 2,
    name: 'server profiles and server sessions',
    sql: `
      CREATE TABLE server_profiles (
        name          TEXT PRIMARY KEY,
        profile_json  TEXT NOT NULL,
        updated_at    TEXT NOT NULL
      );

      -- One row per launched server: the orphan sweep reads it, runs reference it.
      CREATE TABLE server_sessions (
        id                  TEXT PRIMARY KEY,
        engine              TEXT NOT NULL,
        binary              TEXT NOT NULL,
        argv_json           TEXT NOT NULL,
        model_ref           TEXT NOT NULL,
        model_path          TEXT NOT NULL,
        profile_json        TEXT NOT NULL,
        pid                 INTEGER,
        pid_start_ticks     INTEGER,
        port                INTEGER,
        owner_pid           INTEGER NOT NULL,
        owner_start_ticks   INTEGER,
        started_at          TEXT NOT NULL,
        ready_at            TEXT,
        ended_at            TEXT,
        final_state         TEXT,
        cold_start_json     TEXT,
        effective_config_json TEXT,
        fault_json          TEXT
      );
      CREATE INDEX server_sessions_open ON server_sessions (ended_at) WHERE ended_at IS NULL;
    `,
  },
  {
    version: 3,
    name: 'workloads, per-request outcomes and run manifests',
    sql: `
      CREATE TABLE workloads (
        revision      TEXT PRIMARY KEY,
        name          TEXT NOT NULL,
        source        TEXT NOT NULL,
        content_json  TEXT NOT NULL,
        created_at    TEXT NOT NULL
      );
      ALTER TABLE runs ADD COLUMN workload_name TEXT;
      ALTER TABLE runs ADD COLUMN workload_revision TEXT REFERENCES workloads (revision);
      ALTER TABLE runs ADD COLUMN environment_json TEXT;
      ALTER TABLE runs ADD COLUMN private INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE requests ADD COLUMN group_name TEXT;
      ALTER TABLE requests ADD COLUMN item_id TEXT;
      ALTER TABLE requests ADD COLUMN scheduled_ms REAL;
      ALTER TABLE requests ADD COLUMN end_ms REAL;
      ALTER TABLE requests ADD COLUMN accepted INTEGER;
      ALTER TABLE requests ADD COLUMN acceptance_json TEXT;
      ALTER TABLE requests ADD COLUMN prompt_sha256 TEXT;
      ALTER TABLE requests ADD COLUMN output_sha256 TEXT;
      ALTER TABLE requests ADD COLUMN prompt_chars INTEGER;
      ALTER TABLE requests ADD COLUMN output_chars INTEGER;
      CREATE INDEX runs_workload ON runs (workload_revision);
    `,
  },
  {
    version: 4,
    name: 'telemetry series',
    sql: `
      CREATE TABLE telemetry_series (
        run_id  TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        series  TEXT NOT NULL,
        unit    TEXT NOT NULL,
        -- Float64Array of interleaved (t_ms, value) pairs on the run's clock.
        points  BLOB NOT NULL,
        PRIMARY KEY (run_id, series)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 5,
    name: 'experiments',
    sql: `
      CREATE TABLE experiments (
        id            TEXT PRIMARY KEY,
        kind          TEXT NOT NULL,
        status        TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'interrupted')),
        created_at    TEXT NOT NULL,
        protocol_json TEXT NOT NULL,
        result_json   TEXT
      );
      CREATE TABLE experiment_runs (
        experiment_id TEXT NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
        run_id        TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        condition     TEXT NOT NULL,
        window        INTEGER NOT NULL,
        PRIMARY KEY (experiment_id, run_id)
      ) WITHOUT ROWID;
      CREATE TABLE decisions (
        id            TEXT PRIMARY KEY,
        experiment_id TEXT REFERENCES experiments (id) ON DELETE SET NULL,
        created_at    TEXT NOT NULL,
        decided_by    TEXT NOT NULL,
        record_json   TEXT NOT NULL
      );
    `,
  },
  {
    version: 6,
    name: 'model hash cache',
    sql: `
      CREATE TABLE model_hashes (
        path      TEXT PRIMARY KEY,
        size      INTEGER NOT NULL,
        mtime_ms  REAL NOT NULL,
        sha256    TEXT NOT NULL,
        hashed_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 7,
    name: 'reasoning apart from the answer, schedule latency',
    sql: `
      ALTER TABLE requests ADD COLUMN ttfr_ms REAL;
      ALTER TABLE requests ADD COLUMN ttfa_ms REAL;
      ALTER TABLE requests ADD COLUMN ttft_from_schedule_ms REAL;
      ALTER TABLE requests ADD COLUMN e2e_from_schedule_ms REAL;
      ALTER TABLE requests ADD COLUMN decode_tokens_per_s REAL;
      -- Float64Array of reasoning-chunk arrival offsets from t0, in ms (a subset of chunk_offsets).
      ALTER TABLE requests ADD COLUMN reasoning_chunk_offsets BLOB;
      ALTER TABLE requests ADD COLUMN reasoning_text TEXT;
      ALTER TABLE requests ADD COLUMN reasoning_sha256 TEXT;
      ALTER TABLE requests ADD COLUMN reasoning_chars INTEGER;
      -- Counted with the server's tokenizer after the run; the note says why when it could not be.
      ALTER TABLE requests ADD COLUMN reasoning_tokens INTEGER;
      ALTER TABLE requests ADD COLUMN reasoning_tokens_note TEXT;
    `,
  },
  {
    version: 8,
    name: 'per-database secrets',
    sql: `
      -- Keys that never leave this database: not exported, not shown. 'hash_key' keys the
      -- prompt and output hashes of private runs, so a short output cannot be found by
      -- hashing guesses. The value is created on first use.
      CREATE TABLE database_secrets (
        name  TEXT PRIMARY KEY,
        value BLOB NOT NULL
      );
    `,
  },
  {
    version: 9,
    name: 'conversation turns',
    sql: `
      -- A conversation's requests: which conversation of the run (its place in the send order) and which turn, from 1.
      ALTER TABLE requests ADD COLUMN conversation INTEGER;
      ALTER TABLE requests ADD COLUMN turn INTEGER;
    `,
  },
  {
    version: 10,
    name: 'prompt block hashes',
    sql: `
      -- JSON list of chained hashes, one per 512-token block of the prompt as the server tokenized it
      -- (keyed with the database's hash key in private runs): what a trace export needs, and no text.
      ALTER TABLE requests ADD COLUMN block_hashes TEXT;
    `,
  },
  {
    version: 11,
    name: 'speculative kind',
    sql: `
      -- The speculative-decoding experiment kind was called 'spec', which read as a request spec.
      UPDATE experiments
      SET kind = 'speculative',
          protocol_json = CASE WHEN json_valid(protocol_json) THEN json_set(protocol_json, '$.kind', 'speculative') ELSE protocol_json END,
          result_json = CASE WHEN json_valid(result_json) THEN json_set(result_json, '$.kind', 'speculative') ELSE result_json END
      WHERE kind = 'spec';
    `,
  },
  {
    version: 12,
    name: 'sorted latency columns',
    sql: `
      -- A finished run's successful measured latencies, each ascending, as Float64Array blobs:
      -- derived from its requests (store/latency-columns.ts), so Compare reads three blobs a run
      -- instead of every request. Written when a run finishes, or at the first read of an older run;
      -- any write to a run's requests drops them, whichever program makes it.
      CREATE TABLE IF NOT EXISTS run_latency_columns (
        run_id   TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
        requests INTEGER NOT NULL,
        ttft_ms  BLOB NOT NULL,
        tpot_ms  BLOB NOT NULL,
        e2e_ms   BLOB NOT NULL
      );
      CREATE TRIGGER IF NOT EXISTS requests_inserted_drop_latency_columns AFTER INSERT ON requests BEGIN
        DELETE FROM run_latency_columns WHERE run_id = NEW.run_id;
      END;
      CREATE TRIGGER IF NOT EXISTS requests_deleted_drop_latency_columns AFTER DELETE ON requests BEGIN
        DELETE FROM run_latency_columns WHERE run_id = OLD.run_id;
      END;
      CREATE TRIGGER IF NOT EXISTS requests_latency_changed_drop_latency_columns
        AFTER UPDATE OF run_id, ttft_ms, tpot_ms, e2e_ms, warmup, error_class ON requests BEGIN
        DELETE FROM run_latency_columns WHERE run_id IN (OLD.run_id, NEW.run_id);
      END;
    `,
  },
  {
    version: 13,
    name: 'function calls',
    sql: `
      -- The first chunk carrying a piece of a function call, and the last one of a request whose calls all parsed, from t0.
      ALTER TABLE requests ADD COLUMN ttfc_ms REAL;
      ALTER TABLE requests ADD COLUMN tool_call_ms REAL;
      -- For a request that offered tools: {calls, valid, argument_chars, argument_tokens, argument_tokens_note, text?}; text is
      -- the calls' names and arguments, kept only where the run keeps text.
      ALTER TABLE requests ADD COLUMN tool_calls_json TEXT;
    `,
  },
  {
    version: 14,
    name: 'answer text per chunk',
    sql: `
      -- Uint32Array: for each content chunk (chunk_offsets), the characters of answer text it added, so a
      -- stored answer replays at the pace it arrived (a race). Lengths only: the text is output_text.
      ALTER TABLE requests ADD COLUMN chunk_answer_chars BLOB;
    `,
  },
];
