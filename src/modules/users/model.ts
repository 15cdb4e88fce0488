import { t } from "elysia";
import { Email, Password, UserModel } from "../auth/model";
import { cursorQueryFields } from "../../http/pagination";

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

export const UserListQuery = t.Object({ ...cursorQueryFields });

export { UserModel };
export type CreateUserInput = typeof CreateUserBody.static;
export type UpdateUserInput = typeof UpdateUserBody.static;
