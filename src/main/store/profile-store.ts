import type { ServerProfile } from '../../shared/contract/server';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import type { Db } from './database';

/** What a profile is when a field is missing, and what makes one valid: the engine's rules, not the store's. */
export interface ProfileRules {
  defaults(name?: string): ServerProfile;
  /** Throws an AppError naming each invalid field. */
  validate(profile: ServerProfile): void;
}

/** Named profiles in SQLite. The built-in `default` profile always exists and cannot be removed. */
export class ProfileStore {
  constructor(
    private readonly db: Db,
    private readonly rules: ProfileRules,
  ) {}

  list(): ServerProfile[] {
    const rows = this.db.prepare('SELECT profile_json FROM server_profiles ORDER BY name').all() as { profile_json: string }[];
    const stored = rows.map((row) => ({ ...this.rules.defaults(), ...(JSON.parse(row.profile_json) as ServerProfile) }));
    return stored.some((profile) => profile.name === 'default') ? stored : [this.rules.defaults(), ...stored];
  }

  get(name: string): ServerProfile {
    const row = this.db.prepare('SELECT profile_json FROM server_profiles WHERE name = ?').get(name) as
      { profile_json: string } | undefined;
    if (row) return { ...this.rules.defaults(name), ...(JSON.parse(row.profile_json) as ServerProfile) };
    if (name === 'default') return this.rules.defaults();
    throw new AppError(
      ErrorCode.NotFound,
      `No server profile named "${name}". Saved profiles: ${this.list()
        .map((profile) => profile.name)
        .join(', ')}`,
    );
  }

  save(profile: ServerProfile): void {
    this.rules.validate(profile);
    this.db
      .prepare(
        'INSERT INTO server_profiles (name, profile_json, updated_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET profile_json = excluded.profile_json, updated_at = excluded.updated_at',
      )
      .run(profile.name, JSON.stringify(profile), new Date().toISOString());
  }

  delete(name: string): boolean {
    if (name === 'default') throw new AppError(ErrorCode.InvalidInput, 'The default profile cannot be deleted');
    return this.db.prepare('DELETE FROM server_profiles WHERE name = ?').run(name).changes > 0;
  }
}
