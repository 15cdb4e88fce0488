import { t } from "elysia";
import { Nullable, NullableString, Timestamp, Uuid } from "../../http/common-model";
import { CONSENT_CHANNELS, CONSENT_PURPOSES, CONSENT_SOURCES } from "../../db/schema";

const literals = <T extends string>(values: readonly T[]) => t.Union(values.map((value) => t.Literal(value)));

export const ConsentChannel = literals(CONSENT_CHANNELS);
export const ConsentPurpose = literals(CONSENT_PURPOSES);

export const RecordConsentBody = t.Object({
  channel: ConsentChannel,
  purpose: ConsentPurpose,
  granted: t.Boolean({ description: "true: the tutor agrees; false: the tutor withdraws (or refuses)" }),
  source: t.Optional(literals(CONSENT_SOURCES.filter((source) => source !== "reply" && source !== "link"))),
  evidence: t.Optional(t.String({ minLength: 1, maxLength: 1000, description: "How it was given, in words: who said what, where", examples: ["Dijo que sí en el mesón, 2026-11-20"] })),
});
export type RecordConsentInput = typeof RecordConsentBody.static;

export const ConsentRecordModel = t.Object({
  id: Uuid,
  tutor_id: Uuid,
  channel: t.String(),
  purpose: t.String(),
  granted: t.Boolean(),
  source: t.String(),
  evidence: NullableString(),
  recorded_at: Timestamp,
  recorded_by: Nullable(Uuid),
});

export const ConsentStateModel = t.Object({
  channel: t.String(),
  purpose: t.String(),
  granted: t.Boolean({ description: "What the latest record says; false when there is none" }),
  recorded_at: Nullable(Timestamp),
  source: NullableString(),
});

export const ConsentsModel = t.Object({
  current: t.Array(ConsentStateModel, { description: "Every channel and purpose: the latest record decides" }),
  history: t.Array(ConsentRecordModel, { description: "Every record, oldest first; never changed" }),
});
