import type { ServiceContext } from "../db/client";
import { AppError } from "../lib/errors";
import { register } from "../modules/auth/service";
import type { RegisterInput } from "../modules/auth/model";

/** The register rules (validation included) from the command line, without HTTP. */
export async function createOwner(ctx: ServiceContext, input: RegisterInput) {
  if (input.password.length < 10 || input.password.length > 256) throw new Error("the password must be 10–256 characters");
  if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(input.email)) throw new Error("the email is not valid");
  try {
    const session = await register(ctx, input);
    return { user: session.user, clinic: session.clinic };
  } catch (error) {
    if (error instanceof AppError) throw new Error(`${error.code}: ${error.message}`);
    throw error;
  }
}
