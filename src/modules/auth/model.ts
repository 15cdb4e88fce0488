import { t } from "elysia";
import { Currency, Nullable, NullableString, NullableTimestamp, Timestamp, Uuid } from "../../http/common-model";
import { ClinicModel } from "../clinic/model";
import { Email, Password, UserModel } from "../users/model";

const NewClinicFields = {
  email: Email,
  password: Password,
  name: t.String({ minLength: 1, maxLength: 200 }),
  clinic_name: t.String({ minLength: 1, maxLength: 200 }),
  timezone: t.Optional(t.String({ minLength: 1, maxLength: 64, examples: ["America/Santiago"] })),
  currency: t.Optional(Currency),
};

export const RegisterBody = t.Object({
  ...NewClinicFields,
  invitation: t.Optional(t.String({ minLength: 1, maxLength: 200, description: "The token of an invitation link (required when REGISTRATION=invite); used once" })),
});

/** The first run's form: the clinic and its owner, who is also the install's first administrator. */
export const SetupBody = t.Object({
  ...NewClinicFields,
  token: t.String({ minLength: 1, maxLength: 200, description: "The token of the setup link the server printed at start" }),
});

export const SetupStateModel = t.Object({
  needed: t.Boolean({ description: "true while the install has no user: the setup link printed at start creates the first" }),
  registration: t.Union([t.Literal("closed"), t.Literal("open"), t.Literal("invite")], { description: "The server's REGISTRATION policy" }),
});

export const InvitationModel = t.Object({
  id: Uuid,
  note: NullableString(),
  created_by: Uuid,
  expires_at: Timestamp,
  used_at: NullableTimestamp,
  used_by: Nullable(Uuid),
  created_at: Timestamp,
});

export const CreatedInvitationModel = t.Composite([InvitationModel, t.Object({ url: t.String({ description: "The link to send: opens the console's registration page; shown once" }), token: t.String() })]);

export const CreateInvitationBody = t.Object({ note: t.Optional(t.String({ maxLength: 200, description: "Who it is for (shown to administrators only)" })) });

export const InstallModel = t.Object({
  registration: t.Union([t.Literal("closed"), t.Literal("open"), t.Literal("invite")]),
  cookie_secure: t.Union([t.Literal("auto"), t.Boolean()]),
  public_url: t.Union([t.String(), t.Null()]),
  database: t.String({ description: "embedded or postgres" }),
  users: t.Integer(),
  clinics: t.Integer(),
  administrators: t.Array(t.Object({ id: Uuid, email: t.String(), name: t.String(), clinic_id: Uuid })),
});

export const LoginBody = t.Object({
  email: t.String({ minLength: 1, maxLength: 254 }),
  password: t.String({ minLength: 1, maxLength: 256 }),
});

export const SessionModel = t.Object({
  access_token: t.String(),
  token_type: t.Literal("Bearer"),
  expires_in: t.Integer(),
  user: UserModel,
  clinic: ClinicModel,
});

export const MeModel = t.Object({ user: UserModel, clinic: ClinicModel });

export type RegisterInput = Omit<typeof RegisterBody.static, "invitation">;
export type SetupInput = typeof SetupBody.static;
export type LoginInput = typeof LoginBody.static;

export const ChangePasswordBody = t.Object({
  current_password: t.String({ minLength: 1, maxLength: 256 }),
  new_password: Password,
});

export type SessionView = typeof SessionModel.static;
export type MeView = typeof MeModel.static;
