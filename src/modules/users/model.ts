import { t } from "elysia";
import { Timestamp, Uuid } from "../../http/common-model";
import { cursorQueryFields, updatedSinceQueryField } from "../../http/pagination";

export const Email = t.String({ format: "email", maxLength: 254, examples: ["owner@clinic.cl"] });
export const Password = t.String({ minLength: 10, maxLength: 256, description: "10–256 characters" });
export const RoleSchema = t.Union([t.Literal("owner"), t.Literal("vet"), t.Literal("staff")]);

export const UserModel = t.Object({
  id: Uuid,
  clinic_id: Uuid,
  email: t.String(),
  name: t.String(),
  role: RoleSchema,
  is_admin: t.Boolean({ description: "An install administrator: may act on the whole install (backups, invitations)" }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export type UserView = typeof UserModel.static;

export const StaffRole = t.Union([t.Literal("vet"), t.Literal("staff")]);

export const CreateUserBody = t.Object({
  email: Email,
  name: t.String({ minLength: 1, maxLength: 200 }),
  role: StaffRole,
  password: Password,
});

export const UpdateUserBody = t.Object(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    role: t.Optional(StaffRole),
    password: t.Optional(Password),
  },
  { minProperties: 1 },
);

export const UserListQuery = t.Object({ ...cursorQueryFields, ...updatedSinceQueryField });

export type CreateUserInput = typeof CreateUserBody.static;
export type UpdateUserInput = typeof UpdateUserBody.static;
