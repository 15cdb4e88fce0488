import { t } from "elysia";
import { Currency } from "../../http/common-model";
import { ClinicModel } from "../clinic/model";
import { Email, Password, UserModel } from "../users/model";

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

export const ChangePasswordBody = t.Object({
  current_password: t.String({ minLength: 1, maxLength: 256 }),
  new_password: Password,
});

export type SessionView = typeof SessionModel.static;
export type MeView = typeof MeModel.static;
