import { t } from "elysia";
import { Nullable, NullableString, Uuid } from "../../http/common-model";
import { cursorQueryFields } from "../../http/pagination";
import { VisitFilterFields, VisitModel } from "../visits/model";

/** A visit on the board, with who the patient and tutor are (null when deleted). */
export const BoardVisit = t.Composite([
  VisitModel,
  t.Object({
    patient: Nullable(t.Object({ id: Uuid, name: t.String(), species: t.String() })),
    tutor: Nullable(t.Object({ id: Uuid, name: t.String(), phone: NullableString() })),
    needs_signed_note: t.Boolean({ description: "Completed, and no consultation note signed yet (drafts do not count)" }),
  }),
]);

export const BoardQuery = t.Object({ ...cursorQueryFields, ...VisitFilterFields });
export type BoardVisitView = typeof BoardVisit.static;
