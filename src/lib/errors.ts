/**
 * The one error type services throw. Each error code has one status and one
 * snake_case `error` name, so a service names only the code and the envelope follows.
 */
export const ERROR_CODES = {
  INVALID_JSON: { status: 400, error: "invalid_json" },
  INVALID_CURSOR: { status: 400, error: "invalid_cursor" },
  INVALID_IDEMPOTENCY_KEY: { status: 400, error: "invalid_idempotency_key" },
  INVALID_PAGINATION: { status: 400, error: "invalid_pagination" },
  SQL_GUARD_BLOCKED: { status: 400, error: "query_blocked" },
  QUERY_FAILED: { status: 400, error: "query_failed" },
  QUERY_TIMEOUT: { status: 400, error: "query_timeout" },
  AUTH_REQUIRED: { status: 401, error: "auth_required" },
  INVALID_TOKEN: { status: 401, error: "invalid_token" },
  TOKEN_EXPIRED: { status: 401, error: "token_expired" },
  INVALID_CREDENTIALS: { status: 401, error: "invalid_credentials" },
  REFRESH_TOKEN_REUSED: { status: 401, error: "refresh_token_reused" },
  INVALID_API_KEY: { status: 401, error: "invalid_api_key" },
  API_KEY_REVOKED: { status: 401, error: "api_key_revoked" },
  API_KEY_EXPIRED: { status: 401, error: "api_key_expired" },
  FORBIDDEN: { status: 403, error: "forbidden" },
  REGISTRATION_CLOSED: { status: 403, error: "registration_closed" },
  INSUFFICIENT_SCOPE: { status: 403, error: "insufficient_scope" },
  ORIGIN_NOT_ALLOWED: { status: 403, error: "origin_not_allowed" },
  NOT_FOUND: { status: 404, error: "not_found" },
  TOOL_NOT_FOUND: { status: 404, error: "tool_not_found" },
  METHOD_NOT_ALLOWED: { status: 405, error: "method_not_allowed" },
  CONFLICT: { status: 409, error: "conflict" },
  NO_FOLIOS: { status: 409, error: "no_folios" },
  EMAIL_TAKEN: { status: 409, error: "email_taken" },
  INVALID_STATE_TRANSITION: { status: 409, error: "invalid_state_transition" },
  SLOT_TAKEN: { status: 409, error: "slot_taken" },
  NOTE_SIGNED: { status: 409, error: "note_signed" },
  TAX_DOCUMENT_ISSUED: { status: 409, error: "tax_document_issued" },
  IDEMPOTENCY_KEY_CONFLICT: { status: 409, error: "idempotency_key_conflict" },
  IDEMPOTENCY_KEY_IN_PROGRESS: { status: 409, error: "idempotency_key_in_progress" },
  PAYLOAD_TOO_LARGE: { status: 413, error: "payload_too_large" },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, error: "unsupported_media_type" },
  VALIDATION_FAILED: { status: 422, error: "validation_failed" },
  AMOUNT_EXCEEDS_BALANCE: { status: 422, error: "amount_exceeds_balance" },
  RATE_LIMIT_EXCEEDED: { status: 429, error: "rate_limit_exceeded" },
  BURST_LIMIT_EXCEEDED: { status: 429, error: "burst_limit_exceeded" },
  TOO_MANY_ATTEMPTS: { status: 429, error: "too_many_attempts" },
  INTERNAL_ERROR: { status: 500, error: "internal_error" },
  SERVICE_UNAVAILABLE: { status: 503, error: "service_unavailable" },
} as const satisfies Record<string, { status: number; error: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * What a 503 tells clients to wait. The service reconnects within a fraction of a second of the
 * database accepting connections again, so a client retrying after a second loses at most that.
 */
export const RETRY_UNAVAILABLE_AFTER_SECONDS = 1;

export interface FieldError {
  path: string;
  message: string;
}

export class AppError extends Error {
  readonly status: number;
  readonly error: string;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    /** Response headers this error needs (Retry-After, WWW-Authenticate…). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "AppError";
    this.status = ERROR_CODES[code].status;
    this.error = ERROR_CODES[code].error;
  }

  static notFound(what: string, id?: string): AppError {
    return new AppError("NOT_FOUND", id ? `${what} ${id} not found` : `${what} not found`);
  }

  /** The database cannot be reached: the client should retry after a few seconds. */
  static unavailable(): AppError {
    return new AppError("SERVICE_UNAVAILABLE", "The database is unavailable; retry shortly", undefined, { "retry-after": String(RETRY_UNAVAILABLE_AFTER_SECONDS) });
  }

  static validation(fields: FieldError[], message = "The request is not valid"): AppError {
    return new AppError("VALIDATION_FAILED", message, { fields });
  }
}

/**
 * The one error envelope: the body of every refusal. The API document's schema of it is
 * http/common-model's ErrorEnvelope, which the compiler holds to this type. (The schema does not
 * live here: lib/ sits below http/, and the console's bundle imports lib/ and must not take in
 * Elysia.)
 */
export interface ErrorBody {
  error: string;
  code: string;
  message: string;
  details?: Record<string, unknown>;
  request_id: string;
  retry_after?: number;
}

/** The envelope of `err`. */
export function envelope(err: AppError, requestId: string): ErrorBody {
  const body: ErrorBody = { error: err.error, code: err.code, message: err.message, request_id: requestId };
  if (err.details) body.details = err.details;
  // The burst refusal carries retry_after at the top level too (as the MCP limits require).
  if (err.code === "BURST_LIMIT_EXCEEDED" && typeof err.details?.retry_after === "number") {
    body.retry_after = err.details.retry_after;
  }
  return body;
}
