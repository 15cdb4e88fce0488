import { t } from "elysia";
import { Currency, Timestamp, Uuid } from "../../http/common-model";

export const Email = t.String({ format: "email", maxLength: 254, examples: ["owner@clinic.cl"] });
export const Password = t.String({ minLength: 10, maxLength: 256, description: "10–256 characters" });
export const RoleSchema = t.Union([t.Literal("owner"), t.Literal("vet"), t.Literal("staff")]);

export const UserModel = t.Object({
  id: Uuid,
  clinic_id: Uuid,
  email: t.String(),
  name: t.String(),
  role: RoleSchema,
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const ClinicModel = t.Object({
  id: Uuid,
  name: t.String(),
  legal_name: t.Union([t.String(), t.Null()], { description: "Razón social (SII issuer)" }),
  rut: t.Union([t.String(), t.Null()], { description: "The clinic's RUT, 12.345.678-5" }),
  address: t.Union([t.String(), t.Null()]),
  giro: t.Union([t.String(), t.Null()], { description: "Business activity (SII issuer)" }),
  timezone: t.String(),
  currency: t.String(),
  tax_rate_bps: t.Integer(),
  plan: t.String(),
  burst_per_minute: t.Union([t.Integer(), t.Null()]),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const RegisterBody = t.Object({
  email: Email,
  password: Password,
  name: t.String({ minLength: 1, maxLength: 200 }),
  clinic_name: t.String({ minLength: 1, maxLength: 200 }),
  timezone: t.Optional(t.String({ minLength: 1, maxLength: 64, examples: ["America/Santiago"] })),
  currency: t.Optional(Currency),
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

export type RegisterInput = typeof RegisterBody.static;
export type LoginInput = typeof LoginBody.static;
export type UserView = typeof UserModel.static;
export type ClinicView = typeof ClinicModel.static;

export const ChangePasswordBody = t.Object({
  current_password: t.String({ minLength: 1, maxLength: 256 }),
  new_password: Password,
});
