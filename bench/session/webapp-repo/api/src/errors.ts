import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { ZodError } from "zod";
import { captureRequestError } from "./telemetry";

// Each code maps to an HTTP status and a message key the web app translates
// (web/src/locales/<lang>/errors.json).
export const errorCodes = {
  unauthenticated: { status: 401, message: "errors.unauthenticated" },
  forbidden: { status: 403, message: "errors.forbidden" },
  not_found: { status: 404, message: "errors.notFound" },
  task_not_found: { status: 404, message: "errors.taskNotFound" },
  project_not_found: { status: 404, message: "errors.projectNotFound" },
  conflict: { status: 409, message: "errors.conflict" },
  version_conflict: { status: 409, message: "errors.versionConflict" },
  validation: { status: 422, message: "errors.validation" },
  rate_limited: { status: 429, message: "errors.rateLimited" },
} as const;

export type ErrorCode = keyof typeof errorCodes;

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly fields?: Record<string, string>,
  ) {
    super(errorCodes[code].message);
    this.name = "AppError";
  }
}

export function errorHandler(err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  if (err instanceof AppError) {
    const { status, message } = errorCodes[err.code];
    return reply.status(status).send({ error: { code: err.code, message, fields: err.fields } });
  }
  if (err instanceof ZodError || (err as FastifyError).code === "FST_ERR_VALIDATION") {
    const fields: Record<string, string> = {};
    if (err instanceof ZodError) {
      for (const issue of err.issues) fields[issue.path.join(".")] = issue.message;
    }
    return reply
      .status(422)
      .send({ error: { code: "validation", message: errorCodes.validation.message, fields } });
  }
  if ((err as FastifyError).statusCode === 429) {
    return reply.status(429).send({ error: { code: "rate_limited", message: errorCodes.rate_limited.message } });
  }
  request.log.error({ err }, "unhandled error");
  captureRequestError(err, request.id);
  return reply.status(500).send({ error: { code: "internal", message: "errors.internal" } });
}
