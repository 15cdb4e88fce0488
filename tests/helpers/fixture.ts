import { afterAll, beforeAll } from "bun:test";
import type { Config } from "../../src/config";
import { createTestApp, type TestApp } from "./app";
import { addMember, registerClinic, type ClinicSession } from "./clinic";

export interface ClinicFixture {
  t: TestApp;
  /** The owner of the clinic under test. */
  owner: ClinicSession;
  /** Another clinic's owner, for isolation checks (when `otherClinic`). */
  other: ClinicSession;
  /** Members of the owner's clinic, by role (when asked for). */
  vet: ClinicSession;
  staff: ClinicSession;
}

export interface ClinicFixtureOptions {
  /** Extra registration fields for the owner's clinic (`timezone`, …). */
  clinic?: Record<string, unknown>;
  otherClinic?: boolean;
  members?: ("vet" | "staff")[];
  config?: Partial<Config>;
}

/**
 * The usual opening of a test file: an app over a fresh database, an owner's clinic (and, when
 * asked, another clinic and members), closed after the file. `assign` hands them to the file's
 * own variables once they exist:
 *
 *     let t: TestApp;
 *     let owner: ClinicSession;
 *     useClinicApp((made) => ({ t, owner } = made));
 */
export function useClinicApp(assign: (made: ClinicFixture) => void, options: ClinicFixtureOptions = {}): void {
  let app: TestApp | undefined;
  beforeAll(async () => {
    app = await createTestApp(options.config ? { config: options.config } : {});
    const owner = await registerClinic(app, options.clinic);
    const made = { t: app, owner } as ClinicFixture;
    if (options.otherClinic) made.other = await registerClinic(app);
    for (const role of options.members ?? []) made[role] = await addMember(app, owner, role);
    assign(made);
  });
  afterAll(() => app?.close());
}
