import type { ApiErrorBody, ErrorCode } from "../generated";

// A record over ErrorCode, so a code added to the contract fails to compile until it is listed.
const ERROR_CODE_SET: Record<ErrorCode, true> = {
  bad_request: true,
  unauthorized: true,
  not_found: true,
  conflict: true,
  memory_off: true,
  forbidden: true,
  unavailable: true,
  internal: true,
};
const ERROR_CODES = Object.keys(ERROR_CODE_SET) as readonly ErrorCode[];

/** An error reported by the Cairn service (or by the transport on its behalf). */
export class ApiError extends Error {
  readonly code: ErrorCode;
  /** HTTP status when the error came over HTTP; undefined for Tauri and network failures. */
  readonly status: number | undefined;
  /** True when the service could not be reached at all (no response). */
  readonly unreachable: boolean;

  constructor(
    code: ErrorCode,
    message: string,
    options: { status?: number; unreachable?: boolean; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ApiError";
    this.code = code;
    this.status = options.status;
    this.unreachable = options.unreachable ?? false;
  }
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && (ERROR_CODES as readonly string[]).includes(value);
}

/** Whether `value` has the `{code, message}` shape the service uses for errors. */
export function isApiErrorBody(value: unknown): value is ApiErrorBody {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return isErrorCode(v.code) && typeof v.message === "string";
}

/** The code to assume when an HTTP error response has no usable `{code, message}` body. */
export function codeForHttpStatus(status: number): ErrorCode {
  switch (status) {
    case 400:
    case 422:
      return "bad_request";
    case 401:
    case 403:
      return "unauthorized";
    case 404:
      return "not_found";
    case 409:
      return "conflict";
    case 502:
    case 503:
    case 504:
      return "unavailable";
    default:
      return "internal";
  }
}

/** Turns anything thrown by a backend call into an ApiError (non-ApiErrors become "internal"). */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (isApiErrorBody(err)) return new ApiError(err.code, err.message);
  const message = err instanceof Error ? err.message : typeof err === "string" ? err : String(err);
  return new ApiError("internal", message, { cause: err });
}

/** A one-line, user-facing description of an error. */
export function describeError(err: unknown): string {
  const e = toApiError(err);
  return e.message || e.code;
}
